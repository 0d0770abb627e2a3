// agent-ci against Podman's Docker-compatible API (`podman system service`), reached the way users reach
// it: DOCKER_HOST=unix://…podman.sock. A representative subset of the sandbox and run suites: the
// hardening read back (and the refusal where Podman does not honour a setting), the workspace round
// trip and patch, the timeout that kills a process group, and scripted runs through runAgent.
//
// Runs when AGENT_CI_PODMAN_SOCKET is set (scripts/test.sh sets it up with scripts/podman-engine.sh where
// it may install packages). Set but not answering, answering but not Podman, or a failed setup
// (AGENT_CI_PODMAN_SETUP_ERROR) fails: never a silent pass. Unset: skipped. See docs/ENGINES.md for what
// differs from Docker and why.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandbox, newRunId } from "../../src/sandbox/docker-sandbox.js";
import { pingEngine } from "../../src/sandbox/engine/engine.js";
import { defaultImageTag, ensureDefaultImage, recipeTag } from "../../src/sandbox/image/image.js";
import { toolbeltRecipe } from "../../src/sandbox/image/toolbelt.js";
import { EngineError } from "../../src/sandbox/sandbox.js";
import { hasCommand } from "../support/host-command.js";
import { applyToCopy, makeWorkspace } from "../support/workspace.js";
import { egressOptions } from "../../src/sandbox/egress/allowlist.js";
import { hostAddressForContainers, startOriginServers } from "../support/egress-servers.js";
import { mcpImage, resultText, runWithMcp } from "../support/mcp-run.js";
import { EXAMPLE, labelled, runScripted, scriptFile } from "./support.js";

/** In CI (`.ci/run` installs every prerequisite) a missing one fails the tests instead of skipping them. */
const IN_CI = process.env.CI === "true";

const SOCKET = process.env.AGENT_CI_PODMAN_SOCKET;
/** Set by scripts/test.sh when it should have set Podman up and could not. */
const SETUP_ERROR = process.env.AGENT_CI_PODMAN_SETUP_ERROR;
const PODMAN_HOST = SOCKET ? (SOCKET.includes("://") ? SOCKET : `unix://${SOCKET}`) : "";
/** The one setting Podman's default seccomp profile does not give (docs/ENGINES.md). */
const USERNS_MISSING = "user namespaces blocked (the engine's seccomp profile allows unshare -U)";
const text = (b: Buffer) => b.toString("utf8");
const PODMAN_PROFILE = "/usr/share/containers/seccomp.json";
const localPodman = hasCommand("podman") && fs.existsSync(PODMAN_PROFILE);

describe.runIf(SETUP_ERROR && !SOCKET)("agent-ci on Podman", () => {
  it("could be set up on this machine", () => {
    throw new Error(`Podman was to be tested here but could not be set up: ${SETUP_ERROR}`);
  });
});

