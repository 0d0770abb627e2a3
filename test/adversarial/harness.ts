// The shared invariant harness of the adversarial suite (its checklist's results: docs/RELIABILITY.md).
// Every test file calls `useHarness()` once; it registers a beforeEach that plants a host sentinel directory and fresh fake
// secrets, and an afterEach that checks, for every run the test made:
//
//   - the sentinel directory outside the workspace is byte-identical, and so is the host workspace;
//   - no container or volume labelled with the run's id (or the CLI process's pid) remains;
//   - report.json validates (`parseReport`), events.jsonl ends with a `result` event that agrees with it,
//     every tool_use id in events.jsonl has exactly one tool_result, and the report holds one call per id;
//   - the exit code is the one documented for the report's exit reason;
//   - no planted fake secret appears in the report, patch, events, saved tool outputs, stdout or stderr,
//     nor in anything else the test registered (what the fake Messages API was sent, a fake GitHub log);
//   - in plan mode the workspace tree is unchanged (empty patch).
//
// The counts go into the test's `meta.agentCi` (escapes, secrets leaked, containers leaked), which the JSON
// reporter keeps and scripts/reliability-report.mjs adds up. A broken invariant fails the test.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterEach, beforeEach, vi } from "vitest";
import { parseReport, type RunReport, type ToolCall } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { EXIT_CODES, runAgent, type RunOutcome } from "../../src/runner/run.js";
import { LABEL_PID, LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { writeFiles, type FileSpec } from "../support/workspace.js";
import { quietIo } from "../support/run-io.js";

export const CLI = path.resolve("bin/agent-ci.js");
export const docker = new Docker();

declare module "vitest" {
  interface TaskMeta {
    agentCi?: InvariantCounts;
  }
}

export interface InvariantCounts {
  runs: number;
  toolCalls: number;
  escapes: number;
  secretsLeaked: number;
  containersLeaked: number;
  problems: string[];
}

// ---------------------------------------------------------------------------------------------------------
// Fake secrets: shaped like real tokens, random per test, assembled at run time so that no token-shaped
// literal is committed.

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function randomFrom(alphabet: string, length: number): string {
  const bytes = crypto.randomBytes(length);
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[bytes[i]! % alphabet.length];
  return out;
}

const b64url = (value: string) => Buffer.from(value).toString("base64url");

export interface PlantedSecrets {
  /** The Anthropic key agent-ci holds (CLI env / RunConfig.apiKey). */
  anthropicKey: string;
  /** Environment variables of the agent-ci process: known secrets and ones agent-ci does not know about. */
  env: Record<string, string>;
  /** A private key and a credentials file in the host sentinel directory. */
  sshKey: string;
  gitCredential: string;
  /** Every value that must never appear in an output. */
  all(): string[];
}

export function plantSecrets(): PlantedSecrets {
  const jwt = (sub: string) =>
    [
      b64url('{"alg":"RS256","typ":"JWT"}'),
      b64url(`{"sub":"${sub}","n":"${randomFrom(ALNUM, 12)}"}`),
      randomFrom(ALNUM + "-_", 86),
    ].join(".");
  const anthropicKey = ["sk", "ant", "api03", randomFrom(ALNUM + "-_", 93) + "AA"].join("-");
  const env = {
    ANTHROPIC_API_KEY: anthropicKey,
    GITHUB_TOKEN: ["ghs", randomFrom(ALNUM, 36)].join("_"),
    GH_TOKEN: ["ghp", randomFrom(ALNUM, 36)].join("_"),
    ACTIONS_RUNTIME_TOKEN: jwt("runtime"),
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: jwt("oidc"),
    ACTIONS_ID_TOKEN_REQUEST_URL: `https://pipelines.example.invalid/oidc?token=${randomFrom(ALNUM, 40)}`,
    // Not known to agent-ci as secrets: they must simply never reach the container.
    AWS_ACCESS_KEY_ID: "AK" + "IA" + randomFrom("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
    AWS_SECRET_ACCESS_KEY: randomFrom(ALNUM + "/+", 40),
    NPM_TOKEN: ["npm", randomFrom(ALNUM, 36)].join("_"),
    DEPLOY_PASSWORD: `pw-${randomFrom(ALNUM, 28)}`,
  };
  const sshKey = randomFrom(ALNUM + "+/", 64);
  const gitCredential = ["ghp", randomFrom(ALNUM, 36)].join("_");
  return {
    anthropicKey,
    env,
    sshKey,
    gitCredential,
    all: () => [...Object.values(env), sshKey, gitCredential],
  };
}

// ---------------------------------------------------------------------------------------------------------
// Host trees

/** sha256 over a host tree: names, types, modes, contents, link targets and mtimes; symlinks not followed. */
export function hashTree(root: string): string {
  const hash = crypto.createHash("sha256");
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const abs = path.join(dir, name);
      const st = fs.lstatSync(abs);
      hash.update(`${path.relative(root, abs)}\0${st.mode}\0`);
      if (st.isSymbolicLink()) hash.update(`link:${fs.readlinkSync(abs)}\0`);
      else if (st.isDirectory()) walk(abs);
      else if (st.isFile()) hash.update(fs.readFileSync(abs)).update(`\0${st.mtimeMs}\0`);
    }
  };
  walk(root);
  return hash.digest("hex");
}

function tmpDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

// ---------------------------------------------------------------------------------------------------------
// Runs

export type Mode = "default" | "plan" | "acceptEdits" | "bypassPermissions";
export type ScriptCall = { name: string; input: Record<string, unknown>; id?: string };
export type ScriptTurn =
  | ScriptCall[]
  | {
      mutate?: Array<{ op: "write" | "delete"; path: string; content?: string }>;
      tools?: ScriptCall[];
      text?: string;
    };

/** What the run's record must look like: written (default), maybe written, or not at all. */
export type RecordExpectation = "required" | "optional" | "none";

export interface RunSpec {
  workspace: string;
  /** A script written to a temp file and passed as --script. */
  turns?: ScriptTurn[];
  final?: string;
  /** Or a script file as is (any content: bad scripts are inputs too). */
  script?: string;
  prompt?: string;
  mode?: Mode;
  allow?: string[];
  deny?: string[];
  /** More CLI flags. */
  args?: string[];
  /** Environment for the CLI (added to the planted secrets; `undefined` removes a variable). */
  env?: Record<string, string | undefined>;
  format?: "stream-json" | "json" | "text";
  record?: RecordExpectation;
  /** The output folder (default: a fresh temp folder). */
  out?: string;
  /** Kill the CLI (SIGKILL) and fail the test when it has not ended by then (default 80 s, under the 90 s test timeout). */
  timeoutMs?: number;
}

export interface RunResult {
  runId: string | undefined;
  outDir: string;
  mode: Mode;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  report: RunReport | undefined;
  events: StreamEventLike[];
  /** patch.diff as text (for assertions); `patchBytes` is the file exactly (apply that). */
  patch: string;
  patchBytes: Buffer;
  /** The report's calls in order. */
  calls: ToolCall[];
  /** The full tool_result text sent to the model for each call, by tool_use id (from events.jsonl). */
  results: Map<string, ToolResultLike>;
  /** Result text of the n-th call of the run. */
  text(index: number): string;
  /** The n-th call. */
  call(index: number): ToolCall;
}

export interface ToolResultLike {
  text: string;
  isError: boolean;
}

export interface StreamEventLike {
  type: string;
  subtype?: string;
  session_id?: string;
  exit_reason?: string;
  message?: { content?: unknown };
}

interface TrackedRun {
  label: string;
  outDir: string;
  workspace: string;
  workspaceHash: string;
  mode: Mode;
  record: RecordExpectation;
  pid?: number;
  runId?: string;
  exitCode?: number | null;
  /** The engine the run used, when not the default one (a proxy, a second daemon). */
  dockerHost?: string;
  output: () => string[];
}

export interface CliHandle {
  child: ChildProcess;
  outDir: string;
  stdout(): string;
  stderr(): string;
  /** Resolves when stdout+stderr match (or rejects when the CLI ends first, or after timeoutMs). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** The run id, as soon as the CLI has said it. */
  runId(): string | undefined;
  done: Promise<RunResult>;
}

