// Next to Claude Code: the same one-call session — a prompt, one model turn that calls Read on a one-file
// repository, the tool's result sent back, a final answer — through the same local fake Messages API, run by
// `agent-ci run` (a container, the policy, the patch and the record) and by Claude Code's own `claude -p` (no
// sandbox at all), alternately, each spawned to its exit. Claude Code comes from npm
// (`@anthropic-ai/claude-code`), installed on demand into a cache folder outside the repository
// (AGENT_CI_BENCH_CACHE, default ~/.cache/agent-ci-bench); it is never a dependency of the package.
//
// Claude Code runs with a fresh home (no user settings, as on a fresh CI runner), with
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (no telemetry, no update check: the fake API is all it reaches),
// in acceptEdits mode with Read allowed (bypassPermissions is refused to root); agent-ci in its default mode.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  fake,
  startFakeAnthropic,
  type FakeAnthropic,
  type RecordedMessagesRequest,
} from "../test/support/fake-anthropic.js";
import { connectEngine } from "../src/sandbox/engine/engine.js";
import { oneCallRun, RunParts } from "./start.js";
import { CLI_NODE, paired, summarize, type Row } from "./stats.js";

/** The release the issue measured against; AGENT_CI_BENCH_CLAUDE_CODE picks another. */
export const CLAUDE_CODE_VERSION = process.env.AGENT_CI_BENCH_CLAUDE_CODE || "2.1.328";
/** agent-ci's one-call run at most this many times Claude Code's (the wall, medians). */
export const CLAUDE_CODE_RATIO_GOAL = 1.0;
export const CLAUDE_CODE_ROW = "a one-call session, process spawned to exit: `agent-ci run`";
const REPS = 5;
const WARMUP = 1;
const SECTION = "Next to Claude Code";
const PROMPT = "Read a.txt and say what it holds.";
/** The fake Messages API's key, assembled at run time. */
const BENCH_KEY = ["sk", "ant", "api03", "bench", String(process.pid)].join("-");

/** Claude Code's `claude` from npm, installed once into the cache folder; its path. */
function installClaudeCode(log: (line: string) => void): string {
  const cache = process.env.AGENT_CI_BENCH_CACHE || path.join(os.homedir(), ".cache", "agent-ci-bench");
  const dir = path.join(cache, `claude-code-${CLAUDE_CODE_VERSION}`);
  const bin = path.join(dir, "node_modules", ".bin", "claude");
  if (!fs.existsSync(bin)) {
    log(`Claude Code: installing @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} into ${dir}`);
    fs.mkdirSync(dir, { recursive: true });
    const npm = spawnSync(
      "npm",
      [
        "install",
        "--prefix",
        dir,
        "--no-save",
        "--no-package-lock",
        "--no-audit",
        "--no-fund",
        `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`,
      ],
      { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
    if (npm.status !== 0 || !fs.existsSync(bin))
      throw new Error(
        `installing @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} failed (exit ${npm.status}): ${(npm.stderr ?? "").slice(-1500)}`,
      );
  }
  const version = spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout?.trim() ?? "";
  if (!version.startsWith(CLAUDE_CODE_VERSION))
    throw new Error(`${bin} says ${JSON.stringify(version)}, not ${CLAUDE_CODE_VERSION}`);
  return bin;
}

/** A fake Messages API that plays the session for a client whose workspace is at `root`. */
function sessionApi(root: string): Promise<FakeAnthropic> {
  return startFakeAnthropic({
    apiKey: BENCH_KEY,
    // Claude Code sends betas and fields of its own the fake's checks do not know; both sides get the same.
    validate: false,
    handler: (request: RecordedMessagesRequest) => {
      const last = request.body.messages.at(-1);
      const answered =
        Array.isArray(last?.content) && last.content.some((block) => block.type === "tool_result");
      return answered
        ? fake.text("It holds one line.")
        : fake.toolUse("Read", { file_path: `${root}/a.txt` });
    },
  });
}

/** Runs a program to its end with `env` added; its stdout, or a rejection with its stderr. */
function runToEnd(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: "pipe" });
    child.stdin.end();
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve(stdout)
        : reject(new Error(`${path.basename(command)} exited ${code}: ${stderr.slice(-2000)}`)),
    );
  });
}

/**
 * The engine's own floor under any sandboxed run: an empty container of the run's image and runtime, no
 * network, running `true`, created, started, waited for and removed, `REPS` times (ms each).
 */
