// The first model turn, asked while the sandbox opens (docs/first-turn.md). Everything the first request
// carries is settled on the host before any container: the system prompt, the memory and the git snapshot
// (instructions/memory/, from the checkout or the trusted revision), the prompt, and the tool list. So it is
// sent once the run is prepared and the engine has answered (a run with no engine asks the model nothing),
// and the loop's first turn takes its answer when the sandbox is up:
// the first tool call waits only for whichever of the two is slower.
//
// The loop uses the answer only when its own first request is byte for byte the one asked ahead; otherwise
// the early request is aborted and the loop asks again (the record says so). A run whose first request
// cannot be known before the sandbox does not ask ahead, and the record says why.
import type { RunConfig } from "../config.js";
import type { AskedAhead, TakenTurn } from "../loop/agent-loop.js";
import { NOTHING_STREAMED } from "../loop/turn-ticker.js";
import type { AssistantTurn, Driver, StreamedSoFar, TurnRequest } from "../model/driver.js";

/** Whether the run's first model turn was asked while the sandbox opened, and why not when it was not. */
export interface FirstTurnRecord {
  overlapped: boolean;
  reason?: string;
}

/**
 * Why this run's first request cannot be sent before the sandbox is up, given why each capability that starts
 * in the sandbox needs it first (`waits`); undefined when it can.
 */
export function overlapBlocker(config: RunConfig, waits: readonly string[]): string | undefined {
  if (config.script) return "a scripted run has no model to wait for";
  return waits[0];
}

/** What makes two requests the same request (everything but the signal). */
function requestKey(request: Omit<TurnRequest, "signal">): string {
  const { system, messages, tools, maxTokens, contextEdits, model } = request;
  return JSON.stringify({ system, messages, tools, maxTokens, contextEdits, model });
}

/** The first turn in flight: taken by the loop's first request when it is the same, else aborted. */
export class FirstTurnAhead implements AskedAhead {
  readonly record: FirstTurnRecord = { overlapped: true };
  private readonly controller = new AbortController();
  private readonly key: string;
  private readonly started = performance.now();
  private readonly answer: Promise<AssistantTurn>;
  /** When the answer (or the failure) came. */
  private ended: number | undefined;
  /** What its stream has brought so far (for the loop's long-turn line once taken). */
  private streamed: StreamedSoFar = NOTHING_STREAMED;
  private state: "asked" | "taken" | "dropped" = "asked";

  constructor(
    driver: Driver,
    request: Omit<TurnRequest, "signal">,
    runSignal: AbortSignal,
    private readonly log: (line: string) => void,
  ) {
    this.key = requestKey(request);
    this.answer = driver.nextTurn({
      ...request,
      signal: AbortSignal.any([runSignal, this.controller.signal]),
      onStream: (sofar) => (this.streamed = sofar),
    });
    // When it came is kept for the turn's record. Its failure is the loop's to handle once taken; one never
    // taken ends with the run, unheard.
    const came = () => (this.ended = performance.now());
    this.answer.then(came, came);
  }

  take(request: TurnRequest): TakenTurn | undefined {
    if (this.state !== "asked") return undefined;
    if (requestKey(request) !== this.key) {
      this.drop("the loop's first request differs from the one asked ahead; it is asked again");
      return undefined;
    }
    this.state = "taken";
    return {
      answer: this.answer,
      started: this.started,
      ended: () => this.ended ?? performance.now(),
      streamed: () => this.streamed,
    };
  }

  /** Aborts the request unless the loop took it (the run ended before its first turn, or it differed). */
  drop(reason: string): void {
    if (this.state !== "asked") return;
    this.state = "dropped";
    this.record.overlapped = false;
    this.record.reason = reason;
    this.log(`the first model turn asked ahead is not used: ${reason}`);
    this.controller.abort(new Error(reason));
  }
}
