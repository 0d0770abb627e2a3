// The helper's commands: one call's command (exec), the Bash tool's background shells, and the killing of
// what they leave behind. Each command runs in its own process group and carries its call's tag in its
// environment, so everything it started can be found and ended with the call.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ADDRESS_SPACE_ENV, type ExecOpRequest, STATE_DIR_ENV, type ExecOpResponse } from "./protocol.js";
import { confined } from "./files.js";
import { fail, type Handler } from "./serve.js";

// Where a script's final cwd is written: the agent's helper keeps it in /tmp; a helper of another user (the
// hooks') names a folder of its own, so that it never writes through a path the agent's user prepared.
const STATE_DIR = process.env[STATE_DIR_ENV] || "/tmp/.agent-ci";
const KILL_GRACE_MS = 1000;
/** After a command exits, how long a background child holding its pipes is waited for. */
const DRAIN_GRACE_MS = 100;
/** After the timeout's SIGTERM and SIGKILL, how long an escaped process holding the pipes is waited for. */
const PIPES_GRACE_MS = 500;
/** How long a group is SIGKILLed again and again before it is left to the container's end. */
const KILL_UNTIL_GONE_MS = 5000;
const DEFAULT_MAX_OUTPUT_BYTES = 8 << 20;
/** A command whose output passes this many times its capture limit is killed (`outputKilled`). */
const KILL_ABOVE_FACTOR = 16;
const CALL_TAG = "AGENT_CI_CALL";

let stateDirMade = false;
/**
 * STATE_DIR, made at the first script rather than at start: the helper starts while the run makes /tmp
 * writable (an image's /tmp may be 755), and must not touch it before it serves a command.
 */
function stateDir(): string {
  if (!stateDirMade) fs.mkdirSync(STATE_DIR, { recursive: true, mode: 0o700 });
  stateDirMade = true;
  return STATE_DIR;
}

type SpawnRequest = Pick<
  ExecOpRequest,
  "argv" | "script" | "mergeStderr" | "cwd" | "env" | "stdin" | "caller"
>;

/** A started command: its process, its tag (AGENT_CI_CALL) and, for a script, where it writes its final cwd. */
interface Call {
  child: ChildProcess;
  tag: string;
  /** The tool call it runs for, as the host named it. */
  caller?: string;
  cwdFile?: string;
}

interface Job {
  call: Call;
  buffer: Buffer[];
  bufferLen: number;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  started: number;
}

const jobs = new Map<string, Job>(); // background shells by id
const live = new Set<Call>(); // every command started, for kill-all

// The leader may be gone while the group lives on (a background child): always signal the group.
function killGroup(call: Call, signal: NodeJS.Signals): void {
  try {
    process.kill(-call.child.pid!, signal);
  } catch {
    // ESRCH: nothing left in the group.
  }
}

// SIGKILL the group again and again until it is empty: a fork bomb keeps adding members while the first
// signal is delivered.
function killGroupUntilGone(call: Call): void {
  const until = Date.now() + KILL_UNTIL_GONE_MS;
  const tick = () => {
    try {
      process.kill(-call.child.pid!, "SIGKILL");
    } catch {
      return;
    }
    if (Date.now() < until) setTimeout(tick, 20);
  };
  tick();
}

export function killAll(): void {
  for (const call of live) {
    killGroupUntilGone(call);
    killTagged(call.tag);
  }
}

// Every process a call starts carries the call's tag in its environment. One that left the call's process
// group (`setsid x &`, a daemon's double fork) is found by it in /proc and killed with the rest (C3). A
// process that deliberately drops the variable (`env -i`) is not found; the container's end still stops it.
function killTagged(tag: string): void {
  const needle = Buffer.from(`${CALL_TAG}=${tag}\0`);
  for (let pass = 0; pass < 5; pass++) {
    let found = 0;
    let pids: string[];
    try {
      pids = fs.readdirSync("/proc").filter((name) => /^[0-9]+$/.test(name));
    } catch {
      return;
    }
    for (const pid of pids) {
      if (Number(pid) === process.pid) continue;
      try {
        const env = fs.readFileSync(`/proc/${pid}/environ`);
        const at = env.indexOf(needle);
        if (at === 0 || (at > 0 && env[at - 1] === 0)) {
          process.kill(Number(pid), "SIGKILL");
          found += 1;
        }
      } catch {
        // Gone already, or not ours to read.
      }
    }
    if (!found) return;
  }
}