async function emptyContainers(image: string, runtime: string | undefined): Promise<number[]> {
  const docker = await connectEngine();
  const ms: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    const container = await docker.createContainer({
      Image: image,
      Entrypoint: ["true"],
      Cmd: [],
      HostConfig: { NetworkMode: "none", ...(runtime ? { Runtime: runtime } : {}) },
    });
    try {
      await container.start();
      await container.wait();
    } finally {
      await container.remove({ force: true });
    }
    ms.push(performance.now() - t0);
  }
  return ms;
}

/** The session went as scripted: two model requests, the second carrying the Read's result with the file's line. */
function checkSession(api: FakeAnthropic, from: number, who: string): void {
  const requests = api.messagesRequests().slice(from);
  const result = JSON.stringify(requests[1]?.body.messages.at(-1) ?? null);
  if (requests.length !== 2 || !result.includes("tool_result") || !result.includes("one line"))
    throw new Error(
      `${who}: the session did not go as scripted (${requests.length} model requests; last: ${result.slice(0, 500)})`,
    );
}

export async function benchClaudeCode(repoRoot: string, log: (line: string) => void): Promise<Row[]> {
  const claude = installClaudeCode(log);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-bench-claude-code-"));
  const home = path.join(dir, "home");
  fs.mkdirSync(home);
  const { workspace } = oneCallRun(dir);
  const [agentApi, claudeApi] = await Promise.all([sessionApi("/workspace"), sessionApi(workspace)]);
  try {
    log(`Claude Code ${CLAUDE_CODE_VERSION}: a one-call session × ${REPS}, alternately with agent-ci's`);
    const runs = new RunParts();
    let out = 0;
    const agentCi = async () => {
      const outDir = path.join(dir, `out-${out++}`);
      const from = agentApi.messagesRequests().length;
      const spawned = Date.now();
      await runToEnd(
        CLI_NODE,
        [path.join(repoRoot, "bin/agent-ci.js"), "run", "--workspace", workspace, "--prompt", PROMPT].concat([
          "--out",
          outDir,
          "--quiet",
        ]),
        workspace,
        { ANTHROPIC_API_KEY: BENCH_KEY, ANTHROPIC_BASE_URL: agentApi.url },
      );
      // The warm-up's run is not one of the samples, its parts neither.
      if (out > WARMUP) runs.add(outDir, spawned, Date.now());
      checkSession(agentApi, from, "agent-ci");
    };
    const claudeCode = async () => {
      const from = claudeApi.messagesRequests().length;
      const stdout = await runToEnd(
        claude,
        ["-p", PROMPT, "--output-format", "json", "--permission-mode", "acceptEdits"],
        workspace,
        {
          HOME: home,
          ANTHROPIC_API_KEY: BENCH_KEY,
          ANTHROPIC_BASE_URL: claudeApi.url,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        },
      );
      const result = JSON.parse(stdout) as { is_error?: boolean; num_turns?: number };
      if (result.is_error) throw new Error(`Claude Code's session failed: ${stdout.slice(0, 1000)}`);
      checkSession(claudeApi, from, "Claude Code");
    };
    const { a, b } = await paired(REPS, WARMUP, agentCi, claudeCode);
    const last = JSON.parse(fs.readFileSync(path.join(dir, `out-${out - 1}`, "report.json"), "utf8")) as {
      image: { name: string };
      hardening: { runtime?: string };
    };
    log(`the engine's floor: an empty container of ${last.image.name} × ${REPS}`);
    const floor = await emptyContainers(last.image.name, last.hardening.runtime);
    return [
      {
        section: SECTION,
        measurement: `${CLAUDE_CODE_ROW} vs Claude Code ${CLAUDE_CODE_VERSION}'s \`claude -p\` (no sandbox)`,
        unit: "ms",
        agentCi: summarize(a),
        native: summarize(b),
        note: `goal ≤ ${CLAUDE_CODE_RATIO_GOAL.toFixed(1)}× Claude Code's; a fake Messages API each on loopback playing the same two turns; agent-ci's parts below (report.json)`,
      },
      ...runs.rows(SECTION),
      {
        section: SECTION,
        measurement: `· the engine's floor: an empty container of the same image (${last.hardening.runtime ?? "the engine's default runtime"}, no network) running \`true\`, created to removed`,
        unit: "ms",
        agentCi: summarize(floor),
        native: null,
        note: "what any run in a fresh container pays before its own work",
      },
    ];
  } finally {
    await Promise.all([agentApi.close(), claudeApi.close()]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
