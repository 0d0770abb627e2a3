// The `agent-ci` command as users run it (the bundle in dist/, built by `npm test`): help, errors that
// say what to do, exit codes, and SIGINT/SIGTERM mid-run leaving a complete record and no container.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { STREAM_BELOW_BYTES } from "../../src/sandbox/copy/copy-in.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { tempOut } from "../support/run-io.js";

const CLI = path.resolve("bin/agent-ci.js");
const EXAMPLE = path.resolve("examples/buggy-calc");

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync("node", [CLI, ...args], {
    encoding: "utf8",
    env: { ...process.env, ANTHROPIC_API_KEY: "", ...env },
    timeout: 120_000,
  });
}

/** A script that writes kept.txt, then runs `command` (default: a long sleep). */
function sleepScript(command = "sleep 120"): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-script-")), "s.json");
  fs.writeFileSync(
    file,
    JSON.stringify({
      turns: [
        [{ name: "Write", input: { file_path: "/workspace/kept.txt", content: "kept\n" } }],
        [{ name: "Bash", input: { command } }],
      ],
    }),
  );
  return file;
}

/** Runs the CLI; resolves once `ready` matches its output (stdout + stderr), with a way to wait for its exit. */
async function startCli(args: string[], ready: RegExp, env: NodeJS.ProcessEnv = {}) {
  const child = spawn("node", [CLI, ...args], {
    env: { ...process.env, ANTHROPIC_API_KEY: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      if (ready.test(output)) resolve();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    void exited.then(() => reject(new Error(`exited before ${String(ready)}: ${output}`)));
  });
  return { child, exited, output: () => output };
}

async function containersOf(runId: string) {
  return new Docker().listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } });
}