/** The call tag in a process's environment, or undefined (gone, not the agent's, or dropped with `env -i`). */
function tagOf(pid: number): string | undefined {
  let env: string;
  try {
    env = fs.readFileSync(`/proc/${pid}/environ`, "latin1");
  } catch {
    return undefined;
  }
  const prefix = `${CALL_TAG}=`;
  return env
    .split("\0")
    .find((entry) => entry.startsWith(prefix))
    ?.slice(prefix.length);
}

function parentOf(pid: number): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const ppid = Number(/^PPid:\s*(\d+)$/m.exec(status)?.[1]);
    return ppid > 1 ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/** How far up the parents a process without a tag is traced (a shell that cleared its environment, say). */
const MAX_ANCESTORS = 32;

/**
 * The call a process belongs to: the host's name for the call whose tag it (or its nearest tagged
 * ancestor) carries, among the calls still running and the background shells.
 */
export function callerOfProcess(pid: number): string | undefined {
  let at: number | undefined = pid;
  for (let depth = 0; at !== undefined && depth < MAX_ANCESTORS; depth++) {
    const tag = tagOf(at);
    if (tag !== undefined) {
      for (const call of live) if (call.tag === tag) return call.caller;
      for (const job of jobs.values()) if (job.call.tag === tag) return job.call.caller;
      return undefined;
    }
    at = parentOf(at);
  }
  return undefined;
}

/** A capped capture: the first and the last `limit / 2` bytes, and the count of bytes dropped between. */
function capture(limit: number) {
  const half = Math.max(1, Math.floor(limit / 2));
  const head: Buffer[] = [];
  let headLen = 0;
  let tail: Buffer[] = [];
  let tailLen = 0;
  let total = 0;
  return {
    push(chunk: Buffer): void {
      total += chunk.length;
      if (headLen < half) {
        const take = chunk.subarray(0, half - headLen);
        head.push(take);
        headLen += take.length;
        chunk = chunk.subarray(take.length);
      }
      if (!chunk.length) return;
      tail.push(chunk);
      tailLen += chunk.length;
      if (tailLen > half * 2) {
        const all = Buffer.concat(tail).subarray(-half);
        tail = [all];
        tailLen = all.length;
      }
    },
    get total(): number {
      return total;
    },
    result(): { data: Buffer; omitted: number; headLen: number } {
      const t = Buffer.concat(tail);
      const keptTail = t.subarray(Math.max(0, t.length - half));
      const omitted = total - headLen - keptTail.length;
      return { data: Buffer.concat([Buffer.concat(head), keptTail]), omitted, headLen };
    },
  };
}

// A script raises its own oom_score_adj before it runs anything (see preferForOomKill): what it starts
// inherits the score from the first fork on.
// Where the runtime's kernel does not see the memory cgroup (gVisor, hardening.ts), the script's address
// space is limited before it runs anything, hard and soft, so that it cannot raise it again.
const ADDRESS_SPACE_KIB = Number(process.env[ADDRESS_SPACE_ENV]) || 0;
const LIMIT_PREFIX = ADDRESS_SPACE_KIB
  ? `ulimit -v ${ADDRESS_SPACE_KIB} || { echo 'agent-ci: could not set the memory limit (ulimit -v)' >&2; exit 126; }; `
  : "";
const SCRIPT_WRAPPER =
  LIMIT_PREFIX +
  "{ echo 1000 > /proc/self/oom_score_adj; } 2>/dev/null; " +
  '__agent_ci_cwdf=$1; cd -- "$2" 2>/dev/null || cd /workspace; __agent_ci_s=$3; shift 3; ' +
  'eval "$__agent_ci_s"; __agent_ci_ec=$?; pwd -P > "$__agent_ci_cwdf" 2>/dev/null; exit $__agent_ci_ec';

// The Bash tool's stdout and stderr share one pipe, so they come back in the order they were written.
const MERGED_SCRIPT_WRAPPER = "exec 2>&1; " + SCRIPT_WRAPPER;

// The helper is the only way into the sandbox: when the container's memory limit is reached, the kernel's
// OOM killer should end the command, not the helper (it picks the biggest process, and the helper's ~50 MB
// is often bigger than a command that has only begun to allocate). Children inherit the score. A script
// sets it itself, in its wrapper: written from here, after the spawn, it could come after the script had
// started its command, which kept the old score (on a loaded host the killer then took the script's bash,
// and the call lost its exit code). A program started by argv gets it from here.
function preferForOomKill(child: ChildProcess): void {
  if (!child.pid) return;
  try {
    fs.writeFileSync(`/proc/${child.pid}/oom_score_adj`, "1000");
  } catch {
    // Gone already, or /proc not writable here: the kernel chooses by size alone.
  }
}

