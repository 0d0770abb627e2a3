// agent-ci's in-container helper. agent-ci starts it once per container (the toolbelt's
// `/opt/agent-ci/bin/node -e <this file>`, one docker exec) and sends it framed requests on stdin, or on
// the host's Unix socket once told to connect to it (the `channel` operation); it answers the same way.
// One docker exec costs ~60 ms before a command even runs, so every tool call goes through this
// long-lived process instead, which spawns the command (each in its own process group) in a few
// milliseconds.
//
// Frame: u32 BE header length, header JSON, u32 BE body length, body bytes. Requests carry an `id`; the
// response repeats it. Requests are served concurrently. The operations and their fields are typed on
// the host side in helper-protocol.ts. Plain JavaScript, no dependencies: it runs on the toolbelt's Node.
/* global require, process, Buffer, setTimeout, clearTimeout, setImmediate */
/* eslint-disable @typescript-eslint/no-require-imports -- plain CommonJS, run with node -e inside the container */
"use strict";

const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const { spawn } = require("child_process");
const net = require("net");

const STATE_DIR = "/tmp/.agent-ci";
const KILL_GRACE_MS = 1000;
const DRAIN_GRACE_MS = 100;
const CALL_TAG = "AGENT_CI_CALL";
const roots = (process.env.AGENT_CI_ROOTS || "/workspace").split(":").filter(Boolean);

fs.mkdirSync(STATE_DIR, { recursive: true, mode: 0o700 });

// ---- framing ----
// Answers go back where their request came from: the exec stream's stdout, or the direct socket.
function send(out, header, body) {
  const h = Buffer.from(JSON.stringify(header));
  const b = body || Buffer.alloc(0);
  const hl = Buffer.alloc(4);
  hl.writeUInt32BE(h.length, 0);
  const bl = Buffer.alloc(4);
  bl.writeUInt32BE(b.length, 0);
  out.write(Buffer.concat([hl, h, bl, b]));
}

// Chunks of a request are gathered and joined once the frame is whole: joining on every chunk made a
// 10 MB Write quadratic. `needed` is the byte count the frame being received needs, once its header says.
function frameReader(out) {
  let chunks = [];
  let buffered = 0;
  let needed = 0;
  return (chunk) => {
    chunks.push(chunk);
    buffered += chunk.length;
    if (buffered < needed) return;
    let pending = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, buffered);
    needed = 0;
    for (;;) {
      if (pending.length < 4) break;
      const hl = pending.readUInt32BE(0);
      if (pending.length < 8 + hl) {
        needed = 8 + hl;
        break;
      }
      const total = 8 + hl + pending.readUInt32BE(4 + hl);
      if (pending.length < total) {
        needed = total;
        break;
      }
      const header = JSON.parse(pending.subarray(4, 4 + hl).toString("utf8"));
      const body = Buffer.from(pending.subarray(8 + hl, total));
      pending = pending.subarray(total);
      handle(header, body, out);
    }
    chunks = pending.length ? [pending] : [];
    buffered = pending.length;
  };
}

process.stdin.on("data", frameReader(process.stdout));
process.stdin.on("end", () => {
  killAll();
  process.exit(0);
});

function handle(req, body, out) {
  Promise.resolve()
    .then(() => OPS[req.op](req, body))
    .then(
      (res) => send(out, Object.assign({ id: req.id, ok: true }, res && res.header), res && res.body),
      (err) =>
        send(out, {
          id: req.id,
          ok: false,
          code: err.code || "EHELPER",
          message: String(err.message || err),
        }),
    );
}

// The host's direct socket (channel.ts), where the engine runs on the host's kernel: the helper connects,
// says the token it was given here, and serves what comes on it as it does stdin. Closed by the host (it
// gave up waiting), it is dropped; stdin still works.
function openChannel(req) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(req.path);
    socket.once("error", (e) => reject(fail("ECHANNEL", `cannot connect to ${req.path}: ${e.message}`)));
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      socket.on("error", () => socket.destroy());
      send(socket, { id: 0, hello: req.token });
      socket.on("data", frameReader(socket));
      resolve({});
    });
  });
}

