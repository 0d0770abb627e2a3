// The wall clock that holds when the main event loop does not answer (code that blocks it: a pathological
// regular expression, a synchronous loop). A worker thread, with its own event loop, watches the run's
// deadline and a heartbeat the main thread writes into shared memory. When the deadline has passed and the
// main thread has stopped beating (or, alive, has not finished long after the deadline), the worker removes
// the run's containers and volumes through the engine's API itself, then has the main thread — through the inspector,
// which V8 serves between two steps of any running code — write what it can (the report, an empty patch
// with the reason) and exit with the timeout code.
//
// SIGINT and SIGTERM too: Node runs a signal's JavaScript handler on the main thread's event loop, so a blocked
// loop never sees one. The worker listens for them itself, on its own loop: libuv hands a signal to every loop
// that watches it, and Node's `signal_wrap` binding (what `process.on("SIGINT")` is built on, reachable from a
// worker only through `process.binding`) gives a worker such a watch. A signal the main thread has not
// answered (no heartbeat since) within BLOCKED_AFTER_MS ends the run the same way, as `cancelled`. Only the
// signals the process already handles are watched (the CLI's): elsewhere a signal keeps its default action.
// The worker's program is watchdog-worker.ts.
import { Worker } from "node:worker_threads";
import { WATCHDOG_WORKER_JS } from "./watchdog-source.js";
import type { WatchdogCause, WatchdogMessage, WatchdogWorkerData, WatchedSignal } from "./watchdog-worker.js";

export type { WatchdogCause } from "./watchdog-worker.js";

/** How often the main thread beats. */
const HEARTBEAT_MS = 250;
/** A main thread silent this long is blocked. */
const BLOCKED_AFTER_MS = 3_000;
/** A main thread still beating is given this long after the deadline to end the run itself. */
const ALIVE_GRACE_MS = 60_000;
/** The global the worker calls on the main thread. */
export const WATCHDOG_EXIT_KEY = "__agentCiWatchdogExit";

export interface WatchdogOptions {
  /** Epoch ms. */
  deadline: number;
  /** The run's containers and volumes by name (known before they exist, so ones being created are found too). */
  engineObjects: WatchdogWorkerData["engineObjects"];
  /** Writes what it can, synchronously, and exits the process. Runs on the main thread, inside blocked code. */
  emergencyExit: (cause: WatchdogCause) => void;
  /** Signals that cancel the run, for the worker to watch (default: those the process has listeners for). */
  signals?: WatchedSignal[];
}

export class Watchdog {
  private readonly worker: Worker;
  private readonly heartbeat: NodeJS.Timeout;
  /** Resolves once the worker runs, with whether it watches SIGINT/SIGTERM itself. */
  readonly ready: Promise<{ watchingSignals: boolean }>;

  constructor(options: WatchdogOptions) {
    const beat = new SharedArrayBuffer(8);
    const lastBeat = new Float64Array(beat);
    lastBeat[0] = Date.now();
    this.heartbeat = setInterval(() => (lastBeat[0] = Date.now()), HEARTBEAT_MS);
    this.heartbeat.unref();
    (globalThis as Record<string, unknown>)[WATCHDOG_EXIT_KEY] = options.emergencyExit;
    const workerData: WatchdogWorkerData = {
      deadline: options.deadline,
      engineObjects: options.engineObjects,
      beat,
      blockedAfterMs: BLOCKED_AFTER_MS,
      aliveGraceMs: ALIVE_GRACE_MS,
      exitKey: WATCHDOG_EXIT_KEY,
      signals:
        options.signals ?? (["SIGINT", "SIGTERM"] as const).filter((name) => process.listenerCount(name) > 0),
    };
    this.worker = new Worker(WATCHDOG_WORKER_JS, { eval: true, workerData });
    this.ready = new Promise((resolve) => {
      const onMessage = (message: WatchdogMessage) => {
        if (!("ready" in message)) return;
        this.worker.off("message", onMessage);
        resolve({ watchingSignals: message.watchingSignals });
      };
      this.worker.on("message", onMessage);
      this.worker.once("exit", () => resolve({ watchingSignals: false }));
    });
    // The watchdog never keeps the process alive by itself.
    this.worker.unref();
    this.worker.on("error", () => {});
  }

  /** The run ended by itself: the watchdog stands down. */
  async stop(): Promise<void> {
    clearInterval(this.heartbeat);
    delete (globalThis as Record<string, unknown>)[WATCHDOG_EXIT_KEY];
    await this.worker.terminate();
  }
}

/** Test-only: `AGENT_CI_TEST_BLOCK_EVENT_LOOP=1` blocks the main thread once the sandbox is up, forever. */
export function blockEventLoopForTests(): void {
  if (process.env.AGENT_CI_TEST_BLOCK_EVENT_LOOP !== "1") return;
  for (;;) {
    // Never yields: only the watchdog can end the run.
  }
}
