// The thread shows the work while it happens: the marker comment is posted when the run starts ("working —
// run <id>, <link to the job>"), edited as the run passes its phases (sandbox ready, N tool calls, a model
// turn still under way, verifying, publishing) at most once per interval, and replaced by the final report
// when the run ends (results.ts).
// The same marker finds the same comment again, so a re-run edits it instead of posting another. Every
// failure here warns and goes on: progress is a courtesy, the final comment is the record.
import { markdownCode, type Redactor } from "../report/index.js";
import { turnWaitingText, type RunProgress } from "../runner/progress.js";
import { runUrl, type GitHubContext } from "../github/context.js";
import type { GitHubApi } from "../github/api.js";
import { commentMarker, upsertComment, type CommentTarget } from "./comment.js";
import { eventTarget, type ActionEvent } from "./event.js";

/** How often the progress comment is edited at most (GitHub's secondary rate limits, the thread's noise). */
export const PROGRESS_EDIT_INTERVAL_MS = 15_000;

export interface ProgressState {
  /** The workflow run's id (GITHUB_RUN_ID) and its page. */
  runId: string;
  runUrl: string;
  /** agent-ci's own run id, once the sandbox is ready. */
  agentRunId?: string;
  sandboxReady: boolean;
  toolCalls: number;
  lastTool?: string;
  verifying: boolean;
  /** The run is over: the artifact, the summary and this comment are being written. */
  publishing?: boolean;
  /** Model turns still under way past the interval, by conversation (the main one, each subagent's). */
  waiting?: Map<string, WaitingTurn>;
}

type WaitingTurn = Extract<RunProgress, { kind: "turn_waiting" }>;

/** A model turn still under way, as a line of the comment. */
function waitingStep(waiting: WaitingTurn): string {
  return `- model ${turnWaitingText(waiting, (agent) => markdownCode(agent, 80))}`;
}

/** The "working" comment for a state. Pure. */
export function buildProgressBody(marker: string, state: ProgressState, redactor: Redactor): string {
  const steps = [
    state.sandboxReady
      ? `- container ready${state.agentRunId ? ` (agent-ci run ${markdownCode(state.agentRunId, 80)})` : ""}`
      : "- starting the container",
    ...(state.sandboxReady
      ? [
          `- ${state.toolCalls} tool call${state.toolCalls === 1 ? "" : "s"}${state.lastTool ? ` (last: ${markdownCode(state.lastTool, 80)})` : ""}`,
        ]
      : []),
    ...[...(state.waiting?.values() ?? [])].map(waitingStep),
    ...(state.verifying ? ["- verifying"] : []),
    ...(state.publishing ? ["- publishing the results"] : []),
  ];
  const run = state.runId ? `run ${markdownCode(state.runId, 40)}` : "run";
  return redactor.redact(
    [marker, `### ⏳ agent-ci is working — ${run}, [job](${encodeURI(state.runUrl)})`, steps.join("\n")].join(
      "\n\n",
    ),
  );
}

export interface ProgressCommentOptions {
  api: GitHubApi;
  ctx: GitHubContext;
  target: CommentTarget;
  marker: string;
  runUrl: string;
  redactor: Redactor;
  intervalMs: number;
  warn: (line: string) => void;
  now?: () => number;
}

export class ProgressComment {
  private readonly state: ProgressState;
  private id: number | undefined;
  private lastEdit = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private warned = false;

  constructor(private readonly options: ProgressCommentOptions) {
    this.state = {
      runId: options.ctx.runId,
      runUrl: options.runUrl,
      sandboxReady: false,
      toolCalls: 0,
      verifying: false,
    };
  }

  /** Whether the "working" comment was posted (the run's end must then replace it, whatever happens). */
  get posted(): boolean {
    return this.id !== undefined;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private body(): string {
    return buildProgressBody(this.options.marker, this.state, this.options.redactor);
  }

  /** Posts the "working" comment, or edits the marker comment an earlier run of this event left. */
  async start(): Promise<void> {
    const { api, ctx, target, marker } = this.options;
    const result = await upsertComment(api, ctx, target, marker, () => this.body());
    if (result.kind === "failed") {
      this.options.warn(`the progress comment could not be posted: ${result.message}`);
      return;
    }
    this.id = result.id;
    this.lastEdit = this.now();
  }

  /** Records progress; the comment is edited now if the interval has passed, else once when it has. */
  update(progress: RunProgress): void {
    switch (progress.kind) {
      case "sandbox_ready":
        this.state.sandboxReady = true;
        this.state.agentRunId = progress.runId;
        break;
      case "tool_call":
        this.state.toolCalls += 1;
        this.state.lastTool = progress.tool;
        break;
      case "tool_done":
        // Counted when the model asked for it: the comment shows the work as it is asked for.
        return;
      case "turn_waiting":
        (this.state.waiting ??= new Map()).set(progress.parentToolUseId ?? "", progress);
        break;
      case "turn_ended": {
        // Only the turn it showed: a later turn of the same conversation has replaced an earlier one.
        const key = progress.parentToolUseId ?? "";
        if (this.state.waiting?.get(key)?.turn !== progress.turn) return;
        this.state.waiting.delete(key);
        break;
      }
      case "verifying":
        this.state.verifying = true;
        this.state.waiting?.clear();
        break;
      case "publishing":
        this.state.publishing = true;
        this.state.waiting?.clear();
        break;
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.closed || this.id === undefined || this.timer) return;
    const wait = this.lastEdit + this.options.intervalMs - this.now();
    if (wait <= 0) {
      this.flush();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, wait);
    this.timer.unref();
  }

  private flush(): void {
    if (this.closed) return;
    this.lastEdit = this.now();
    // The body is rendered when the edit is sent: edits queued behind a slow one carry the newest state.
    this.chain = this.chain.then(() => this.edit());
  }

  private async edit(): Promise<void> {
    const { api, ctx, target } = this.options;
    if (this.id === undefined) return;
    try {
      await api.call(
        "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
        { owner: ctx.owner, repo: ctx.repo, comment_id: this.id, body: this.body() },
        { what: `updating the progress comment on #${target.number}` },
      );
    } catch (error) {
      if (!this.warned)
        this.options.warn(`the progress comment could not be updated: ${(error as Error).message}`);
      this.warned = true;
    }
  }

  /** Stops editing and waits for the edits already queued, so the final comment is the last write. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.chain;
  }
}

/** Posts the "working" comment where the final comment will go (`comment` input, an issue or PR, a token). */
export async function startProgressComment(
  options: {
    io: { warning(line: string): void };
    inputs: { comment: boolean };
    ctx: GitHubContext;
    api?: GitHubApi;
    redactor: Redactor;
  },
  event: ActionEvent,
  intervalMs: number,
): Promise<ProgressComment | undefined> {
  const target = eventTarget(event);
  if (!options.inputs.comment || !target || !options.api) return undefined;
  const progress = new ProgressComment({
    api: options.api,
    ctx: options.ctx,
    target,
    marker: commentMarker(options.ctx.workflow, options.ctx.job),
    runUrl: runUrl(options.ctx),
    redactor: options.redactor,
    intervalMs,
    warn: (line) => options.io.warning(line),
  });
  await progress.start();
  return progress;
}