function fail(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

// ---- paths ----
function inRoots(p) {
  return roots.some((r) => p === r || p.startsWith(r + "/"));
}

const MAX_LINK_HOPS = 40;

// Resolves symlinks of every existing component; the missing tail (for writes) is appended as is. A
// dangling symlink is followed to where it points (a write would create its target there).
function resolveReal(p) {
  let head = path.resolve("/workspace", p);
  let tail = [];
  for (let hops = 0; ;) {
    try {
      const real = fs.realpathSync.native(head);
      return tail.length ? path.join(real, ...tail.reverse()) : real;
    } catch (e) {
      if (e.code !== "ENOENT" && e.code !== "ENOTDIR") throw e;
      if (head === "/") throw e;
      let link = null;
      try {
        if (fs.lstatSync(head).isSymbolicLink()) link = fs.readlinkSync(head);
      } catch {
        // Missing: the component is part of the tail.
      }
      if (link !== null) {
        if (++hops > MAX_LINK_HOPS) throw fail("ELOOP", `too many levels of symbolic links: ${p}`);
        head = path.resolve(fs.realpathSync.native(path.dirname(head)), link, ...tail.reverse());
        tail = [];
        continue;
      }
      tail.push(path.basename(head));
      head = path.dirname(head);
    }
  }
}

function confined(p, confine) {
  const real = resolveReal(p);
  if (confine && !inRoots(real)) {
    throw fail("EOUTSIDE", `${p} resolves to ${real}, outside ${roots.join(", ")}`);
  }
  return real;
}

function statInfo(st, real, isSymlink) {
  const type = st.isFile() ? "file" : st.isDirectory() ? "directory" : "other";
  return { type, size: st.size, mtimeMs: st.mtimeMs, mode: st.mode & 0o7777, realPath: real, isSymlink };
}

// ---- file operations ----
const OPS = {
  // What the kernel says about this process: the hardening as seen from inside the container.
  ping() {
    const status = fs.readFileSync("/proc/self/status", "utf8");
    const field = (name) =>
      ((status.match(new RegExp("^" + name + ":\\s*(.*)$", "m")) || [])[1] || "").trim();
    return {
      header: {
        pid: process.pid,
        node: process.version,
        uid: process.getuid(),
        capEff: field("CapEff"),
        noNewPrivs: field("NoNewPrivs"),
        seccomp: field("Seccomp"),
      },
    };
  },

  stat(req) {
    const abs = path.resolve("/workspace", req.path);
    let isSymlink;
    try {
      isSymlink = fs.lstatSync(abs).isSymbolicLink();
    } catch (e) {
      if (e.code === "ENOENT" || e.code === "ENOTDIR") return { header: { stat: null } };
      throw e;
    }
    const real = confined(abs, req.confine);
    try {
      return { header: { stat: statInfo(fs.statSync(real), real, isSymlink) } };
    } catch (e) {
      if (e.code === "ENOENT" || e.code === "ENOTDIR") return { header: { stat: null } };
      throw e;
    }
  },

  // The canonical path (symlinks of existing components resolved, a missing tail appended), confined.
  resolve(req) {
    return { header: { realPath: confined(req.path, req.confine) } };
  },

  read(req) {
    const real = confined(req.path, req.confine);
    const st = fs.statSync(real);
    if (st.isDirectory())
      throw fail("EISDIR", `EISDIR: illegal operation on a directory, read '${req.path}'`);
    if (!st.isFile()) throw fail("ENOTREG", `${req.path} is not a regular file`);
    // Whether the path asked for is itself a symlink (Edit and Write refuse to write through one).
    const isSymlink =
      real !== path.resolve("/workspace", req.path) &&
      fs.lstatSync(path.resolve("/workspace", req.path)).isSymbolicLink();
    if (req.maxSize != null && st.size > req.maxSize)
      return { header: { stat: statInfo(st, real, isSymlink), bytes: 0 } };
    const start = Math.max(0, req.start || 0);
    const want = Math.max(0, Math.min(req.length == null ? st.size : req.length, st.size - start));
    const buf = Buffer.alloc(want);
    const fd = fs.openSync(real, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    try {
      let got = 0;
      while (got < want) {
        const n = fs.readSync(fd, buf, got, want - got, start + got);
        if (n === 0) break;
        got += n;
      }
      return { header: { stat: statInfo(st, real, isSymlink), bytes: got }, body: buf.subarray(0, got) };
    } finally {
      fs.closeSync(fd);
    }
  },

  write(req, body) {
    const real = confined(req.path, req.confine);
    const dir = path.dirname(real);
    fs.mkdirSync(dir, { recursive: true });
    // mkdir may have walked through a symlink created since we resolved: check the parent again.
    const realDir = fs.realpathSync.native(dir);
    if (req.confine && !inRoots(realDir))
      throw fail("EOUTSIDE", `${req.path} resolves outside the workspace`);
    const target = path.join(realDir, path.basename(real));
    let mode = req.mode == null ? 0o644 : req.mode;
    try {
      const st = fs.lstatSync(target);
      if (st.isSymbolicLink()) throw fail("ESYMLINK", `${req.path} became a symlink; not writing through it`);
      if (st.isDirectory())
        throw fail("EISDIR", `EISDIR: illegal operation on a directory, write '${req.path}'`);
      if (!st.isFile()) throw fail("ENOTREG", `${req.path} is not a regular file`);
      if (req.mode == null) mode = st.mode & 0o7777;
    } catch (e) {
      if (e.code !== "ENOENT") throw e;
    }
    // Written beside the target and renamed over it: a full disk never leaves a half-written file.
    const tmp = path.join(
      realDir,
      `.${path.basename(target)}.agent-ci-${crypto.randomBytes(4).toString("hex")}`,
    );
    const flags =
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;
    const fd = fs.openSync(tmp, flags, 0o600);
    try {
      fs.writeSync(fd, body);
      fs.fchmodSync(fd, mode);
    } catch (e) {
      fs.closeSync(fd);
      fs.rmSync(tmp, { force: true });
      throw e;
    }
    fs.closeSync(fd);
    fs.renameSync(tmp, target);
    return { header: { stat: statInfo(fs.statSync(target), target, false) } };
  },

  remove(req) {
    const abs = path.resolve("/workspace", req.path);
    const real = path.join(confined(path.dirname(abs), req.confine), path.basename(abs));
    fs.rmSync(real, { force: true, recursive: Boolean(req.recursive) });
    return {};
  },

  exec(req, body) {
    if (req.confineCwd) {
      const real = confined(req.cwd, true);
      let st;
      try {
        st = fs.statSync(real);
      } catch (e) {
        if (e.code === "ENOENT" || e.code === "ENOTDIR")
          throw fail(e.code, `the directory ${req.cwd} does not exist`);
        throw e;
      }
      if (!st.isDirectory()) throw fail("ENOTDIR", `${req.cwd} is not a directory`);
    }
    return runExec(req, body);
  },
  "bg-start": startBackground,
  "bg-read": readBackground,
  "bg-kill": (req) => {
    const job = jobs.get(req.job);
    if (!job) throw fail("ENOJOB", `no background shell ${req.job}`);
    killGroupUntilGone(job.child);
    killTagged(job.child.tag);
    return {};
  },
  "kill-all": () => {
    killAll();
    return {};
  },
  channel: openChannel,
};

// ---- processes ----
const jobs = new Map(); // background shells by id
const live = new Set(); // every child we started, for kill-all

// The leader may be gone while the group lives on (a background child): always signal the group.
function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: nothing left in the group.
  }
}

