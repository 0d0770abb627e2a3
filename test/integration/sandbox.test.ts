// DockerSandbox against the real engine: hardening read back from inside, the workspace round trip, the
// patch, exec semantics (timeouts, process groups, output caps) and teardown.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandbox, newRunId } from "../../src/sandbox/docker-sandbox.js";
import { CHANNEL_DIR } from "../../src/sandbox/helper/channel.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { EngineError } from "../../src/sandbox/sandbox.js";
import { WorkspaceError } from "../../src/sandbox/copy/archive.js";
import { STREAM_BELOW_BYTES } from "../../src/sandbox/copy/copy-in.js";
import { applyToCopy, makeWorkspace } from "../support/workspace.js";

const docker = new Docker();
const text = (b: Buffer) => b.toString("utf8");

/** A run's containers and volumes still on the engine (the copier and the workspace volume included). */
async function containersOf(runId: string) {
  const filters = { label: [`${LABEL_RUN}=${runId}`] };
  const [containers, { Volumes: volumes }] = await Promise.all([
    docker.listContainers({ all: true, filters }),
    docker.listVolumes({ filters }),
  ]);
  return [...containers.map((c) => c.Names.join(",")), ...(volumes ?? []).map((v) => v.Name)];
}

describe("a hardened sandbox", () => {
  let sandbox: DockerSandbox;
  let workspace: string;
  const runId = newRunId();

  beforeAll(async () => {
    workspace = makeWorkspace(
      {
        "README.md": "# demo\n",
        "src/app.js": "console.log('hi');\n",
        "bin/run.sh": { content: "#!/bin/sh\necho run\n", mode: 0o755 },
        "link-to-app": { symlink: "src/app.js" },
        leak: { symlink: "/etc/hostname" },
        "with space.txt": "spaces\n",
        "ünïcode.txt": "unicode\n",
        "img.bin": Buffer.from([0, 1, 2, 255, 254, 0, 10]),
        ".gitignore": "ignored.log\n",
        "ignored.log": "not copied\n",
      },
      { git: true },
    );
    sandbox = await DockerSandbox.start({ runId, workspaceDir: workspace });
  });
  afterAll(async () => {
    await sandbox?.dispose();
    expect(await containersOf(runId)).toEqual([]);
  });

  it("runs as a non-root user with no capabilities and no-new-privileges", async () => {
    const res = await sandbox.exec({ script: "id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status" });
    const out = text(res.stdout);
    expect(out.split("\n")[0]).toBe("1000");
    expect(out).toMatch(/CapEff:\s+0000000000000000/);
    expect(out).toMatch(/NoNewPrivs:\s+1/);
    expect(sandbox.hardening.missing).toEqual([]);
    expect(sandbox.hardening.uid).toBe(1000);
  });

  it("talks to its exec helper over a local socket the container no longer sees", async () => {
    expect(sandbox.helperChannel).toBe("socket");
    // The socket is removed once the helper is connected: the directory the container sees is empty.
    const res = await sandbox.exec({ script: `ls -A ${CHANNEL_DIR}; touch ${CHANNEL_DIR}/x` });
    expect(text(res.stdout)).toBe("");
    expect(text(res.stderr)).toMatch(/Read-only file system/);
  });

  it("has a read-only root and a writable /workspace and /tmp", async () => {
    const res = await sandbox.exec({
      script: "touch /usr/x 2>&1; echo rc=$?; touch /workspace/.w /tmp/w && echo ok; rm /workspace/.w",
    });
    expect(text(res.stdout)).toMatch(/Read-only file system[\s\S]*rc=1/);
    expect(text(res.stdout)).toContain("ok");
  });

  it("has no network and no docker socket", async () => {
    const res = await sandbox.exec({
      script:
        "cat /sys/class/net/*/operstate 2>/dev/null | wc -l; ls /sys/class/net; (exec 3<>/dev/tcp/1.1.1.1/80) 2>&1 | head -1; test -e /var/run/docker.sock; echo sock=$?",
      timeoutMs: 10_000,
    });
    expect(text(res.stdout)).toMatch(/^lo$/m);
    expect(text(res.stdout)).not.toMatch(/eth0/);
    expect(text(res.stdout)).toMatch(/Network is unreachable|Connection refused|Cannot assign/);
    expect(text(res.stdout)).toContain("sock=1");
  });

  it("blocks privilege tricks that the default seccomp profile forbids", async () => {
    const res = await sandbox.exec({
      script: "unshare -U true 2>&1; echo u=$?; mknod /tmp/dev c 1 3 2>&1; echo m=$?",
    });
    expect(text(res.stdout)).toMatch(/u=[1-9]/);
    expect(text(res.stdout)).toMatch(/m=[1-9]/);
  });

  it("keeps the host environment out of the container", async () => {
    const res = await sandbox.exec({ script: "env; cat /proc/1/environ | tr '\\0' '\\n'" });
    const out = text(res.stdout);
    expect(out).not.toMatch(/ANTHROPIC|GITHUB_TOKEN|ACTIONS_/);
    expect(out).toContain("LANG=C.UTF-8");
  });

  it("copies the working tree with .git, modes and symlinks, without ignored files", async () => {
    const res = await sandbox.exec({
      script:
        "ls -A; stat -c '%a %U' bin/run.sh; readlink link-to-app leak; git log --oneline | wc -l; cat 'with space.txt' ünïcode.txt",
    });
    const out = text(res.stdout);
    expect(out).toContain(".git");
    expect(out).not.toContain("ignored.log");
    expect(out).toContain("755 agent");
    expect(out).toContain("src/app.js\n/etc/hostname");
    expect(out).toContain("spaces\nunicode");
    expect(sandbox.copy.isGitRepo).toBe(true);
  });

  it("refuses paths that resolve outside the workspace, through symlinks too", async () => {
    await expect(sandbox.readFile("/workspace/leak")).rejects.toMatchObject({ code: "EOUTSIDE" });
    await expect(sandbox.readFile("/etc/passwd")).rejects.toMatchObject({ code: "EOUTSIDE" });
    await expect(sandbox.readFile("/workspace/../workspace2/x")).rejects.toMatchObject({ code: "EOUTSIDE" });
    await expect(sandbox.writeFile("/workspace/../tmp/x", "x")).rejects.toMatchObject({ code: "EOUTSIDE" });
    const linked = await sandbox.readFile("/workspace/link-to-app");
    expect(text(linked!.data)).toContain("console.log");
    expect(await sandbox.readFile("/workspace/missing.txt")).toBeNull();
  });

  it("reads a file whole in one request up to maxSize, and gives only its stat above it", async () => {
    const whole = await sandbox.readFile("/workspace/link-to-app", { maxSize: 1 << 20 });
    expect(whole!.data.length).toBe(whole!.stat.size);
    expect(whole!.stat.realPath).not.toBe("/workspace/link-to-app");
    const over = await sandbox.readFile("/workspace/link-to-app", { maxSize: whole!.stat.size - 1 });
    expect(over!.data.length).toBe(0);
    expect(over!.stat).toMatchObject({
      type: "file",
      size: whole!.stat.size,
      realPath: whole!.stat.realPath,
    });
  });

  it("returns non-zero exits as results, with stdout and stderr apart", async () => {
    const res = await sandbox.exec({ script: "echo out; echo err >&2; exit 7" });
    expect(res.exitCode).toBe(7);
    expect(text(res.stdout)).toBe("out\n");
    expect(text(res.stderr)).toBe("err\n");
  });

  it("reports the working directory a script ended in", async () => {
    const res = await sandbox.exec({ script: "mkdir -p d/e && cd d/e" });
    expect(res.cwd).toBe("/workspace/d/e");
    await sandbox.exec({ script: "rm -r d" });
  });

  it("kills the whole process group on timeout and leaves nothing behind", async () => {
    const res = await sandbox.exec({
      script: "trap '' TERM; (sleep 300; echo marker-child) & sleep 301; echo never",
      timeoutMs: 500,
    });
    expect(res.timedOut).toBe(true);
    const ps = await sandbox.exec({ script: "ps -eo args | grep -c '[s]leep 30'" });
    expect(text(ps.stdout).trim()).toBe("0");
  });

  it("returns promptly when a background child keeps the output pipe, and kills what the call left", async () => {
    // The child outlives the exec's timeout: a call that waited for its pipe would come back timed out.
    const res = await sandbox.exec({ script: "sleep 3000 & echo started", timeoutMs: 20_000 });
    expect(res.timedOut).toBe(false);
    expect(text(res.stdout)).toBe("started\n");
    expect(res.pipesHeld).toBe(true);
    const ps = await sandbox.exec({ script: "ps -eo args | grep -c '[s]leep 3000'" });
    expect(text(ps.stdout).trim()).toBe("0");
  });

  it("caps huge output, keeping head and tail, and kills a command far over the cap", async () => {
    const res = await sandbox.exec({ script: "seq 1 2000000", maxOutputBytes: 1_000_000 });
    expect(res.stdout.length).toBeLessThanOrEqual(1_000_000);
    expect(res.stdoutOmitted).toBeGreaterThan(0);
    expect(text(res.stdout).startsWith("1\n2\n")).toBe(true);
    expect(text(res.stdout).endsWith("2000000\n")).toBe(true);
    const flood = await sandbox.exec({ script: "yes", maxOutputBytes: 10_000, timeoutMs: 30_000 });
    expect(flood.outputKilled).toBe(true);
    expect(flood.timedOut).toBe(false);
  });

  it("holds the pids limit against a fork bomb and keeps working", async () => {
    const res = await sandbox.exec({ script: "bomb() { bomb | bomb & }; bomb; sleep 2", timeoutMs: 5_000 });
    expect(res.timedOut || res.exitCode !== 0 || text(res.stderr).includes("fork")).toBe(true);
    const after = await sandbox.exec({ script: "echo alive" });
    expect(text(after.stdout)).toBe("alive\n");
  });

  it("gives stdin as /dev/null so that a command waiting for input ends", async () => {
    const res = await sandbox.exec({ script: "cat; read x; echo done", timeoutMs: 5_000 });
    expect(res.timedOut).toBe(false);
    expect(text(res.stdout)).toBe("done\n");
  });

  it("produces a patch (new, deleted, binary, mode, symlink) that applies to a pristine copy", async () => {
    await sandbox.exec({
      script:
        "echo changed >> README.md && rm 'with space.txt' && printf '\\x00\\xff\\x10' > new.bin && chmod +x src/app.js " +
        "&& ln -s README.md readme-link && mkdir -p 'new dir' && echo n > 'new dir/file'",
    });
    const exported = await sandbox.exportPatch();
    expect(exported.files.map((f) => f.path).sort()).toEqual(
      ["README.md", "new dir/file", "new.bin", "readme-link", "src/app.js", "with space.txt"].sort(),
    );
    const copy = applyToCopy(workspace, exported.patch);
    expect(fs.readFileSync(path.join(copy, "README.md"), "utf8")).toBe("# demo\nchanged\n");
    expect(fs.existsSync(path.join(copy, "with space.txt"))).toBe(false);
    expect([...fs.readFileSync(path.join(copy, "new.bin"))]).toEqual([0, 0xff, 0x10]);
    expect(fs.statSync(path.join(copy, "src/app.js")).mode & 0o111).not.toBe(0);
    expect(fs.readlinkSync(path.join(copy, "readme-link"))).toBe("README.md");
    // The host's checkout was never touched.
    expect(fs.readFileSync(path.join(workspace, "README.md"), "utf8")).toBe("# demo\n");
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: workspace, encoding: "utf8" })).toBe("");
  });

  it("does not let the agent hide changes by editing git's files", async () => {
    await sandbox.exec({
      script:
        "echo hidden > src/hidden.js; git -C /workspace config diff.external /bin/true; " +
        "echo '* -diff' > .gitattributes; echo 'src/hidden.js' >> .gitignore; " +
        "rm -rf /tmp/.agent-ci/baseline.index; printf '[core]\\n\\tbare = true\\n' > /tmp/.agent-ci/baseline.git/config",
    });
    const exported = await sandbox.exportPatch();
    const files = exported.files.map((f) => f.path);
    expect(files).toContain(".gitattributes");
    expect(files).toContain(".gitignore");
    expect(text(exported.patch)).toContain("+changed");
  });
});

