// A model turn still under way is told every so often (every 30 s in a run): how long it has waited and the
// output tokens its stream has brought so far, so that a long turn shows in the log and in the Action's comment
// instead of looking like a hang. The loop starts one ticker per turn and stops it when the turn ends, fails or
// is cancelled; a stopped ticker leaves no timer behind.
import { outputTokensSoFar, type StreamedSoFar } from "../model/driver.js";

/** How often a model turn still under way is told. */
export const TURN_TICK_MS = 30_000;

/** Whose turn: absent for the main conversation; a subagent's type and the Task call that started it. */
interface TurnOwner {
  agent?: string;
  parentToolUseId?: string;
}

/** A model turn still under way, told every interval; and its end, once it is over, when it was told. */
export type TurnProgress =
  | ({
      kind: "turn_waiting";
      /** The turn's index in its conversation, as the record counts them (from 0). */
      turn: number;
      /** Seconds since the turn was asked. */
      seconds: number;
      /** Output tokens its stream has brought so far (outputTokensSoFar). */
      outputTokens: number;
    } & TurnOwner)
  | ({ kind: "turn_ended"; turn: number } & TurnOwner);

/** What a stream has brought before its first event. */
export const NOTHING_STREAMED: StreamedSoFar = { reportedTokens: 0, characters: 0 };

export interface TurnTickerOptions {
  /** How often: TURN_TICK_MS in a run. */
  everyMs: number;
  /** performance.now() when the turn was asked (a turn asked ahead was asked before the loop took it). */
  started: number;
  /** The turn's cancel: the ticker stops with it. */
  signal: AbortSignal;
  /** What the turn's stream has brought so far. */
  streamed: () => StreamedSoFar;
  tell: (tick: { seconds: number; outputTokens: number }) => void;
  /** performance.now() by default. */
  now?: () => number;
}

/** Tells a turn's wait every interval from when it was asked, until stopped or cancelled. */
export class TurnTicker {
  private timer: NodeJS.Timeout | undefined;
  /** Which interval's end the next tick is at (1: the first). */
  private next = 1;
  private told = false;
  private stopped = false;
  private readonly now: () => number;
  private readonly onAbort = () => this.stop();

  constructor(private readonly options: TurnTickerOptions) {
    this.now = options.now ?? (() => performance.now());
    if (options.signal.aborted || !(options.everyMs > 0)) {
      this.stopped = true;
      return;
    }
    // A turn asked ahead may have waited a while already: its first tick is at the next interval's end.
    this.next = Math.floor((this.now() - options.started) / options.everyMs) + 1;
    options.signal.addEventListener("abort", this.onAbort, { once: true });
    this.schedule();
  }

  /** Stops telling; true when it told anything (the turn was a long one). */
  stop(): boolean {
    if (!this.stopped) {
      this.stopped = true;
      clearTimeout(this.timer);
      this.timer = undefined;
      this.options.signal.removeEventListener("abort", this.onAbort);
    }
    return this.told;
  }

  /** The next tick, at the end of the next interval since the turn was asked. */
  private schedule(): void {
    const { everyMs, started } = this.options;
    const at = started + this.next * everyMs;
    this.timer = setTimeout(() => this.tick(), Math.max(0, at - this.now()));
    // A turn in flight keeps the process alive by its request; its ticker never does.
    this.timer.unref();
  }

  private tick(): void {
    if (this.stopped) return;
    this.told = true;
    const waited = this.now() - this.options.started;
    // The next interval's end (after a stall of the event loop, the next one still ahead).
    this.next = Math.max(this.next + 1, Math.floor(waited / this.options.everyMs) + 1);
    const seconds = Math.round(waited / 1000);
    try {
      this.options.tell({ seconds, outputTokens: outputTokensSoFar(this.options.streamed()) });
    } catch {
      // a listener's failure is not the turn's
    }
    this.schedule();
  }
}
