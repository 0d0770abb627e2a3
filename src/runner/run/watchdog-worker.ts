// The watchdog's worker thread (watchdog.ts), bundled into text (watchdog-source.ts) and started with
// `eval`, so it runs the same from the sources and from the bundle. It has its own event loop: it watches
// the run's deadline, the main thread's heartbeat and SIGINT/SIGTERM, and when the main thread cannot end
// the run itself, removes the run's engine objects and has the main thread exit through the inspector.
import http from "node:http";
import { Session } from "node:inspector";
import os from "node:os";
import { parentPort, workerData } from "node:worker_threads";

export type WatchedSignal = "SIGINT" | "SIGTERM";
/** Why the watchdog ended the run: the deadline, or a signal the blocked main thread could not handle. */
export type WatchdogCause = { kind: "timeout" } | { kind: "signal"; signal: WatchedSignal };

/** What the worker is started with. */
export interface WatchdogWorkerData {
  /** Epoch ms. */
  deadline: number;
  engineObjects: { containers: string[]; volumes: string[] };
  /** One Float64: when the main thread last beat (epoch ms). */
  beat: SharedArrayBuffer;
  blockedAfterMs: number;
  aliveGraceMs: number;
  /** The global the worker calls on the main thread. */
  exitKey: string;
  signals: WatchedSignal[];
}

/** What the worker tells the main thread: that it runs, and when it fires (for the record, not acted on). */
export type WatchdogMessage =
  { ready: true; watchingSignals: boolean } | { firing: "blocked" | "late"; signal?: WatchedSignal };

/** How often the worker looks. */
const TICK_MS = 250;
/** An engine request that takes longer than this is given up: the next object is removed regardless. */
const ENGINE_TIMEOUT_MS = 10_000;

const { deadline, engineObjects, beat, blockedAfterMs, aliveGraceMs, exitKey, signals } =
  workerData as WatchdogWorkerData;
const port = parentPort!;
const lastBeat = new Float64Array(beat);
const tell = (message: WatchdogMessage) => port.postMessage(message);
/** The first signal received, and when. */
let signalled: { signal: WatchedSignal; at: number } | undefined;

function engineTarget(): http.RequestOptions {
  const host = process.env.DOCKER_HOST || "unix:///var/run/docker.sock";
  if (host.startsWith("unix://")) return { socketPath: host.slice("unix://".length) };
  const url = new URL(host.replace(/^tcp:/, "http:"));
  return { host: url.hostname, port: Number(url.port) || 2375 };
}

/** A DELETE to the engine; resolves however it ends (the object may be gone already). */
function remove(path: string): Promise<void> {
  return new Promise((resolve) => {
    const done = () => resolve();
    const req = http.request(
      { ...engineTarget(), method: "DELETE", path, timeout: ENGINE_TIMEOUT_MS },
      (res) => {
        res.resume();
        res.on("end", done);
      },
    );
    req.on("error", done);
    req.on("timeout", () => {
      req.destroy();
      done();
    });
    req.end();
  });
}

async function fire(cause: WatchdogCause): Promise<void> {
  // Containers first: a volume is removed only once no container uses it.
  for (const name of engineObjects.containers)
    await remove(`/containers/${encodeURIComponent(name)}?force=true&v=true`);
  for (const name of engineObjects.volumes) await remove(`/volumes/${encodeURIComponent(name)}`);
  const session = new Session();
  session.connectToMainThread();
  session.post(
    "Runtime.evaluate",
    { expression: `globalThis.${exitKey}(${JSON.stringify(cause)})` },
    () => {},
  );
}

/** Node's signal watch (`signal_wrap`), what `process.on("SIGINT")` is built on. */
interface SignalWatch {
  onsignal: () => void;
  start(signum: number): number;
  unref(): void;
}
type Binding = (name: "signal_wrap") => { Signal: new () => SignalWatch };

// process.binding warns that it is deprecated; the warning would go through the (blocked) main thread.
function watchSignals(): boolean {
  const warn = process.emitWarning;
  let Signal: new () => SignalWatch;
  try {
    process.emitWarning = () => {};
    Signal = (process as unknown as { binding: Binding }).binding("signal_wrap").Signal;
  } catch {
    return false;
  } finally {
    process.emitWarning = warn;
  }
  for (const name of signals) {
    const watch = new Signal();
    watch.onsignal = () => {
      signalled ??= { signal: name, at: Date.now() };
    };
    if (watch.start(os.constants.signals[name]) !== 0) return false;
    watch.unref();
  }
  return true;
}

const timer = setInterval(() => {
  const now = Date.now();
  if (signalled) {
    // The main thread's own handler ends the run unless it has not beaten since the signal.
    const blocked = lastBeat[0]! < signalled.at && now - signalled.at > blockedAfterMs;
    if (blocked || now > signalled.at + aliveGraceMs) {
      clearInterval(timer);
      tell({ firing: blocked ? "blocked" : "late", signal: signalled.signal });
      void fire({ kind: "signal", signal: signalled.signal });
      return;
    }
  }
  if (now < deadline) return;
  const blocked = now - lastBeat[0]! > blockedAfterMs;
  if (!blocked && now < deadline + aliveGraceMs) return;
  clearInterval(timer);
  tell({ firing: blocked ? "blocked" : "late" });
  void fire({ kind: "timeout" });
}, TICK_MS);
tell({ ready: true, watchingSignals: watchSignals() });