export interface AgentSpec extends Omit<RunSpec, "args" | "env" | "format" | "timeoutMs"> {
  config?: Partial<RunConfigInput>;
  cancel?: AbortSignal;
}

export interface Harness {
  /** This test's planted secrets and sentinel directory. */
  readonly secrets: PlantedSecrets;
  readonly sentinel: string;
  /** A host workspace made of `files`, optionally a git repository; watched for changes. */
  workspace(files: Record<string, FileSpec>, options?: { git?: boolean; dir?: string }): string;
  /** Runs the CLI to its end. */
  cli(spec: RunSpec): Promise<RunResult>;
  /** Starts the CLI and hands back control (signals, outside faults). */
  startCli(spec: RunSpec): CliHandle;
  /** runAgent in this process (the fake Messages API), with the planted secrets in its environment. */
  agent(spec: AgentSpec): Promise<RunResult & { outcome: RunOutcome }>;
  /** More text that must hold no planted secret (what the fake API was sent, a fake GitHub log). */
  scanAlso(label: string, text: () => string): void;
  /** A temp directory removed after a passing test. */
  tmp(prefix?: string): string;
}

interface TestState {
  secrets: PlantedSecrets;
  sentinel: string;
  sentinelHash: string;
  runs: TrackedRun[];
  workspaces: Map<string, string>;
  extraScans: Array<{ label: string; text: () => string }>;
  temps: string[];
  children: ChildProcess[];
}

function makeSentinel(secrets: PlantedSecrets): string {
  const dir = tmpDir("agent-ci-sentinel-");
  const kind = ["OPENSSH", "PRIVATE", "KEY"].join(" ");
  writeFiles(dir, {
    ".ssh/id_ed25519": {
      content: `-----BEGIN ${kind}-----\n${secrets.sshKey}\n-----END ${kind}-----\n`,
      mode: 0o600,
    },
    ".git-credentials": `https://x-access-token:${secrets.gitCredential}@github.com\n`,
    "notes.txt": "host data outside every workspace\n",
    "nested/deeper/file.bin": Buffer.from([0, 1, 2, 3, 255]),
    "link-to-notes": { symlink: "notes.txt" },
  });
  return dir;
}

function writeScript(dir: string, turns: ScriptTurn[], final?: string): string {
  const file = path.join(dir, "script.json");
  fs.writeFileSync(file, JSON.stringify({ turns, final }));
  return file;
}

function cliArgs(spec: RunSpec, outDir: string, scriptDir: string): string[] {
  const args = [
    "run",
    "--workspace",
    spec.workspace,
    "--out",
    outDir,
    "--output-format",
    spec.format ?? "stream-json",
  ];
  if (spec.turns) args.push("--script", writeScript(scriptDir, spec.turns, spec.final));
  else if (spec.script) args.push("--script", spec.script);
  if (spec.prompt !== undefined) args.push("--prompt", spec.prompt);
  if (spec.mode) args.push("--mode", spec.mode);
  for (const rule of spec.allow ?? []) args.push("--allow", rule);
  for (const rule of spec.deny ?? []) args.push("--deny", rule);
  return [...args, ...(spec.args ?? [])];
}

function readEvents(outDir: string): StreamEventLike[] {
  const file = path.join(outDir, "events.jsonl");
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as StreamEventLike);
}

type Block = {
  type?: string;
  id?: string;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
  text?: string;
};

function blocksOf(event: StreamEventLike): Block[] {
  const content = event.message?.content;
  return Array.isArray(content) ? (content as Block[]) : [];
}

function blockText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return (content as Block[]).map((b) => (b.type === "text" ? (b.text ?? "") : `[${b.type}]`)).join("\n");
  return "";
}