describe("sandbox lifecycle and bad input", () => {
  it("fails before anything starts when no engine answers, saying what to do", async () => {
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = "unix:///nonexistent/docker.sock";
    try {
      const error = await DockerSandbox.start({
        runId: newRunId(),
        workspaceDir: makeWorkspace({ a: "a" }),
      }).catch((e) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect(String(error.message)).toMatch(/no Docker engine answers.*DOCKER_HOST/);
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
  });

  it("rejects a workspace that does not exist or is not a directory", async () => {
    await expect(
      DockerSandbox.start({ runId: newRunId(), workspaceDir: "/nonexistent/ws" }),
    ).rejects.toBeInstanceOf(WorkspaceError);
    const file = path.join(makeWorkspace({ f: "x" }), "f");
    await expect(DockerSandbox.start({ runId: newRunId(), workspaceDir: file })).rejects.toThrow(
      /not a directory/,
    );
  });

  it("fails clearly, leaving no container, when the workspace is over the copy limit", async () => {
    const runId = newRunId();
    const ws = makeWorkspace(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}.txt`, "x\n"])));
    await expect(DockerSandbox.start({ runId, workspaceDir: ws, maxCopyFiles: 10 })).rejects.toThrow(
      /over the copy limit/,
    );
    expect(await containersOf(runId)).toEqual([]);
  });

  it("fails clearly when the workspace does not fit in the sandbox (disk full while copying)", async () => {
    const runId = newRunId();
    const ws = makeWorkspace({ "big.bin": Buffer.alloc(3 * 1024 * 1024, 7) });
    await expect(
      DockerSandbox.start({ runId, workspaceDir: ws, workspaceSizeBytes: 1024 * 1024 }),
    ).rejects.toThrow(/workspace is full/);
    expect(await containersOf(runId)).toEqual([]);
  });

  it("copies special names and skips what cannot be copied, listing it", async () => {
    const ws = makeWorkspace({
      "a\nb.txt": "newline\n",
      loop1: { symlink: "loop2" },
      loop2: { symlink: "loop1" },
    });
    execFileSync("mkfifo", [path.join(ws, "fifo")]);
    fs.writeFileSync(Buffer.from(path.join(ws, "latin-\xe9.txt"), "latin1"), "latin1 name\n");
    await using sandbox = await DockerSandbox.start({ runId: newRunId(), workspaceDir: ws });
    const ls = await sandbox.exec({ argv: ["ls", "-A", "/workspace"] });
    expect(text(ls.stdout)).toContain("loop1");
    expect(sandbox.copy.skipped.map((s) => s.reason).join("\n")).toMatch(/not a regular file/);
    const read = await sandbox.readFile("/workspace/a\nb.txt");
    expect(text(read!.data)).toBe("newline\n");
    await expect(sandbox.readFile("/workspace/loop1")).rejects.toMatchObject({ code: "ELOOP" });
  });

  it("keeps a repository's credentials out of the container", async () => {
    const ws = makeWorkspace({ "a.txt": "a\n" }, { git: true });
    execFileSync("git", ["config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0"], {
      cwd: ws,
    });
    execFileSync("git", ["remote", "add", "origin", "https://user:ghp_fakefakefake@example.com/r.git"], {
      cwd: ws,
    });
    await using sandbox = await DockerSandbox.start({ runId: newRunId(), workspaceDir: ws });
    const res = await sandbox.exec({ script: "git config --get-regexp extraheader; cat .git/config" });
    expect(text(res.stdout)).not.toContain("c2VjcmV0");
    expect(text(res.stdout)).not.toContain("ghp_fake");
    expect(text(res.stdout)).toContain("https://example.com/r.git");
  });

  // A local engine: a copier container reads a large workspace from a bind mount; a small one is streamed
  // as it is to a remote engine: the host's GNU tar (with zstd on top where the host has it) packs the copy;
  // tar-stream where the host has no GNU tar. All must deliver the same tree, credentials stripped and
  // specials skipped.
  it.each([
    { way: "copier", packer: undefined, big: STREAM_BELOW_BYTES },
    { way: "stream", packer: undefined, big: 3 << 20 },
    { way: "stream", packer: { gnuTar: true, zstd: true }, big: 3 << 20 },
    { way: "stream", packer: { gnuTar: true, zstd: false }, big: 3 << 20 },
    { way: "stream", packer: { gnuTar: false, zstd: false }, big: 3 << 20 },
  ])(
    "copies the same tree whichever way it goes in ($way, $packer, $big bytes)",
    async ({ way, packer, big }) => {
      const ws = makeWorkspace(
        {
          "bin/run.sh": { content: "#!/bin/sh\necho run\n", mode: 0o750 },
          "-leading-dash.txt": "dash\n",
          "a\nb.txt": "newline\n",
          "big.bin": Buffer.alloc(big, 7),
          link: { symlink: "bin/run.sh" },
          ".npmrc":
            "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=npm_secretsecret\n",
          "pkg/.npmrc": "save-exact=true\n",
          "gone.txt": "deleted from the working tree\n",
        },
        { git: true },
      );
      fs.linkSync(path.join(ws, "bin/run.sh"), path.join(ws, "hard-link.sh"));
      fs.rmSync(path.join(ws, "gone.txt"));
      execFileSync("mkfifo", [path.join(ws, "fifo")]);
      execFileSync(
        "git",
        ["config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0"],
        {
          cwd: ws,
        },
      );
      await using sandbox = await DockerSandbox.start({ runId: newRunId(), workspaceDir: ws, packer });
      const res = await sandbox.exec({
        script:
          "stat -c '%a %s %h' bin/run.sh hard-link.sh big.bin; readlink link; cat ./-leading-dash.txt 'a\nb.txt' .npmrc pkg/.npmrc; " +
          "ls gone.txt fifo 2>&1 | wc -l; git config --get-regexp extraheader | wc -l; git status --short | grep -v '^??' | wc -l",
      });
      expect(text(res.stdout)).toBe(
        `750 19 1\n750 19 1\n644 ${big} 1\nbin/run.sh\ndash\nnewline\nregistry=https://registry.npmjs.org/\nsave-exact=true\n2\n0\n2\n`,
      );
      expect(sandbox.copy.skipped).toEqual([]); // git does not list the FIFO
      expect(sandbox.copy.credentialFiles.map((c) => [c.path, c.removed])).toEqual([
        [".npmrc", ["//registry.npmjs.org/:_authToken"]],
        [".git/config", ["http.https://github.com/.extraheader"]],
      ]);
      expect(sandbox.copiedBy).toBe(way);
    },
  );

  it("makes the workspace unwritable for the agent in read-only (plan) mode", async () => {
    const ws = makeWorkspace({ "a.txt": "a\n" }, { git: true });
    await using sandbox = await DockerSandbox.start({
      runId: newRunId(),
      workspaceDir: ws,
      readOnlyWorkspace: true,
    });
    const res = await sandbox.exec({ script: "echo x > a.txt; echo rc=$?; touch b; echo rc=$?; cat a.txt" });
    expect(text(res.stdout)).toBe("rc=1\nrc=1\na\n");
    await expect(sandbox.writeFile("/workspace/a.txt", "x")).rejects.toMatchObject({ code: "EACCES" });
    expect((await sandbox.exportPatch()).files).toEqual([]);
  });

  it("reports a container killed from outside as gone, and removes it", async () => {
    const runId = newRunId();
    const sandbox = await DockerSandbox.start({ runId, workspaceDir: makeWorkspace({ a: "a" }) });
    const pending = sandbox.exec({ script: "sleep 30", timeoutMs: 60_000 });
    // Awaited after the kill, but handled from now: an engine whose kill answers only once the container
    // is gone (Podman) rejects `pending` before the kill call returns.
    const rejected = expect(pending).rejects.toThrow(/not running/);
    // Killed once the sleep is running (a second command through the helper sees it).
    while ((await sandbox.exec({ script: "pgrep -x sleep" })).exitCode !== 0);
    await docker.getContainer(sandbox.id).kill();
    await rejected;
    await sandbox.dispose();
    expect(await containersOf(runId)).toEqual([]);
  });

  it("restarts its exec helper when the agent kills every process, and keeps going", async () => {
    await using sandbox = await DockerSandbox.start({
      runId: newRunId(),
      workspaceDir: makeWorkspace({ a: "a" }),
    });
    const res = await sandbox.exec({ script: "kill -9 -1" });
    expect(res.exitCode).toBe(137);
    const after = await sandbox.exec({ script: "echo still here" });
    expect(text(after.stdout)).toBe("still here\n");
    expect(sandbox.helperRestarts).toBe(1);
    expect(sandbox.helperChannel).toBe("socket");
  });

  it("serves every operation over the engine's exec stream when asked to (what a remote engine gets)", async () => {
    await using sandbox = await DockerSandbox.start({
      runId: newRunId(),
      workspaceDir: makeWorkspace({ a: "a" }),
      helperChannel: "stream",
    });
    expect(sandbox.helperChannel).toBe("stream");
    const big = Buffer.alloc(3 * 2 ** 20, "x");
    await sandbox.writeFile("/workspace/big", big);
    expect((await sandbox.readFile("/workspace/big"))?.data.equals(big)).toBe(true);
    expect((await sandbox.exec({ script: "kill -9 -1" })).exitCode).toBe(137);
    expect(
      text(
        (await sandbox.exec({ script: `echo still here; test -e ${CHANNEL_DIR} || echo no channel` })).stdout,
      ),
    ).toBe("still here\nno channel\n");
    expect(sandbox.helperRestarts).toBe(1);
    expect(sandbox.helperChannel).toBe("stream");
  });

  it("has the OOM killer end the command over the memory limit, never its exec helper", async () => {
    // The helper (~50 MB) is often bigger than a command that has only begun to allocate: without its
    // children's raised oom_score_adj the kernel took the helper about one time in seven here.
    await using sandbox = await DockerSandbox.start({
      runId: newRunId(),
      workspaceDir: makeWorkspace({ a: "a" }),
      memoryBytes: 64 * 2 ** 20,
    });
    // The script's first command already has the score (the script sets it before running anything): set
    // from the helper after the spawn, it came too late on a loaded host and the killer took bash instead.
    expect(text((await sandbox.exec({ script: "cat /proc/self/oom_score_adj" })).stdout)).toBe("1000\n");
    for (let i = 0; i < 12; i++) {
      const res = await sandbox.exec({
        script: "python3 -c 'b = bytearray(10**9); print(len(b))'",
        timeoutMs: 60_000,
      });
      expect(res.exitCode).toBe(137);
      expect(res.oomKilled).toEqual({ memoryLimitBytes: 64 * 2 ** 20 });
    }
    expect(sandbox.helperRestarts).toBe(0);
  });

  it("reaps containers whose owner process is gone, and leaves live owners' containers alone", async () => {
    const dead = await docker.createContainer({
      Image: "debian:bookworm-slim",
      Cmd: ["sleep", "60"],
      Labels: {
        [LABEL_RUN]: "orphan-test",
        "agent-ci.pid": "999999",
        "agent-ci.host": (await import("node:os")).hostname(),
      },
    });
    const mine = await DockerSandbox.start({ runId: newRunId(), workspaceDir: makeWorkspace({ a: "a" }) });
    const other = await DockerSandbox.start({ runId: newRunId(), workspaceDir: makeWorkspace({ a: "a" }) });
    await expect(dead.inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect((await docker.getContainer(mine.id).inspect()).State.Running).toBe(true);
    await Promise.all([mine.dispose(), other.dispose()]);
  });
});
