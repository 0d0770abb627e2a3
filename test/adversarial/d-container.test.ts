// RELIABILITY D (container faults) and the fault injection of issue 8: the container killed from outside
// mid-call, the engine unreachable, a Docker API call that never answers, an engine that ignores a setting,
// SIGINT/SIGTERM/SIGKILL to the CLI at seeded points, two runs at once, a full host disk. Every fault must
// end with a written record (where a process is left to write one), a clear exit reason, and no container.
// The kills are asserted by looking at processes (docker top, the pid), never by elapsed time. The engine
// restart is in d-engine-restart.test.ts (it runs a second daemon of its own).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect } from "vitest";
import { EXIT_CODES } from "../../src/runner/run.js";
import { defaultImageTag } from "../../src/sandbox/image/image.js";
import { fake, startFakeAnthropic } from "../support/fake-anthropic.js";
import { startDockerProxy } from "./docker-proxy.js";
import {
  containerOf,
  docker,
  seededRandom,
  until,
  useHarness,
  type CliHandle,
  type ScriptCall,
} from "./harness.js";
import { rowTester, type Row } from "./rows.js";

const ROWS = [
  {
    id: "D1",
    what: "engine unreachable at start: no socket, connection refused, not a socket",
    kind: "fault",
  },
  { id: "D2", what: "image missing and the pull fails", kind: "fault" },
  {
    id: "D3",
    what: "image lacks bash/git/rg/node: agent-ci's toolbelt supplies them, and the report says so",
    kind: "fault",
  },
  {
    id: "D4",
    what: "container killed from outside (docker kill) mid-call",
    kind: "fault",
    alsoSee: [{ file: "test/adversarial/d-engine-restart.test.ts", test: "D4" }],
  },
  { id: "D5", what: "the agent runs kill -9 1, kill -9 -1, pkill -f .", kind: "fault" },
  { id: "D6", what: "a Docker API call that never answers (exec create hangs)", kind: "fault" },
  {
    id: "D7",
    what: "SIGINT/SIGTERM to the CLI before the container, during copy-in, mid-call, during patch export; SIGKILL then reaping",
    kind: "fault",
  },
  { id: "D8", what: "two runs at once on one host", kind: "fault" },
  {
    id: "D9",
    what: "copy-in: special files, a workspace larger than the sandbox",
    kind: "fault",
    alsoSee: [
      {
        file: "test/integration/sandbox.test.ts",
        test: "fails clearly, leaving no container, when the workspace is over the copy limit",
      },
    ],
  },
  {
    id: "D10",
    what: "the host disk fills while the patch and report are written",
    kind: "fault",
    alsoSee: [
      {
        file: "test/unit/report/write-disk-full.test.ts",
        test: "keeps the previous complete set of files and leaves no partial or temp file",
      },
    ],
  },
  {
    id: "D11",
    what: "an engine that silently ignores PidsLimit and Memory: fail closed, or run and say so with --allow-weak-hardening",
    kind: "fault",
  },
  { id: "D12", what: "LANG unset, another locale and timezone on the host", kind: "fault" },
] as const satisfies readonly Row[];

const h = useHarness();
const { test, checkTable } = rowTester(ROWS);
const bash = (command: string, extra: Record<string, unknown> = {}): ScriptCall => ({
  name: "Bash",
  input: { command, ...extra },
});

/** The SIGINT/SIGTERM points are drawn from this seed (AGENT_CI_FAULT_SEED replays another draw). */
const FAULT_SEED = Number(process.env.AGENT_CI_FAULT_SEED ?? 20261122);

/** The run's container, once the CLI has said its run id and the container exists. */
async function liveContainer(handle: CliHandle): Promise<string> {
  const info = await until(
    "the run's container",
    async () => (handle.runId() ? containerOf(handle.runId()!) : undefined),
    60_000,
  );
  return info.Id;
}