function collectResult(
  outDir: string,
  runId: string | undefined,
  exitCode: number | null,
  signal: NodeJS.Signals | null,
  stdout: string,
  stderr: string,
  mode: Mode,
): RunResult {
  const reportFile = path.join(outDir, "report.json");
  let report: RunReport | undefined;
  if (fs.existsSync(reportFile)) {
    try {
      report = parseReport(fs.readFileSync(reportFile, "utf8"));
    } catch {
      report = undefined; // the afterEach names the schema problem
    }
  }
  const events = readEvents(outDir);
  const results = new Map<string, ToolResultLike>();
  for (const event of events) {
    if (event.type !== "user") continue;
    for (const block of blocksOf(event)) {
      if (block.type === "tool_result" && block.tool_use_id)
        results.set(block.tool_use_id, { text: blockText(block.content), isError: Boolean(block.is_error) });
    }
  }
  const patchFile = path.join(outDir, "patch.diff");
  const calls = report?.toolCalls ?? [];
  return {
    runId: runId ?? report?.runId ?? events.find((e) => e.session_id)?.session_id,
    outDir,
    mode,
    exitCode,
    signal,
    stdout,
    stderr,
    report,
    events,
    patch: fs.existsSync(patchFile) ? fs.readFileSync(patchFile, "utf8") : "",
    patchBytes: fs.existsSync(patchFile) ? fs.readFileSync(patchFile) : Buffer.alloc(0),
    calls,
    results,
    text: (index) => {
      const call = calls[index];
      if (!call) throw new Error(`the run has no call #${index} (it made ${calls.length})`);
      return results.get(call.id)?.text ?? call.resultPreview;
    },
    call: (index) => {
      const call = calls[index];
      if (!call) throw new Error(`the run has no call #${index} (it made ${calls.length})`);
      return call;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// The invariants

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(abs));
    else if (entry.isFile()) out.push(abs);
  }
  return out;
}

/** Engines a run may have left something on: the default one, and its own when it used another. */
function enginesOf(run: TrackedRun): Docker[] {
  const engines = [docker];
  const host = run.dockerHost;
  if (host?.startsWith("unix://")) {
    const socketPath = host.slice("unix://".length);
    if (fs.existsSync(socketPath) && socketPath !== "/var/run/docker.sock")
      engines.push(new Docker({ socketPath }));
  }
  return engines;
}

async function leftovers(run: TrackedRun): Promise<string[]> {
  const found: string[] = [];
  for (const engine of enginesOf(run)) {
    try {
      found.push(...(await leftoversOn(engine, run)));
    } catch (e) {
      if (engine === docker) throw e;
      // The run's own engine is gone (a proxy closed, a daemon stopped): what it held went with it.
    }
  }
  return found;
}

async function leftoversOn(docker: Docker, run: TrackedRun): Promise<string[]> {
  const found: string[] = [];
  const filters = [
    run.runId ? `${LABEL_RUN}=${run.runId}` : undefined,
    run.pid ? `${LABEL_PID}=${run.pid}` : undefined,
  ].filter((f): f is string => Boolean(f));
  for (const label of filters) {
    for (const c of await docker.listContainers({ all: true, filters: { label: [label] } })) {
      found.push(`container ${c.Id.slice(0, 12)} (${label}, ${c.State})`);
      await docker
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .catch(() => {});
    }
    const volumes = (await docker.listVolumes({ filters: { label: [label] } })).Volumes ?? [];
    for (const v of volumes) {
      found.push(`volume ${v.Name} (${label})`);
      await docker
        .getVolume(v.Name)
        .remove({ force: true })
        .catch(() => {});
    }
  }
  return [...new Set(found)];
}