// SIGKILL the group again and again until it is empty: a fork bomb keeps adding members while the
// first signal is delivered.
function killGroupUntilGone(child) {
  const until = Date.now() + 5000;
  const tick = () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      return;
    }
    if (Date.now() < until) setTimeout(tick, 20);
  };
  tick();
}

function killAll() {
  for (const child of live) {
    killGroupUntilGone(child);
    killTagged(child.tag);
  }
}

// Every process a call starts carries the call's tag in its environment. One that left the call's process
// group (`setsid x &`, a daemon's double fork) is found by it in /proc and killed with the rest (C3). A
// process that deliberately drops the variable (`env -i`) is not found; the container's end still stops it.
function killTagged(tag) {
  if (!tag) return;
  const needle = Buffer.from(`${CALL_TAG}=${tag}\0`);
  for (let pass = 0; pass < 5; pass++) {
    let found = 0;
    let pids;
    try {
      pids = fs.readdirSync("/proc").filter((n) => /^[0-9]+$/.test(n));
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

// A capped capture: the first and the last `half` bytes, and the count of bytes dropped between.
function capture(limit) {
  const half = Math.max(1, Math.floor(limit / 2));
  const head = [];
  let headLen = 0;
  let tail = [];
  let tailLen = 0;
  let total = 0;
  return {
    push(chunk) {
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
    get total() {
      return total;
    },
    result() {
      const t = Buffer.concat(tail);
      const keptTail = t.subarray(Math.max(0, t.length - half));
      const omitted = total - headLen - keptTail.length;
      return { data: Buffer.concat([Buffer.concat(head), keptTail]), omitted, headLen };
    },
  };
}

// A script raises its own oom_score_adj before it runs anything (see preferForOomKill): what it starts
// inherits the score from the first fork on.
const SCRIPT_WRAPPER =
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
function preferForOomKill(child) {
  if (!child.pid) return;
  try {
    fs.writeFileSync(`/proc/${child.pid}/oom_score_adj`, "1000");
  } catch {
    // Gone already, or /proc not writable here: the kernel chooses by size alone.
  }
}

function spawnFor(req, id) {
  const env = Object.assign({}, req.env || {}, { [CALL_TAG]: id });
  const cwd = req.cwd || "/workspace";
  const stdio = [req.stdin ? "pipe" : "ignore", "pipe", "pipe"];
  if (req.script != null) {
    const cwdFile = path.join(STATE_DIR, `cwd-${id}`);
    const wrapper = req.mergeStderr ? MERGED_SCRIPT_WRAPPER : SCRIPT_WRAPPER;
    const child = spawn("bash", ["-c", wrapper, "bash", cwdFile, cwd, req.script], {
      cwd: "/",
      env,
      stdio,
      detached: true,
    });
    child.cwdFile = cwdFile;
    child.tag = id;
    return child;
  }
  const child = spawn(req.argv[0], req.argv.slice(1), { cwd, env, stdio, detached: true });
  child.tag = id;
  preferForOomKill(child);
  return child;
}

function finalCwd(child) {
  if (!child.cwdFile) return undefined;
  try {
    const cwd = fs.readFileSync(child.cwdFile, "utf8").trim();
    fs.rmSync(child.cwdFile, { force: true });
    return cwd || undefined;
  } catch {
    return undefined;
  }
}

let seq = 0;
function runExec(req, body) {
  const id = `${process.pid}-${++seq}`;
  const started = Date.now();
  return new Promise((resolve) => {
    let child;
    try {
      child = spawnFor(req, id);
    } catch (e) {
      resolve({ header: { exitCode: 127, signal: null, spawnError: String(e.message), durationMs: 0 } });
      return;
    }
    live.add(child);
    const limit = req.maxOutputBytes || 8 << 20;
    const killAbove = req.killAboveBytes || limit * 16;
    const out = capture(limit);
    const err = capture(limit);
    let timedOut = false;
    let outputKilled = false;
    let spawnError = null;
    let exited = null;
    let openStreams = 2;
    let done = false;

    const timers = [];
    function finish() {
      if (done) return;
      done = true;
      timers.forEach(clearTimeout);
      live.delete(child);
      // What the command left running in its process group dies with the call (servers belong in
      // run_in_background); a fork bomb cannot outlive the call that started it. What left the group is
      // looked for right after the answer is written, in the same turn of the event loop: the /proc scan
      // costs about a millisecond the caller need not wait for, and a request sent after reading the
      // answer is read later.
      killGroupUntilGone(child);
      setImmediate(() => killTagged(child.tag));
      const o = out.result();
      const e = err.result();
      child.stdout.destroy();
      child.stderr.destroy();
      const header = {
        exitCode: exited ? exited.code : null,
        signal: exited ? exited.signal : null,
        timedOut,
        outputKilled,
        spawnError,
        stdoutBytes: o.data.length,
        stdoutOmitted: o.omitted,
        stdoutHead: o.headLen,
        stderrOmitted: e.omitted,
        stderrHead: e.headLen,
        pipesHeld: openStreams > 0,
        cwd: finalCwd(child),
        durationMs: Date.now() - started,
      };
      resolve({ header, body: Buffer.concat([o.data, e.data]) });
    }
    function onData(cap) {
      return (chunk) => {
        cap.push(chunk);
        if (!outputKilled && out.total + err.total > killAbove) {
          outputKilled = true;
          killGroupUntilGone(child);
        }
      };
    }
    child.stdout.on("data", onData(out));
    child.stderr.on("data", onData(err));
    const closed = () => {
      openStreams -= 1;
      if (openStreams === 0 && exited) finish();
    };
    child.stdout.on("close", closed);
    child.stderr.on("close", closed);
    child.on("error", (e) => {
      spawnError = String(e.message);
      exited = exited || { code: 127, signal: null };
      finish();
    });
    child.on("exit", (code, signal) => {
      exited = { code, signal };
      if (openStreams === 0) return finish();
      // A background child still holds stdout: take what is buffered and return, do not wait for EOF.
      timers.push(setTimeout(finish, DRAIN_GRACE_MS));
    });
    if (req.stdin) {
      child.stdin.on("error", () => {});
      child.stdin.end(body);
    }
    if (req.timeoutMs) {
      timers.push(
        setTimeout(() => {
          timedOut = true;
          killGroup(child, "SIGTERM");
          timers.push(setTimeout(() => killGroupUntilGone(child), req.killGraceMs || KILL_GRACE_MS));
          // The group is dead or dying; a process that escaped it may still hold the pipes.
          timers.push(setTimeout(finish, (req.killGraceMs || KILL_GRACE_MS) + 500));
        }, req.timeoutMs),
      );
    }
  });
}

// ---- background shells (Bash run_in_background, BashOutput, KillShell) ----
function startBackground(req) {
  const child = spawnFor(req, req.job);
  const cap = req.maxOutputBytes || 8 << 20;
  const job = { child, buffer: [], bufferLen: 0, exit: null, started: Date.now() };
  const push = (chunk) => {
    job.buffer.push(chunk);
    job.bufferLen += chunk.length;
    while (job.bufferLen > cap && job.buffer.length > 1) job.bufferLen -= job.buffer.shift().length;
  };
  child.stdout.on("data", push);
  child.stderr.on("data", push);
  child.on("exit", (code, signal) => {
    job.exit = { code, signal };
    live.delete(child);
  });
  child.on("error", (e) => {
    job.exit = { code: 127, signal: null, error: String(e.message) };
  });
  jobs.set(req.job, job);
  live.add(child);
  return { header: { pid: child.pid } };
}

function readBackground(req) {
  const job = jobs.get(req.job);
  if (!job) throw fail("ENOJOB", `no background shell ${req.job}`);
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
}

send(process.stdout, { id: 0, ok: true, ready: true, pid: process.pid, node: process.version });