describe("agent-ci CLI", () => {
  it("prints help and its version", () => {
    const help = cli(["run", "--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("--script <file>");
    expect(help.stdout).toContain("Exit codes:");
    // A pipe or a log gets 80 columns, the text after the options included.
    for (const args of [
      ["run"],
      ["policy", "check"],
      ["policy", "test"],
      ["publish"],
      ["report", "render"],
    ]) {
      const text = cli([...args, "--help"]).stdout;
      expect(
        text.split("\n").filter((line) => line.length > 80),
        args.join(" "),
      ).toEqual([]);
    }
    expect(cli(["--version"]).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("explains a missing task or key and exits 2", () => {
    const noTask = cli(["run", "--workspace", EXAMPLE]);
    expect(noTask.status).toBe(2);
    expect(noTask.stderr).toMatch(
      /ANTHROPIC_API_KEY is not set: set it to run a model .*ANTHROPIC_AUTH_TOKEN.*, or use --script/,
    );
    const badMode = cli(["run", "--mode", "yolo"]);
    expect(badMode.status).toBe(2);
    expect(badMode.stderr).toMatch(/Allowed choices are default, plan, acceptEdits, bypassPermissions/);
  });

  it("a usage error is one line saying what to do, exit 2, without the help text", () => {
    const usage = [
      ["run", "--bogus"],
      ["run", "--mode", "yolo"],
      ["run", "--max-turns", "abc"],
      ["policy", "test"],
      ["report", "render", "nope.json"],
    ];
    for (const args of usage) {
      const r = cli(args);
      const what = args.join(" ");
      expect(r.status, what).toBe(2);
      expect(r.stderr.trim().split("\n"), what).toHaveLength(1);
      expect(r.stderr, what).toMatch(/^agent-ci: .*(--help|report\.json)/);
      expect(r.stdout, what).toBe("");
    }
  });

  it("a config error, found before any container, exits 2 in one line and writes no output folder", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-config-"));
    const malformed = path.join(dir, "settings.json");
    fs.writeFileSync(malformed, "{ not json");
    const script = path.join(EXAMPLE, "fix.script.json");
    const cases = [
      ["--mode", "nope"],
      ["--settings", malformed],
      ["--mcp-config", malformed],
      ["--workspace", path.join(dir, "missing")],
      ["--prompt-file", path.join(dir, "missing.md")],
    ];
    for (const [i, extra] of cases.entries()) {
      const out = path.join(dir, `out-${i}`, "run");
      const r = cli(["run", "--workspace", EXAMPLE, "--script", script, "--out", out, ...extra, "--quiet"]);
      const what = extra.join(" ");
      expect(r.status, `${what}: ${r.stderr}`).toBe(2);
      expect(r.stderr.trim().split("\n"), what).toHaveLength(1);
      expect(r.stderr, what).toMatch(/^agent-ci: /);
      expect(r.stdout, what).toBe("");
      expect(fs.existsSync(path.join(dir, `out-${i}`)), what).toBe(false);
    }
  });

  it("exits 1 when the record cannot be written: --out is a file", () => {
    const file = path.join(tempOut(), "a-file");
    fs.writeFileSync(file, "mine\n");
    const script = path.join(EXAMPLE, "fix.script.json");
    const r = cli(["run", "--workspace", EXAMPLE, "--script", script, "--out", file]);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/^agent-ci: --out .* is a file/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(fs.readFileSync(file, "utf8")).toBe("mine\n");
  });

  it("prints a line per tool call to a piped stderr (a CI log), and none with --quiet", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-progress-"));
    const script = path.join(EXAMPLE, "fix.script.json");
    const run = (extra: string[], dir: string) =>
      cli([
        "run",
        "--workspace",
        EXAMPLE,
        "--script",
        script,
        "--mode",
        "acceptEdits",
        "--out",
        dir,
        ...extra,
      ]);
    const piped = run([], path.join(out, "piped"));
    expect(piped.status, piped.stderr).toBe(0);
    const report = parseReport(fs.readFileSync(path.join(out, "piped", "report.json"), "utf8"));
    const callLines = piped.stderr.split("\n").filter((l) => /^[✓✗] /.test(l));
    expect(callLines.map((l) => l.split(" ")[1])).toEqual(report.toolCalls.map((c) => c.tool));
    expect(piped.stderr).toMatch(/sandbox ready in \d+ ms/);
    const quiet = run(["--quiet"], path.join(out, "quiet"));
    expect(quiet.status, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe("");
    expect(quiet.stdout).toContain("(exit reason: completed)");
  });

  it("--progress json: one JSON object per line on a piped stderr, one per phase and per tool call", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-progress-json-"));
    const args = ["run", "--workspace", EXAMPLE, "--script", path.join(EXAMPLE, "fix.script.json")];
    const r = cli([...args, "--mode", "acceptEdits", "--out", out, "--progress", "json"]);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stderr
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    const calls = lines.filter((l) => l.type === "tool");
    expect(calls.map((l) => [l.id, l.tool, l.decision, l.error])).toEqual(
      report.toolCalls.map((c) => [c.id, c.tool, c.decision?.behavior, c.isError]),
    );
    for (const call of calls) expect(call.ms).toEqual(expect.any(Number));
    expect(calls.some((l) => l.decision === "deny")).toBe(true);
    expect(lines.filter((l) => l.type === "phase")).toEqual([
      { type: "phase", phase: "sandbox_ready", run_id: report.runId, at_ms: expect.any(Number) },
    ]);
    expect(lines.at(-1)).toMatchObject({ type: "result", exit_reason: "completed", exit_code: 0 });
    expect(new Set(lines.map((l) => l.type))).toEqual(new Set(["log", "phase", "tool", "result"]));
    // stdout keeps its closing summary; --quiet still silences everything on stderr.
    expect(r.stdout).toContain("(exit reason: completed)");
    const quiet = cli([...args, "--out", path.join(out, "quiet"), "--progress", "json", "--quiet"]);
    expect(quiet.status, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe("");
  });

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`on ${signal} mid-run writes the patch and a complete record and leaves no container`, async () => {
      const out = tempOut();
      const args = [
        "run",
        "--workspace",
        EXAMPLE,
        "--script",
        sleepScript(),
        "--mode",
        "bypassPermissions",
        "--out",
        out,
        "--output-format",
        "stream-json",
      ];
      const child = spawn("node", [CLI, ...args], {
        env: { ...process.env, ANTHROPIC_API_KEY: "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      // Signalled once the sleep's turn is streamed (turn 0's Write result is in by then).
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", () => {
          if (/"type":"assistant".*"name":"Bash"/.test(stdout)) resolve();
        });
        child.on("exit", () => reject(new Error(`exited early: ${stderr}`)));
      });
      child.kill(signal);
      const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
      expect(code).toBe(130);
      const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
      expect(report.exitReason).toBe("cancelled");
      expect(report.patch.files.map((f) => f.path)).toEqual(["kept.txt"]);
      const left = await new Docker().listContainers({
        all: true,
        filters: { label: [`${LABEL_RUN}=${report.runId}`] },
      });
      expect(left).toEqual([]);
    });
  }

  it("ends a run whose event loop is blocked on SIGTERM: the watchdog hears the signal, writes the record and removes the container", async () => {
    const out = tempOut();
    const args = [
      "run",
      "--workspace",
      EXAMPLE,
      "--script",
      sleepScript(),
      "--mode",
      "bypassPermissions",
      "--out",
      out,
    ];
    // The hook blocks the main thread for good right after it logs "sandbox ready": its signal handler never runs.
    const run = await startCli(args, /sandbox ready/, { AGENT_CI_TEST_BLOCK_EVENT_LOOP: "1" });
    run.child.kill("SIGTERM");
    const code = await run.exited;
    expect(code, run.output()).toBe(130);
    expect(run.output()).toContain(
      "the run received SIGTERM while the event loop did not answer; the watchdog ended the run",
    );
    expect(fs.readFileSync(path.join(out, "patch.diff"), "utf8")).toBe("");
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    expect(report.exitReason).toBe("cancelled");
    expect(report.error?.kind).toBe("Watchdog");
    for (const name of ["report.md", "report.html"]) expect(fs.existsSync(path.join(out, name))).toBe(true);
    const events = fs
      .readFileSync(path.join(out, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; exit_reason?: string });
    expect(events.at(-1)).toMatchObject({ type: "result", exit_reason: "cancelled" });
    expect(await containersOf(report.runId)).toEqual([]);
  });

  it("ends promptly on SIGINT while a Bash call prints 200 MB on one line, with the record written and no container", async () => {
    const out = tempOut();
    const script = sleepScript("head -c 200000000 /dev/zero | tr '\\0' x; sleep 120");
    const args = [
      "run",
      "--workspace",
      EXAMPLE,
      "--script",
      script,
      "--mode",
      "bypassPermissions",
      "--out",
      out,
      "--output-format",
      "stream-json",
    ];
    // Signalled once the 200 MB call's turn is streamed: the call is under way.
    const run = await startCli(args, /"type":"assistant".*"name":"Bash"/);
    run.child.kill("SIGINT");
    const code = await run.exited;
    expect(code, run.output()).toBe(130);
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    expect(report.exitReason).toBe("cancelled");
    // The signal came while the call ran: it is recorded as interrupted, the work before it kept.
    expect(report.toolCalls.at(-1)).toMatchObject({ tool: "Bash", errorKind: "interrupted" });
    expect(report.patch.files.map((f) => f.path)).toEqual(["kept.txt"]);
    expect(fs.readFileSync(path.join(out, "patch.diff"), "utf8")).toContain("+kept");
    expect(await containersOf(report.runId)).toEqual([]);
  });

  // A remote engine (or one in a VM) does not see this host's files: the copier container (tried for a
  // workspace this large) finds that out and the workspace is streamed instead. Made so here with a private
  // mount namespace: the workspace and the temporary directory are a tmpfs that only the CLI's process
  // sees, not the engine.
  it("streams the workspace in when the engine does not see this host's files", async () => {
    const hidden = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-hidden-"));
    const out = tempOut();
    const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-script-")), "s.json");
    fs.writeFileSync(
      script,
      JSON.stringify({ turns: [[{ name: "Bash", input: { command: "cat package.json > copied.json" } }]] }),
    );
    const shell =
      'mount -t tmpfs tmpfs "$1" && cp -r "$2" "$1/ws" && head -c "$6" /dev/zero > "$1/ws/large.bin" && TMPDIR="$1" exec node "$3" run --workspace "$1/ws" --script "$4" --mode bypassPermissions --out "$5"';
    const res = spawnSync(
      "unshare",
      [
        "--mount",
        "--propagation",
        "private",
        "bash",
        "-c",
        shell,
        "hide",
        hidden,
        EXAMPLE,
        CLI,
        script,
        out,
        String(STREAM_BELOW_BYTES),
      ],
      {
        encoding: "utf8",
        env: { ...process.env, ANTHROPIC_API_KEY: "" },
        timeout: 120_000,
      },
    );
    expect(res.status, res.stderr).toBe(0);
    expect(res.stderr).toContain("the engine does not see this host's files");
    expect(fs.readdirSync(hidden)).toEqual([]); // the engine saw an empty directory: the tmpfs was the CLI's alone
    const patch = fs.readFileSync(path.join(out, "patch.diff"), "utf8");
    expect(patch).toContain("+++ b/copied.json");
    expect(patch).toContain(`+${fs.readFileSync(path.join(EXAMPLE, "package.json"), "utf8").split("\n")[0]}`);
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    expect(await containersOf(report.runId)).toEqual([]);
  });

  it("ends a run whose event loop is blocked with the timeout code: the watchdog writes the record and removes the container", async () => {
    const out = tempOut();
    const args = [
      "run",
      "--workspace",
      EXAMPLE,
      "--script",
      sleepScript(),
      "--mode",
      "bypassPermissions",
      "--out",
      out,
      "--timeout",
      "5",
    ];
    // The test-only hook blocks the main thread for good once the sandbox is up: neither the run's own timer
    // nor anything else on that thread can end the run.
    const child = spawn("node", [CLI, ...args], {
      env: { ...process.env, ANTHROPIC_API_KEY: "", AGENT_CI_TEST_BLOCK_EVENT_LOOP: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    expect(code, stderr).toBe(5);
    expect(stderr).toContain("the watchdog ended the run");
    expect(fs.existsSync(path.join(out, "patch.diff"))).toBe(true);
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    expect(report.exitReason).toBe("timeout");
    expect(report.error?.kind).toBe("Watchdog");
    for (const name of ["report.md", "report.html"]) expect(fs.existsSync(path.join(out, name))).toBe(true);
    const left = await new Docker().listContainers({
      all: true,
      filters: { label: [`${LABEL_RUN}=${report.runId}`] },
    });
    expect(left).toEqual([]);
  });
});