function spawnFor(req: SpawnRequest, tag: string): Call {
  const env = { ...req.env, [CALL_TAG]: tag };
  const cwd = req.cwd || "/workspace";
  const stdio = [req.stdin ? "pipe" : "ignore", "pipe", "pipe"] as const;
  if (req.script != null) {
    const cwdFile = path.join(stateDir(), `cwd-${tag}`);
    const wrapper = req.mergeStderr ? MERGED_SCRIPT_WRAPPER : SCRIPT_WRAPPER;
    const child = spawn("bash", ["-c", wrapper, "bash", cwdFile, cwd, req.script], {
      cwd: "/",
      env,
      stdio: [...stdio],
      detached: true,
    });
    return { child, tag, caller: req.caller, cwdFile };
  }
  const [program = "", ...args] = req.argv ?? [];
  const child = spawn(program, args, { cwd, env, stdio: [...stdio], detached: true });
  preferForOomKill(child);
  return { child, tag, caller: req.caller };
}

function finalCwd(call: Call): string | undefined {
  if (!call.cwdFile) return undefined;
  try {
    const cwd = fs.readFileSync(call.cwdFile, "utf8").trim();
    fs.rmSync(call.cwdFile, { force: true });
    return cwd || undefined;
  } catch {
    return undefined;
  }
}

/** A running exec: what it has seen so far, which `finishExec` turns into the answer. */
interface ExecRun {
  call: Call;
  started: number;
  out: ReturnType<typeof capture>;
  err: ReturnType<typeof capture>;
  timedOut: boolean;
  outputKilled: boolean;
  spawnError: string | null;
  exited: { code: number | null; signal: NodeJS.Signals | null } | null;
  openStreams: number;
  done: boolean;
  timers: NodeJS.Timeout[];
}

/** Ends an exec once: its process group killed, its output taken, the answer built from what it saw. */
function finishExec(run: ExecRun): { header: ExecOpResponse; body: Buffer } | undefined {
  if (run.done) return undefined;
  run.done = true;
  const { call, out, err, exited } = run;
  run.timers.forEach(clearTimeout);
  live.delete(call);
  // What the command left running in its process group dies with the call (servers belong in
  // run_in_background); a fork bomb cannot outlive the call that started it. What left the group is
  // looked for right after the answer is written, in the same turn of the event loop: the /proc scan
  // costs about a millisecond the caller need not wait for, and a request sent after reading the
  // answer is read later.
  killGroupUntilGone(call);
  setImmediate(() => killTagged(call.tag));
  const o = out.result();
  const e = err.result();
  call.child.stdout!.destroy();
  call.child.stderr!.destroy();
  const header: ExecOpResponse = {
    exitCode: exited ? exited.code : null,
    signal: exited ? exited.signal : null,
    timedOut: run.timedOut,
    outputKilled: run.outputKilled,
    spawnError: run.spawnError,
    stdoutBytes: o.data.length,
    stdoutOmitted: o.omitted,
    stdoutHead: o.headLen,
    stderrOmitted: e.omitted,
    stderrHead: e.headLen,
    pipesHeld: run.openStreams > 0,
    cwd: finalCwd(call),
    durationMs: Date.now() - run.started,
  };
  return { header, body: Buffer.concat([o.data, e.data]) };
}

/**
 * Follows the process: its output captured (the group killed when it passes `killAbove` bytes), its pipes'
 * closing and its exit; `finish` when both pipes closed after the exit, or a grace period after the exit
 * when a background child still holds them.
 */
function watchExec(run: ExecRun, killAbove: number, finish: () => void): void {
  const { call, out, err } = run;
  const { child } = call;
  const stdout = child.stdout!;
  const stderr = child.stderr!;
  const onData = (cap: ReturnType<typeof capture>) => (chunk: Buffer) => {
    cap.push(chunk);
    if (!run.outputKilled && out.total + err.total > killAbove) {
      run.outputKilled = true;
      killGroupUntilGone(call);
    }
  };
  stdout.on("data", onData(out));
  stderr.on("data", onData(err));
  const closed = () => {
    run.openStreams -= 1;
    if (run.openStreams === 0 && run.exited) finish();
  };
  stdout.on("close", closed);
  stderr.on("close", closed);
  child.on("error", (e) => {
    run.spawnError = String(e.message);
    run.exited = run.exited || { code: 127, signal: null };
    finish();
  });
  child.on("exit", (code, signal) => {
    run.exited = { code, signal };
    if (run.openStreams === 0) return finish();
    // A background child still holds stdout: take what is buffered and return, do not wait for EOF.
    run.timers.push(setTimeout(finish, DRAIN_GRACE_MS));
  });
}