function checkRecord(run: TrackedRun, problems: string[]): { calls: number } {
  const where = `${run.label} (${run.outDir})`;
  const reportFile = path.join(run.outDir, "report.json");
  if (!fs.existsSync(reportFile)) {
    if (run.record === "required") problems.push(`${where}: no report.json was written`);
    return { calls: 0 };
  }
  if (run.record === "none") {
    problems.push(`${where}: a report.json was written where none was expected`);
    return { calls: 0 };
  }
  let report: RunReport;
  try {
    report = parseReport(fs.readFileSync(reportFile, "utf8"));
  } catch (e) {
    problems.push(`${where}: report.json does not validate: ${(e as Error).message}`);
    return { calls: 0 };
  }
  if (run.runId && report.runId !== run.runId)
    problems.push(`${where}: report.json is for run ${report.runId}, not ${run.runId}`);
  if (typeof run.exitCode === "number") {
    let expected =
      report.exitReason === "completed" && report.outcome === "verify_failed"
        ? EXIT_CODES.verify_failed
        : EXIT_CODES[report.exitReason];
    if (expected === 0 && report.warnings.some((w) => w.kind === "output_write"))
      expected = EXIT_CODES.output_error;
    if (run.exitCode !== expected)
      problems.push(
        `${where}: exit code ${run.exitCode}, but exit reason ${report.exitReason} means ${expected}`,
      );
  }
  let events: StreamEventLike[];
  try {
    events = readEvents(run.outDir);
  } catch (e) {
    problems.push(`${where}: events.jsonl is not JSON lines: ${(e as Error).message}`);
    return { calls: report.toolCalls.length };
  }
  const last = events.at(-1);
  if (last?.type !== "result") problems.push(`${where}: events.jsonl does not end with a result event`);
  else if (last.exit_reason !== report.exitReason)
    problems.push(
      `${where}: the result event says ${last.exit_reason}, report.json says ${report.exitReason}`,
    );
  const uses = new Set<string>();
  const results = new Map<string, number>();
  for (const event of events) {
    for (const block of blocksOf(event)) {
      if (event.type === "assistant" && block.type === "tool_use" && block.id) uses.add(block.id);
      if (event.type === "user" && block.type === "tool_result" && block.tool_use_id)
        results.set(block.tool_use_id, (results.get(block.tool_use_id) ?? 0) + 1);
    }
  }
  for (const id of uses) {
    const n = results.get(id) ?? 0;
    if (n !== 1) problems.push(`${where}: tool_use ${id} has ${n} tool_result(s) in events.jsonl`);
  }
  for (const id of results.keys())
    if (!uses.has(id)) problems.push(`${where}: tool_result for unknown tool_use ${id}`);
  const recorded = report.toolCalls.map((c) => c.id);
  if (new Set(recorded).size !== recorded.length)
    problems.push(`${where}: report.json records a tool_use id twice`);
  for (const id of uses)
    if (!recorded.includes(id)) problems.push(`${where}: tool_use ${id} is missing from report.json`);
  if (run.mode === "plan" && !report.patch.empty)
    problems.push(
      `${where}: plan mode changed the workspace tree: ${report.patch.files.map((f) => f.path).join(", ")}`,
    );
  return { calls: report.toolCalls.length };
}

function scanSecrets(state: TestState, problems: string[]): number {
  const secrets = state.secrets.all();
  const texts: Array<{ label: string; text: string }> = [];
  for (const run of state.runs) {
    for (const file of filesUnder(run.outDir))
      texts.push({
        label: `${run.label}: ${path.relative(run.outDir, file)}`,
        text: fs.readFileSync(file, "latin1"),
      });
    run
      .output()
      .forEach((text, i) => texts.push({ label: `${run.label}: ${i === 0 ? "stdout" : "stderr"}`, text }));
  }
  for (const extra of state.extraScans) texts.push({ label: extra.label, text: extra.text() });
  let leaked = 0;
  for (const { label, text } of texts) {
    for (const secret of secrets) {
      if (!text.includes(secret)) continue;
      leaked += 1;
      problems.push(`secret leaked into ${label}: ${secret.slice(0, 6)}…`);
    }
  }
  return leaked;
}

// ---------------------------------------------------------------------------------------------------------