describe.skipIf(!SOCKET && !IN_CI)(`agent-ci on Podman (${PODMAN_HOST})`, () => {
  const savedHost = process.env.DOCKER_HOST;
  // The Docker engine (where the images are built) before DOCKER_HOST points at Podman.
  const docker = new Docker();
  let podman: Docker;

  /**
   * No registry here: an image built on Docker is copied over through the API (docker save | podman load)
   * when Podman lacks it.
   */
  async function copyToPodman(tag: string): Promise<void> {
    const has = await podman
      .getImage(tag)
      .inspect()
      .then(
        () => true,
        () => false,
      );
    if (has) return;
    const tar = await docker.getImage(tag).get();
    await new Promise<void>((resolve, reject) =>
      podman.loadImage(tar, {}, (err, stream) => {
        if (err || !stream) return reject(err ?? new Error("no load stream"));
        podman.modem.followProgress(stream, (e: Error | null) => (e ? reject(e) : resolve()));
      }),
    );
  }

  beforeAll(async () => {
    process.env.DOCKER_HOST = PODMAN_HOST;
    podman = new Docker();
    const engine = await pingEngine(podman);
    expect(
      engine.profile.name,
      `${PODMAN_HOST} answers, but it is not Podman (version ${engine.version})`,
    ).toBe("podman");
    // The default image and agent-ci's toolbelt.
    for (const tag of [defaultImageTag(), recipeTag(toolbeltRecipe())]) await copyToPodman(tag);
    await ensureDefaultImage(podman);
  }, 600_000);

  afterAll(() => {
    if (savedHost === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = savedHost;
  });

  it("refuses by default, naming the setting Podman does not honour, and leaves no container", async () => {
    const runId = newRunId();
    const error = await DockerSandbox.start({ runId, workspaceDir: makeWorkspace({ a: "a\n" }) }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EngineError);
    expect((error as Error).message).toContain(USERNS_MISSING);
    expect((error as Error).message).toContain("--allow-weak-hardening");
    expect(await labelled(podman, runId)).toEqual([]);
  });

  describe("with --allow-weak-hardening", () => {
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
          "img.bin": Buffer.from([0, 1, 2, 255, 254, 0, 10]),
        },
        { git: true },
      );
      sandbox = await DockerSandbox.start({ runId, workspaceDir: workspace, allowWeakHardening: true });
    }, 120_000);
    afterAll(async () => {
      await sandbox?.dispose();
      expect(await labelled(podman, runId)).toEqual([]);
    });

    it("reads the hardening back: every other setting held, and only the user-namespace block is missing", async () => {
      const h = sandbox.hardening;
      expect(h.missing).toEqual([USERNS_MISSING]);
      expect(h.uid).toBe(1000);
      expect(h.capEff).toMatch(/^0+$/);
      expect(h.noNewPrivileges).toBe(true);
      expect(h.seccomp).toBe("2");
      expect(h.readonlyRootfs).toBe(true);
      expect(h.capDrop.length).toBeGreaterThanOrEqual(10); // Podman lists the dropped capabilities one by one
      expect(h.pidsLimit).toBe(512);
      expect(h.memoryBytes).toBe(4 * 1024 ** 3);
      expect(h.nanoCpus).toBe(2e9);
      expect(h.init).toBe(true);
      expect(h.networkMode).toBe("none");
      const res = await sandbox.exec({
        script:
          "id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; touch /usr/x 2>&1; grep 'Max open files' /proc/self/limits; " +
          "ls /sys/class/net; test -e /var/run/docker.sock; echo sock=$?; unshare -U true && echo userns=open",
      });
      const out = text(res.stdout);
      expect(out.split("\n")[0]).toBe("1000");
      expect(out).toMatch(/CapEff:\s+0000000000000000/);
      expect(out).toMatch(/NoNewPrivs:\s+1/);
      expect(out).toMatch(/Read-only file system/);
      expect(out).toMatch(/Max open files\s+4096\s+4096/);
      expect(out).toMatch(/^lo$/m);
      expect(out).not.toMatch(/eth0/);
      expect(out).toContain("sock=1");
      // What the refusal is about, seen from inside: the agent can create a user namespace here.
      expect(out).toContain("userns=open");
    });

    it("copies the workspace in, owned by the agent, with git usable on it", async () => {
      const res = await sandbox.exec({
        script:
          "stat -c '%a %U' bin/run.sh; readlink link-to-app; git log --oneline | wc -l; git status --porcelain | wc -l; touch new && rm new && echo writable",
      });
      expect(text(res.stderr)).not.toContain("dubious ownership");
      expect(text(res.stdout)).toBe("755 agent\nsrc/app.js\n1\n0\nwritable\n");
    });

    it("makes a patch that applies to a pristine copy", async () => {
      await sandbox.writeFile("/workspace/src/app.js", "console.log('hello');\n");
      await sandbox.exec({
        script:
          "printf 'new\\n' > added.txt && rm README.md && chmod +x src/app.js && printf '\\0\\1\\2' > img.bin",
      });
      const patch = await sandbox.exportPatch();
      expect(patch.files.map((f) => f.path).sort()).toEqual([
        "README.md",
        "added.txt",
        "img.bin",
        "src/app.js",
      ]);
      const copy = applyToCopy(workspace, patch.patch);
      expect(fs.readFileSync(path.join(copy, "src/app.js"), "utf8")).toBe("console.log('hello');\n");
      expect(fs.statSync(path.join(copy, "src/app.js")).mode & 0o111).not.toBe(0);
      expect(fs.readFileSync(path.join(copy, "added.txt"), "utf8")).toBe("new\n");
      expect(fs.existsSync(path.join(copy, "README.md"))).toBe(false);
      expect([...fs.readFileSync(path.join(copy, "img.bin"))]).toEqual([0, 1, 2]);
    });

    it("kills the whole process group on timeout and leaves nothing behind", async () => {
      const res = await sandbox.exec({
        script: "trap '' TERM; (sleep 300; echo marker-child) & sleep 301; echo never",
        timeoutMs: 500,
      });
      expect(res.timedOut).toBe(true);
      expect(text(res.stdout)).not.toContain("never");
      const ps = await sandbox.exec({ script: "ps -eo args | grep -c '[s]leep 30'" });
      expect(text(ps.stdout).trim()).toBe("0");
    });

    it("survives the agent killing every process it may (the container's own processes run as another user)", async () => {
      const res = await sandbox.exec({ script: "kill -9 -1" });
      expect(res.exitCode).toBe(137);
      const after = await sandbox.exec({ script: "echo still here" });
      expect(text(after.stdout)).toBe("still here\n");
      // The restarted helper is back on the local socket (Podman sees this machine's files too).
      expect(sandbox.helperChannel).toBe("socket");
    });

    it("keeps a plan-mode workspace unwritable for the agent", async () => {
      const ws = makeWorkspace({ "a.txt": "a\n" }, { git: true });
      await using plan = await DockerSandbox.start({
        runId: newRunId(),
        workspaceDir: ws,
        readOnlyWorkspace: true,
        allowWeakHardening: true,
      });
      const res = await plan.exec({
        script: "echo x > a.txt; echo rc=$?; touch b; echo rc=$?; cat a.txt; git status --porcelain | wc -l",
      });
      expect(text(res.stdout)).toBe("rc=1\nrc=1\na\n0\n");
      await expect(plan.writeFile("/workspace/a.txt", "x")).rejects.toMatchObject({ code: "EACCES" });
      expect((await plan.exportPatch()).files).toEqual([]);
    });
  });

  describe("--network allowlist", () => {
    it("goes out only through the sidecar's proxy, records the calls, and leaves no sidecar or volume", async () => {
      const host = await hostAddressForContainers(podman);
      // Podman's bridge gets its address with its first container: listen everywhere, reach it by the gateway.
      const origins = await startOriginServers(host, "0.0.0.0");
      const runId = newRunId();
      try {
        const sandbox = await DockerSandbox.start({
          runId,
          workspaceDir: makeWorkspace({ a: "a\n" }),
          allowWeakHardening: true,
          network: "allowlist",
          caCertPem: fs.readFileSync(origins.caFile, "utf8"),
          egress: egressOptions(["allowed.test"], [`allowed.test=${host}`, `blocked.test=${host}`]),
        });
        try {
          const ok = await sandbox.exec({
            script: `curl -sS https://allowed.test:${origins.httpsPort}/`,
            caller: "toolu_ok",
          });
          expect(text(ok.stdout), text(ok.stderr)).toBe("hello from allowed.test over https\n");
          const refused = await sandbox.exec({
            script: `curl -sS http://blocked.test:${origins.httpPort}/`,
            caller: "toolu_no",
          });
          expect(text(refused.stdout)).toContain("agent-ci's network policy refused blocked.test");
          const direct = await sandbox.exec({
            script: `ls /sys/class/net; curl -sS -m 5 --noproxy '*' http://${host}:${origins.httpPort}/ || echo DIRECT-FAILED`,
          });
          expect(text(direct.stdout)).toBe("lo\nDIRECT-FAILED\n");
          await sandbox.egress?.sync();
          expect(sandbox.egress?.entries.map((e) => [e.caller, e.host, e.decision])).toEqual([
            ["toolu_ok", "allowed.test", "allowed"],
            ["toolu_no", "blocked.test", "denied"],
          ]);
        } finally {
          await sandbox.dispose();
        }
        expect(await labelled(podman, runId)).toEqual([]);
        expect(
          (await podman.listVolumes({ filters: { label: [`agent-ci.run=${runId}`] } })).Volumes ?? [],
        ).toEqual([]);
      } finally {
        await origins.close();
      }
    }, 180_000);
  });

  describe("scripted runs through runAgent", () => {
    it("fails before any tool call without --allow-weak-hardening, with the reason in the record", async () => {
      const run = await runScripted({
        script: scriptFile([[{ name: "Bash", input: { command: "echo hi" } }]]),
      });
      expect(run.outcome.exitReason).toBe("engine_error");
      expect(run.outcome.error).toContain(USERNS_MISSING);
      expect(run.report?.toolCalls).toEqual([]);
      expect(await labelled(podman, run.outcome.runId)).toEqual([]);
    });

    it("fixes the example with --allow-weak-hardening; the report says what was missing; the patch applies", async () => {
      const run = await runScripted({
        script: path.join(EXAMPLE, "fix.script.json"),
        mode: "acceptEdits",
        allow: ["Bash(npm test)"],
        allowWeakHardening: true,
      });
      expect(run.outcome.exitReason).toBe("completed");
      expect(run.report?.toolCalls.map((c) => c.tool)).toEqual(["Bash", "Grep", "Read", "Edit", "Bash"]);
      expect(run.report?.toolCalls.at(-1)?.exitCode).toBe(0);
      expect(run.report?.warnings.find((w) => w.kind === "weak_hardening")?.message).toContain(
        USERNS_MISSING,
      );
      const copy = applyToCopy(EXAMPLE, Buffer.from(run.patch));
      expect(fs.readFileSync(path.join(copy, "src/calc.js"), "utf8")).toContain(
        "return sum / values.length;",
      );
      expect(await labelled(podman, run.outcome.runId)).toEqual([]);
    }, 180_000);
  });

  // Here rather than in test/integration/mcp.test.ts: only on Podman does a stdio server's home lie in a
  // folder the agent can write (Podman 4.3 mounts no tmpfs with an owner, so the home is made in /tmp).
  describe("a stdio MCP server started with npx", () => {
    it("B22 gets the trusted package though one of its name is planted in the folders above its home and in the workspace's node_modules", async () => {
      const image = await mcpImage();
      await copyToPodman(image);
      // What a project planted for npx to find: a package, its bin, a project file and an .npmrc whose
      // node-options npm would hand to every node it starts. The agent copies it above the server's home.
      const ran = (name: string) => `require("fs").writeFileSync("/workspace/${name}-ran", "ran");\n`;
      const planted = {
        "package.json": '{"name": "planted", "version": "1.0.0"}\n',
        ".npmrc": "node-options=--require /tmp/evil.js\n",
        "evil.js": ran("evil"),
        "node_modules/mcp-server-probe/package.json":
          '{"name": "mcp-server-probe", "version": "9.9.9", "bin": {"mcp-server-probe": "cli.js"}}\n',
        "node_modules/mcp-server-probe/cli.js": {
          content: `#!/usr/bin/env node\n${ran("planted-package")}`,
          mode: 0o755,
        },
        "node_modules/.bin/mcp-server-probe": {
          content: `#!/usr/bin/env node\n${ran("planted-bin")}`,
          mode: 0o755,
        },
      };
      const run = await runWithMcp({
        servers: { npx: { command: "npx", args: ["mcp-server-probe"] } },
        files: {
          "README.md": "mcp\n",
          // A script of the project's own: the policy reads the command, not what the script does. It plants
          // in every folder above a server's home the agent can write: /tmp, where Podman's homes were.
          "plant.sh":
            'for d in / /run /tmp; do cp -R plant/. "$d" 2>/dev/null && echo "planted in $d"; done; true\n',
          ...Object.fromEntries(Object.entries(planted).map(([name, spec]) => [`plant/${name}`, spec])),
          "node_modules/.bin/mcp-server-probe": {
            content: `#!/usr/bin/env node\n${ran("workspace-bin")}`,
            mode: 0o755,
          },
        },
        config: { mode: "bypassPermissions", allowWeakHardening: true },
        turns: [
          [{ id: "plant", name: "Bash", input: { command: "sh plant.sh" } }],
          // The server ends in the middle of a call; agent-ci starts it again, after the planting.
          [{ id: "crash", name: "mcp__npx__crash", input: {} }],
          [{ id: "who", name: "mcp__npx__whoami", input: {} }],
          [{ id: "look", name: "Bash", input: { command: "ls /workspace/*-ran 2>&1; echo looked" } }],
        ],
      });
      expect(run.outcome.exitReason, run.printed).toBe("completed");
      expect(resultText(run.results.get("plant"))).toBe("planted in /tmp");
      expect(run.report.mcp?.servers[0]?.restarts).toBe(1);
      expect(resultText(run.results.get("who"))).toMatch(/^uid=2000 gid=1000 /);
      expect(resultText(run.results.get("look"))).toMatch(/No such file or directory\nlooked$/);
      expect(run.files["patch.diff"] ?? "").not.toContain("-ran");
      expect(await labelled(podman, run.outcome.runId)).toEqual([]);
    }, 300_000);
  });
});