/** Waits until a process whose command line contains `marker` runs in the container (the call is in flight). */
async function processRunning(containerId: string, marker: string): Promise<void> {
  await until(`"${marker}" running in the container`, async () => {
    const top = await docker
      .getContainer(containerId)
      .top({ ps_args: "-eo pid,args" })
      .catch(() => undefined);
    return top?.Processes?.some((p: string[]) => p.join(" ").includes(marker)) ? true : undefined;
  });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("D: container faults", () => {
  test("D1", "an unreachable engine fails the run before any model call, saying how to fix it", async () => {
    const ws = h.workspace({ "a.txt": "a\n" });
    const notASocket = path.join(h.tmp(), "docker.sock");
    fs.writeFileSync(notASocket, "");
    const api = await startFakeAnthropic({
      apiKey: h.secrets.anthropicKey,
      turns: [fake.text("never asked")],
    });
    try {
      for (const dockerHost of [
        "unix:///nonexistent/docker.sock",
        "tcp://127.0.0.1:1",
        `unix://${notASocket}`,
      ]) {
        const run = await h.cli({
          workspace: ws,
          prompt: "fix it",
          format: "text",
          env: { DOCKER_HOST: dockerHost, ANTHROPIC_BASE_URL: api.url },
        });
        expect(run.exitCode, dockerHost).toBe(3);
        expect(run.report?.exitReason).toBe("engine_error");
        expect(run.report?.error?.message).toMatch(
          /no Docker engine answers at DOCKER_HOST=.*(start Docker|DOCKER_HOST at a Docker-compatible socket)/,
        );
        expect(run.stdout).toMatch(/engine_error: no Docker engine answers/);
        expect(run.report?.usage.inputTokens).toBe(0);
      }
      expect(api.messagesRequests()).toEqual([]);
    } finally {
      await api.close();
    }
  });

  test("D2", "a missing image that cannot be pulled is a clear engine error with no container", async () => {
    const ws = h.workspace({ "a.txt": "a\n" });
    const run = await h.cli({
      workspace: ws,
      turns: [[bash("true")]],
      args: ["--image", "agent-ci-adversarial-missing:never"],
    });
    expect(run.exitCode).toBe(3);
    expect(run.report?.error?.message).toMatch(
      /image agent-ci-adversarial-missing:never is not on this engine and pulling it failed/,
    );
  });

  test(
    "D3",
    "an image without bash, git, rg or node runs the tools from agent-ci's toolbelt, and the report says which",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n" });
      const tag = `agent-ci-adversarial-nogit:${process.pid}`;
      execFileSync("docker", ["build", "-q", "-t", tag, "-"], {
        input: `FROM ${defaultImageTag()}\nUSER root\nRUN rm -f /usr/bin/git /usr/bin/rg /usr/local/bin/node /usr/bin/node /usr/bin/nodejs\nUSER 1000:1000\n`,
        stdio: ["pipe", "pipe", "pipe"],
      });
      try {
        const noGit = await h.cli({
          workspace: ws,
          turns: [[bash("command -v git rg; git --version")]],
          args: ["--image", tag],
        });
        expect(noGit.exitCode).toBe(0);
        expect(noGit.report?.toolCalls[0]?.resultPreview).toMatch(
          /^\/opt\/agent-ci\/bin\/git\n\/opt\/agent-ci\/bin\/rg\ngit version/,
        );
        const tools = Object.fromEntries((noGit.report?.image?.tools ?? []).map((t) => [t.name, t.from]));
        expect(tools).toMatchObject({
          bash: "image",
          git: "agent-ci",
          rg: "agent-ci",
          node: "agent-ci",
          python3: "image",
        });
        const bare = await h.cli({
          workspace: ws,
          turns: [[bash("echo ran")]],
          args: ["--image", "debian:bookworm-slim"],
        });
        expect(bare.exitCode).toBe(0);
        expect(bare.report?.toolCalls[0]?.resultPreview).toBe("ran");
      } finally {
        execFileSync("docker", ["rmi", "-f", tag], { stdio: "pipe" });
      }
    },
  );

  test(
    "D4",
    "a container killed from outside mid-call ends the run as engine_error, keeping every earlier call",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n" });
      const handle = h.startCli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: [
          [{ name: "Write", input: { file_path: "/workspace/kept.txt", content: "kept\n" } }],
          [bash("sleep 1000000078")],
          [bash("echo never")],
        ],
      });
      const id = await liveContainer(handle);
      await processRunning(id, "sleep 1000000078");
      await docker.getContainer(id).kill();
      const run = await handle.done;
      expect(run.exitCode).toBe(EXIT_CODES.engine_error);
      expect(run.report?.exitReason).toBe("engine_error");
      expect(run.report?.error?.message).toMatch(/not running/);
      expect(run.calls.map((c) => [c.tool, c.isError, c.errorKind ?? ""])).toEqual([
        ["Write", false, ""],
        ["Bash", true, "interrupted"],
      ]);
      // Whether a patch exists is said plainly: the container is gone, so there is none.
      expect(run.report?.warnings).toContainEqual(
        expect.objectContaining({
          kind: "patch",
          message: expect.stringMatching(/no patch: it could not be exported from the container/),
        }),
      );
      expect(run.patch).toBe("");
    },
  );

  test("D5", "kill -9 1, kill -9 -1 and pkill -f . do not end the run; the next call works", async () => {
    const ws = h.workspace({ "a.txt": "a\n" });
    const run = await h.cli({
      workspace: ws,
      mode: "bypassPermissions",
      turns: [
        [bash("sleep 1000000079", { run_in_background: true })],
        [bash("kill -9 1; echo rc=$?")],
        [bash("kill -9 -1")],
        [bash("echo after-kill-all")],
        [bash("pkill -9 -f . ; echo unreachable")],
        [bash("echo after-pkill > b.txt && cat b.txt")],
        [{ name: "BashOutput", input: { bash_id: "bash1" } }],
      ],
    });
    expect(run.report?.exitReason).toBe("completed");
    expect(run.text(1)).toMatch(/Operation not permitted|rc=1/);
    expect(run.call(2).exitCode).toBe(137);
    expect(run.text(2)).toMatch(/helper was killed during this call[\s\S]*background shells were lost/);
    expect(run.text(3)).toBe("after-kill-all");
    expect(run.text(5)).toBe("after-pkill");
    expect(run.call(6).isError).toBe(true);
    expect(run.report?.patch.files.map((f) => f.path)).toEqual(["b.txt"]);
  });

  test(
    "D6",
    "a Docker API call that never answers times out, and the container it made is removed",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n" });
      const proxy = await startDockerProxy({
        hang: (method, p) => method === "POST" && /\/containers\/[^/]+\/exec$/.test(p),
      });
      try {
        const run = await h.cli({
          workspace: ws,
          turns: [[bash("true")]],
          env: { DOCKER_HOST: proxy.dockerHost },
          timeoutMs: 120_000,
        });
        expect(proxy.hung.length).toBeGreaterThan(0);
        expect(run.exitCode).toBe(3);
        expect(run.report?.error?.message).toMatch(/Docker engine did not answer an exec create within 30 s/);
        expect(proxy.requests.some((r) => r.startsWith("DELETE /") && r.includes("/containers/"))).toBe(true);
      } finally {
        await proxy.close();
      }
    },
    150_000,
  );

  describe("D7: signals at seeded points", () => {
    const random = seededRandom(FAULT_SEED);
    const draw = () => ({
      signal: (random() < 0.5 ? "SIGINT" : "SIGTERM") as NodeJS.Signals,
      delayMs: Math.floor(random() * 150),
    });
    const points = { beforeContainer: draw(), copyIn: draw(), midCall: draw(), patchExport: draw() };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    test(
      "D7",
      `before the container exists (${points.beforeContainer.signal} +${points.beforeContainer.delayMs} ms, seed ${FAULT_SEED}): cancelled, recorded, nothing left`,
      async () => {
        const ws = h.workspace({ "a.txt": "a\n" });
        const handle = h.startCli({ workspace: ws, format: "text", turns: [[bash("echo hi")]] });
        await handle.waitFor(/: run \S+, mode/);
        await sleep(points.beforeContainer.delayMs);
        handle.child.kill(points.beforeContainer.signal);
        const run = await handle.done;
        expect(run.exitCode).toBe(130);
        expect(run.report?.exitReason).toBe("cancelled");
        expect(run.calls).toEqual([]);
      },
    );

    test(
      "D7",
      `during the copy-in of a 40 MB workspace (${points.copyIn.signal} +${points.copyIn.delayMs} ms): cancelled, recorded, nothing left`,
      async () => {
        const files: Record<string, Buffer> = {};
        for (let i = 0; i < 40; i++) files[`blob/${i}.bin`] = Buffer.alloc(1024 * 1024, i);
        const ws = h.workspace(files);
        const handle = h.startCli({ workspace: ws, format: "text", turns: [[bash("echo hi")]] });
        await liveContainer(handle);
        await sleep(points.copyIn.delayMs);
        handle.child.kill(points.copyIn.signal);
        const run = await handle.done;
        expect(run.exitCode).toBe(130);
        expect(run.report?.exitReason).toBe("cancelled");
        expect(run.calls).toEqual([]);
      },
    );

    test(
      "D7",
      `mid-call (${points.midCall.signal} +${points.midCall.delayMs} ms): cancelled, the call recorded as interrupted, earlier work kept`,
      async () => {
        const ws = h.workspace({ "a.txt": "a\n" });
        const handle = h.startCli({
          workspace: ws,
          mode: "bypassPermissions",
          turns: [
            [{ name: "Write", input: { file_path: "/workspace/kept.txt", content: "kept\n" } }],
            [bash("sleep 1000000080")],
          ],
        });
        const id = await liveContainer(handle);
        await processRunning(id, "sleep 1000000080");
        await sleep(points.midCall.delayMs);
        handle.child.kill(points.midCall.signal);
        const run = await handle.done;
        expect(run.exitCode).toBe(130);
        expect(run.report?.exitReason).toBe("cancelled");
        expect(run.calls.map((c) => c.errorKind ?? "ok")).toEqual(["ok", "interrupted"]);
        expect(run.report?.patch.files.map((f) => f.path)).toEqual(["kept.txt"]);
      },
    );

    test(
      "D7",
      `during the patch export of 40 MB of changes (${points.patchExport.signal} +${points.patchExport.delayMs} ms): the run finishes writing, recorded, nothing left`,
      async () => {
        const ws = h.workspace({ "a.txt": "a\n" });
        const handle = h.startCli({
          workspace: ws,
          mode: "bypassPermissions",
          turns: [[bash("head -c 40000000 /dev/urandom > big.bin && echo made")]],
        });
        await handle.waitFor(/"stop_reason":"end_turn"/);
        await sleep(points.patchExport.delayMs);
        handle.child.kill(points.patchExport.signal);
        const run = await handle.done;
        // The agent was done: the signal only asks to stop, so the export completes (or the run is cancelled).
        expect([0, 130]).toContain(run.exitCode);
        if (run.report?.exitReason === "completed")
          expect(run.report.patch.files.map((f) => f.path)).toEqual(["big.bin"]);
      },
      120_000,
    );

    test("D7", "a second signal leaves at once, still removing the container", async () => {
      const ws = h.workspace({ "a.txt": "a\n" });
      const handle = h.startCli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: [[bash("trap '' TERM INT; sleep 1000000081")]],
        record: "optional",
      });
      const id = await liveContainer(handle);
      await processRunning(id, "sleep 1000000081");
      handle.child.kill("SIGINT");
      handle.child.kill("SIGINT");
      const run = await handle.done;
      expect(run.exitCode).toBe(130);
    });

    test(
      "D7",
      "SIGKILL leaves an orphan that the next start reaps (its owner pid is dead), never a live run's container",
      async () => {
        const ws = h.workspace({ "a.txt": "a\n" });
        const victim = h.startCli({
          workspace: ws,
          mode: "bypassPermissions",
          turns: [[bash("sleep 1000000082")]],
          record: "none",
        });
        const id = await liveContainer(victim);
        await processRunning(id, "sleep 1000000082");
        const live = h.startCli({
          workspace: ws,
          mode: "bypassPermissions",
          turns: [[bash("sleep 1000000083")]],
        });
        const liveId = await liveContainer(live);
        victim.child.kill("SIGKILL");
        await victim.done;
        expect(pidAlive(victim.child.pid!)).toBe(false);
        expect((await docker.getContainer(id).inspect()).State.Running).toBe(true);
        // The next agent-ci start reaps the orphan, and leaves the other live run alone.
        const next = await h.cli({ workspace: ws, turns: [[bash("echo next")]] });
        expect(next.report?.exitReason).toBe("completed");
        await expect(docker.getContainer(id).inspect()).rejects.toMatchObject({ statusCode: 404 });
        expect((await docker.getContainer(liveId).inspect()).State.Running).toBe(true);
        live.child.kill("SIGTERM");
        expect((await live.done).report?.exitReason).toBe("cancelled");
      },
    );
  });

  test("D8", "two runs at once each see only their own workspace, and both finish", async () => {
    const one = h.workspace({ "marker-one.txt": "one\n" });
    const two = h.workspace({ "marker-two.txt": "two\n" });
    const turns = (name: string) => [
      [bash(`ls; sleep 2; echo ${name} > out.txt; ls /workspace`)],
      [bash("ls /tmp; cat /proc/1/cgroup | head -1")],
    ];
    const [a, b] = await Promise.all([
      h.cli({ workspace: one, mode: "bypassPermissions", turns: turns("one") }),
      h.cli({ workspace: two, mode: "bypassPermissions", turns: turns("two") }),
    ]);
    expect(a.runId).not.toBe(b.runId);
    expect(a.text(0)).toMatch(/^marker-one\.txt\nmarker-one\.txt\nout\.txt$/);
    expect(b.text(0)).toMatch(/^marker-two\.txt\nmarker-two\.txt\nout\.txt$/);
    expect(a.report?.patch.files.map((f) => f.path)).toEqual(["out.txt"]);
    expect(a.patch).toContain("+one");
    expect(b.patch).toContain("+two");
  });

  test(
    "D9",
    "sockets and FIFOs are skipped and listed; a workspace larger than the sandbox is a clear error",
    async () => {
      const ws = h.tmp("agent-ci-ws-");
      fs.writeFileSync(path.join(ws, "a.txt"), "a\n");
      execFileSync("mkfifo", [path.join(ws, "fifo")]);
      const server = net.createServer().listen(path.join(ws, "app.sock"));
      try {
        h.workspace({}, { dir: ws });
        const run = await h.cli({ workspace: ws, turns: [[bash("ls -A")]] });
        expect(run.report?.workspace.skipped.map((s) => s.path).sort()).toEqual(["app.sock", "fifo"]);
        expect(run.text(0)).toBe("a.txt");
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        h.workspace({}, { dir: ws }); // closing the server removed its socket file: the test's own change
      }
      const big = h.workspace({ "big.bin": Buffer.alloc(12 * 1024 * 1024, 1) });
      const tooBig = await h.cli({
        workspace: big,
        turns: [[bash("true")]],
        args: ["--workspace-size", "4m"],
      });
      expect(tooBig.exitCode).toBe(2);
      expect(tooBig.report?.error?.message).toMatch(/raise --workspace-size/);
    },
  );

  test(
    "D10",
    "a full host disk under --out: the container is removed, no partial patch, a non-zero exit that says why",
    async () => {
      const mount = path.join(h.tmp(), "tiny");
      fs.mkdirSync(mount);
      try {
        execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mount], { stdio: "pipe" });
      } catch (e) {
        // A failure, not a skip: a skipped row would read as covered. CI runs as root.
        throw new Error(
          `D10 mounts a 64 KiB tmpfs as the full disk and needs root: ${(e as Error).message}`,
          { cause: e },
        );
      }
      try {
        const ws = h.workspace({ "a.txt": "a\n" });
        const run = await h.cli({
          workspace: ws,
          mode: "bypassPermissions",
          format: "json",
          out: path.join(mount, "out"),
          record: "optional",
          turns: [[bash("head -c 300000 /dev/urandom | base64 > big.txt && echo made")]],
          timeoutMs: 60_000,
        });
        expect(run.exitCode).toBe(EXIT_CODES.output_error);
        expect(JSON.parse(run.stdout).error).toMatch(/the patch could not be written to .*ENOSPC/);
        // Atomic writes: no half-written patch or report that could pass for a whole one. The conversation
        // record is small and may fit where the patch did not: then it is whole.
        expect(fs.existsSync(path.join(mount, "out", "patch.diff"))).toBe(false);
        const left = fs.readdirSync(path.join(mount, "out")).filter((f) => f !== "events.jsonl");
        expect(left.filter((f) => f !== "conversation.jsonl")).toEqual([]);
        if (left.length)
          for (const line of fs
            .readFileSync(path.join(mount, "out", "conversation.jsonl"), "utf8")
            .trimEnd()
            .split("\n"))
            expect(() => JSON.parse(line)).not.toThrow();
      } finally {
        fs.rmSync(path.join(mount, "out"), { recursive: true, force: true });
        execFileSync("umount", [mount], { stdio: "pipe" });
      }
    },
  );

  test(
    "D11",
    "an engine that ignores PidsLimit and Memory is refused; --allow-weak-hardening runs and the report says so",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n" });
      const proxy = await startDockerProxy({
        rewriteCreate: (body) => {
          const hostConfig = { ...(body.HostConfig as Record<string, unknown>) };
          delete hostConfig.PidsLimit;
          delete hostConfig.Memory;
          delete hostConfig.MemorySwap;
          return { ...body, HostConfig: hostConfig };
        },
      });
      try {
        const refused = await h.cli({
          workspace: ws,
          turns: [[bash("true")]],
          env: { DOCKER_HOST: proxy.dockerHost },
        });
        expect(refused.exitCode).toBe(3);
        expect(refused.report?.error?.message).toMatch(
          /did not apply these sandbox settings: pids limit 512 \(got (0|null)\); memory limit \d+ \(got 0\)[\s\S]*--allow-weak-hardening/,
        );
        const weak = await h.cli({
          workspace: ws,
          turns: [[bash("echo ran")]],
          mode: "bypassPermissions",
          env: { DOCKER_HOST: proxy.dockerHost },
          args: ["--allow-weak-hardening"],
        });
        expect(weak.report?.exitReason).toBe("completed");
        expect(weak.text(0)).toBe("ran");
        expect(weak.report?.warnings).toContainEqual(
          expect.objectContaining({
            kind: "weak_hardening",
            severity: "critical",
            message: expect.stringMatching(/pids limit/),
          }),
        );
      } finally {
        await proxy.close();
      }
    },
  );

  test(
    "D12",
    "with LANG unset, LC_ALL=POSIX and another timezone on the host, the sandbox is UTF-8",
    async () => {
      const ws = h.workspace({ "ünïcödé.txt": "héllo wörld\n" });
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        env: { LANG: undefined, LC_ALL: "POSIX", LC_CTYPE: "C", TZ: "Pacific/Chatham" },
        turns: [[bash("locale charmap; echo $LANG; ls; printf 'ß→✓\\n' > 'naïve ☃.txt'; cat ünïcödé.txt")]],
      });
      expect(run.text(0)).toBe("UTF-8\nC.UTF-8\nünïcödé.txt\nhéllo wörld");
      expect(run.report?.patch.files.map((f) => f.path)).toEqual(["naïve ☃.txt"]);
      expect(run.patch).toContain("diff --git a/naïve ☃.txt b/naïve ☃.txt");
      expect(run.patch).toContain("+ß→✓");
      expect(os.platform()).toBe("linux");
    },
  );

  checkTable();
});