export function useHarness(): Harness {
  let state: TestState | undefined;
  const current = (): TestState => {
    if (!state) throw new Error("the adversarial harness is used outside a test");
    return state;
  };

  beforeEach(() => {
    const secrets = plantSecrets();
    const sentinel = makeSentinel(secrets);
    state = {
      secrets,
      sentinel,
      sentinelHash: hashTree(sentinel),
      runs: [],
      workspaces: new Map(),
      extraScans: [],
      temps: [],
      children: [],
    };
  });

  afterEach(async (context) => {
    const s = current();
    state = undefined;
    const problems: string[] = [];
    for (const child of s.children) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      // A test that failed early: stop the CLI the way a user would, so that it still cleans up.
      problems.push(`a CLI process (pid ${child.pid}) was still running at the end of the test`);
      const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      await closed;
      clearTimeout(timer);
    }
    const counts: InvariantCounts = {
      runs: s.runs.length,
      toolCalls: 0,
      escapes: 0,
      secretsLeaked: 0,
      containersLeaked: 0,
      problems,
    };
    if (hashTree(s.sentinel) !== s.sentinelHash) {
      counts.escapes += 1;
      problems.push(`the host sentinel directory ${s.sentinel} changed`);
    }
    for (const [dir, hash] of s.workspaces) {
      if (fs.existsSync(dir) && hashTree(dir) === hash) continue;
      counts.escapes += 1;
      problems.push(`the host workspace ${dir} changed`);
    }
    for (const run of s.runs) {
      const left = await leftovers(run);
      if (left.length) {
        counts.containersLeaked += left.length;
        problems.push(`${run.label}: left behind ${left.join(", ")}`);
      }
      counts.toolCalls += checkRecord(run, problems).calls;
    }
    counts.secretsLeaked = scanSecrets(s, problems);
    context.task.meta.agentCi = counts;
    if (problems.length) throw new Error(`invariants broken:\n  - ${problems.join("\n  - ")}`);
    if (context.task.result?.state !== "fail") {
      for (const dir of [s.sentinel, ...s.workspaces.keys(), ...s.temps, ...s.runs.map((r) => r.outDir)])
        fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  const track = (run: TrackedRun) => current().runs.push(run);

  const harness: Harness = {
    get secrets() {
      return current().secrets;
    },
    get sentinel() {
      return current().sentinel;
    },
    workspace(files, options = {}) {
      const dir = options.dir ?? tmpDir("agent-ci-ws-");
      fs.mkdirSync(dir, { recursive: true });
      writeFiles(dir, files);
      if (options.git) {
        const env = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
        const git = (...args: string[]) =>
          spawnSyncOk("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], dir, env);
        git("init", "-q", "-b", "main");
        git("add", "-A");
        git("commit", "-qm", "initial");
      }
      current().workspaces.set(dir, hashTree(dir));
      return dir;
    },
    tmp(prefix = "agent-ci-adv-") {
      const dir = tmpDir(prefix);
      current().temps.push(dir);
      return dir;
    },
    scanAlso(label, text) {
      current().extraScans.push({ label, text });
    },
    startCli(spec) {
      const s = current();
      const outDir = spec.out ?? tmpDir("agent-ci-out-");
      if (!spec.out) fs.rmSync(outDir, { recursive: true });
      const scriptDir = harness.tmp("agent-ci-script-");
      const env: NodeJS.ProcessEnv = { ...process.env, ...s.secrets.env };
      for (const [k, v] of Object.entries(spec.env ?? {})) {
        if (v === undefined) delete env[k];
        else env[k] = v;
      }
      const child = spawn(process.execPath, [CLI, ...cliArgs(spec, outDir, scriptDir)], {
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      s.children.push(child);
      let stdout = "";
      let stderr = "";
      let runId: string | undefined;
      const listeners = new Set<() => void>();
      const onData = () => {
        runId ??=
          /"session_id":"([^"]+)"/.exec(stdout)?.[1] ??
          /: run (\S+),/.exec(stderr)?.[1] ??
          /"run_id":"([^"]+)"/.exec(stdout)?.[1];
        for (const l of listeners) l();
      };
      child.stdout!.on("data", (d: Buffer) => {
        stdout += d.toString("utf8");
        onData();
      });
      child.stderr!.on("data", (d: Buffer) => {
        stderr += d.toString("utf8");
        onData();
      });
      const mode = spec.mode ?? "default";
      const tracked: TrackedRun = {
        label: `CLI run${spec.mode ? ` (${spec.mode})` : ""} #${s.runs.length + 1}`,
        outDir,
        workspace: spec.workspace,
        workspaceHash: hashTree(spec.workspace),
        mode,
        record: spec.record ?? "required",
        pid: child.pid,
        dockerHost: spec.env?.DOCKER_HOST,
        output: () => [stdout, stderr],
      };
      track(tracked);
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on("close", (code, signal) => resolve({ code, signal })),
      );
      const timeoutMs = spec.timeoutMs ?? 80_000;
      const done = (async () => {
        let timer: NodeJS.Timeout | undefined;
        const killed = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            child.kill("SIGKILL");
            reject(
              new Error(
                `the CLI did not end within ${timeoutMs / 1000} s; killed. stderr: ${stderr.slice(-2000)}`,
              ),
            );
          }, timeoutMs);
        });
        try {
          const { code, signal } = await Promise.race([exited, killed]);
          tracked.exitCode = code;
          tracked.runId = runId ?? collectResult(outDir, undefined, code, signal, stdout, stderr, mode).runId;
          return collectResult(outDir, tracked.runId, code, signal, stdout, stderr, mode);
        } finally {
          clearTimeout(timer);
        }
      })();
      done.catch(() => {});
      return {
        child,
        outDir,
        stdout: () => stdout,
        stderr: () => stderr,
        runId: () => runId,
        done,
        waitFor(pattern, waitMs = 60_000) {
          return new Promise<RegExpMatchArray>((resolve, reject) => {
            const check = () => {
              const match = (stdout + "\n" + stderr).match(pattern);
              if (!match) return;
              cleanup();
              resolve(match);
            };
            const timer = setTimeout(() => {
              cleanup();
              reject(new Error(`timed out waiting for ${pattern}; stderr: ${stderr.slice(-1500)}`));
            }, waitMs);
            const onExit = () => {
              check();
              cleanup();
              reject(new Error(`the CLI ended before ${pattern} appeared; stderr: ${stderr.slice(-1500)}`));
            };
            const cleanup = () => {
              clearTimeout(timer);
              listeners.delete(check);
              child.off("close", onExit);
            };
            listeners.add(check);
            child.on("close", onExit);
            check();
          });
        },
      };
    },
    cli(spec) {
      return harness.startCli(spec).done;
    },
    async agent(spec) {
      const s = current();
      const outDir = tmpDir("agent-ci-out-");
      const scriptDir = harness.tmp("agent-ci-script-");
      const known = [
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
      ] as const;
      for (const name of known) vi.stubEnv(name, s.secrets.env[name]);
      const lines: string[] = [];
      const logs: string[] = [];
      const mode = spec.mode ?? "default";
      const tracked: TrackedRun = {
        label: `runAgent run #${s.runs.length + 1}`,
        outDir,
        workspace: spec.workspace,
        workspaceHash: hashTree(spec.workspace),
        mode,
        record: spec.record ?? "required",
        output: () => [lines.join("\n"), logs.join("\n")],
      };
      track(tracked);
      const config = parseRunConfig({
        workspace: spec.workspace,
        out: outDir,
        outputFormat: "stream-json",
        mode: spec.mode,
        allow: spec.allow ?? [],
        deny: spec.deny ?? [],
        prompt: spec.prompt,
        script: spec.turns ? writeScript(scriptDir, spec.turns, spec.final) : spec.script,
        apiKey: s.secrets.anthropicKey,
        ...spec.config,
      } as RunConfigInput);
      const outcome = await runAgent(
        config,
        quietIo({ stdout: (l) => lines.push(l), stderr: (l) => logs.push(l) }),
        spec.cancel,
      );
      tracked.runId = outcome.runId;
      tracked.exitCode = outcome.exitCode;
      return {
        ...collectResult(
          outDir,
          outcome.runId,
          outcome.exitCode,
          null,
          lines.join("\n"),
          logs.join("\n"),
          mode,
        ),
        outcome,
      };
    },
  };
  return harness;
}

function spawnSyncOk(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): void {
  const res = spawnSync(cmd, args, { cwd, env, stdio: "pipe" });
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed: ${res.stderr?.toString()}`);
}

// ---------------------------------------------------------------------------------------------------------
// Small helpers the test files share

/** Inspect the container of a live run (by run id label). */
export async function containerOf(runId: string): Promise<Docker.ContainerInfo | undefined> {
  const list = await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } });
  return list[0];
}

export { until } from "../support/until.js";

/** The suite's seeded PRNG, for fault points and fuzzing that replay the same way. */
export { seededRandom } from "../support/seeded-random.js";