/** The call's time limit: SIGTERM to the group, SIGKILL after a grace, and the answer after one more. */
function armTimeout(run: ExecRun, timeoutMs: number, finish: () => void): void {
  const { call, timers } = run;
  timers.push(
    setTimeout(() => {
      run.timedOut = true;
      killGroup(call, "SIGTERM");
      timers.push(setTimeout(() => killGroupUntilGone(call), KILL_GRACE_MS));
      // The group is dead or dying; a process that escaped it may still hold the pipes.
      timers.push(setTimeout(finish, KILL_GRACE_MS + PIPES_GRACE_MS));
    }, timeoutMs),
  );
}

let seq = 0;
function runExec(req: ExecOpRequest, body: Buffer): Promise<{ header: ExecOpResponse; body?: Buffer }> {
  const tag = `${process.pid}-${++seq}`;
  const started = Date.now();
  return new Promise((resolve) => {
    let call: Call;
    try {
      call = spawnFor(req, tag);
    } catch (e) {
      resolve({
        header: { exitCode: 127, signal: null, spawnError: String((e as Error).message), durationMs: 0 },
      });
      return;
    }
    live.add(call);
    const limit = req.maxOutputBytes || DEFAULT_MAX_OUTPUT_BYTES;
    const run: ExecRun = {
      call,
      started,
      out: capture(limit),
      err: capture(limit),
      timedOut: false,
      outputKilled: false,
      spawnError: null,
      exited: null,
      openStreams: 2,
      done: false,
      timers: [],
    };
    const finish = () => {
      const answer = finishExec(run);
      if (answer) resolve(answer);
    };
    watchExec(run, limit * KILL_ABOVE_FACTOR, finish);
    if (req.stdin) {
      call.child.stdin!.on("error", () => {});
      call.child.stdin!.end(body);
    }
    if (req.timeoutMs) armTimeout(run, req.timeoutMs, finish);
  });
}

export const exec: Handler<"exec"> = (req, body) => {
  if (req.confineCwd) {
    const real = confined(req.cwd, true);
    let st: fs.Stats;
    try {
      st = fs.statSync(real);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR")
        throw fail(code, `the directory ${req.cwd} does not exist`);
      throw e;
    }
    if (!st.isDirectory()) throw fail("ENOTDIR", `${req.cwd} is not a directory`);
  }
  return runExec(req, body);
};

// ---- background shells (Bash run_in_background, BashOutput, KillShell) ----

export const startBackground: Handler<"bg-start"> = (req) => {
  const call = spawnFor(req, req.job);
  const { child } = call;
  const cap = req.maxOutputBytes || DEFAULT_MAX_OUTPUT_BYTES;
  const job: Job = { call, buffer: [], bufferLen: 0, exit: null, started: Date.now() };
  const push = (chunk: Buffer) => {
    job.buffer.push(chunk);
    job.bufferLen += chunk.length;
    while (job.bufferLen > cap && job.buffer.length > 1) job.bufferLen -= job.buffer.shift()!.length;
  };
  child.stdout!.on("data", push);
  child.stderr!.on("data", push);
  child.on("exit", (code, signal) => {
    job.exit = { code, signal };
    live.delete(call);
  });
  child.on("error", () => {
    job.exit = { code: 127, signal: null };
  });
  jobs.set(req.job, job);
  live.add(call);
  return { header: { pid: child.pid! } };
};

function jobOf(id: string): Job {
  const job = jobs.get(id);
  if (!job) throw fail("ENOJOB", `no background shell ${id}`);
  return job;
}

export const readBackground: Handler<"bg-read"> = (req) => {
  const job = jobOf(req.job);
  const data = Buffer.concat(job.buffer);
  job.buffer = [];
  job.bufferLen = 0;
  const status = job.exit ? (job.exit.signal ? "killed" : "completed") : "running";
  return {
    header: {
      status,
      exitCode: job.exit ? job.exit.code : null,
      signal: job.exit ? job.exit.signal : null,
      runtimeMs: Date.now() - job.started,
    },
    body: data,
  };
};

export const killBackground: Handler<"bg-kill"> = (req) => {
  const { call } = jobOf(req.job);
  killGroupUntilGone(call);
  killTagged(call.tag);
  return { header: {} };
};