// The way to run on Podman with every setting in place: serve it with the Docker-like seccomp profile
// that scripts/podman-seccomp.mjs derives from Podman's own. This suite starts its own service with that
// profile (CONTAINERS_CONF), on a socket of its own, next to the one under AGENT_CI_PODMAN_SOCKET.
describe.skipIf((!SOCKET || !localPodman) && !IN_CI)(
  `agent-ci on Podman with the Docker-like seccomp profile${SOCKET && !localPodman ? " (skipped: needs the podman CLI and its seccomp.json here)" : ""}`,
  () => {
    const savedHost = process.env.DOCKER_HOST;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-podman-strict-"));
    const socket = path.join(dir, "podman.sock");
    let service: ChildProcess | undefined;

    beforeAll(async () => {
      fs.writeFileSync(
        path.join(dir, "seccomp.json"),
        execFileSync("node", ["scripts/podman-seccomp.mjs", PODMAN_PROFILE], {
          stdio: ["ignore", "pipe", "ignore"],
        }),
      );
      fs.writeFileSync(
        path.join(dir, "containers.conf"),
        `[containers]\nseccomp_profile = "${dir}/seccomp.json"\n`,
      );
      service = spawn("podman", ["system", "service", "--time=0", `unix://${socket}`], {
        env: { ...process.env, CONTAINERS_CONF: path.join(dir, "containers.conf") },
        stdio: ["ignore", "ignore", fs.openSync(path.join(dir, "service.log"), "a")],
      });
      process.env.DOCKER_HOST = `unix://${socket}`;
      for (const end = Date.now() + 30_000; ;) {
        const up = await pingEngine(new Docker()).then(
          () => true,
          () => false,
        );
        if (up) break;
        if (Date.now() > end)
          throw new Error(
            `podman system service with the strict profile did not answer: ${fs.readFileSync(path.join(dir, "service.log"), "utf8")}`,
          );
        await new Promise((r) => setTimeout(r, 250));
      }
      // Same storage as the main service: the image is there already (the suite above made sure).
      await ensureDefaultImage(new Docker());
    }, 120_000);

    afterAll(() => {
      if (savedHost === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = savedHost;
      service?.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("starts without --allow-weak-hardening: every setting read back, user namespaces blocked", async () => {
      await using sandbox = await DockerSandbox.start({
        runId: newRunId(),
        workspaceDir: makeWorkspace({ a: "a\n" }, { git: true }),
      });
      expect(sandbox.hardening.missing).toEqual([]);
      const res = await sandbox.exec({
        script:
          'unshare -U true 2>&1; echo u=$?; git status --porcelain | wc -l; node -e \'require("child_process").execSync("true"); console.log("spawn ok")\'',
      });
      expect(text(res.stdout)).toMatch(/u=[1-9]/);
      expect(text(res.stdout)).toContain("0\nspawn ok\n");
    });

    it("fixes the example through runAgent with no hardening warning", async () => {
      const run = await runScripted({
        script: path.join(EXAMPLE, "fix.script.json"),
        mode: "acceptEdits",
        allow: ["Bash(npm test)"],
      });
      expect(run.outcome.exitReason, run.logs.join("\n")).toBe("completed");
      expect(run.report?.warnings.filter((w) => w.kind === "weak_hardening")).toEqual([]);
      expect(run.report?.toolCalls.at(-1)?.exitCode).toBe(0);
      expect(await labelled(new Docker(), run.outcome.runId)).toEqual([]);
    }, 180_000);
  },
);
