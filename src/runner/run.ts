// One run, end to end (docs/how-it-works.md): config → policy → sandbox → driver loop → patch → report → teardown.
// Whatever ends the run, the patch and the record are written (as far as the container still answers),
// with an exit reason, and the container is removed. The CLI and the Action both call `runAgent`.
import fs from "node:fs";
import path from "node:path";
import { atomicWriteFile, writeReportFiles, writeReportFilesSync } from "../report/index.js";
import type { ExitReason } from "../report/index.js";
import { WorkspaceError } from "../sandbox/copy/archive.js";
import { newRunId, runEngineObjects } from "../sandbox/docker-sandbox.js";
import { EngineError, SandboxGoneError } from "../sandbox/sandbox.js";
import { ConfigError } from "../errors.js";
import type { RunConfig } from "./config.js";
import { ModelApiError } from "./model/driver.js";
import { resultEvent } from "./loop/events.js";
import { ScriptError } from "./model/script-driver.js";
import { allCalls, buildReport, type RunFailure } from "./record/index.js";
import {
  type AgentPhase,
  PhaseSoFar,
  type RunContext,
  type RunIO as ContextIO,
  timed,
} from "./run/run-context.js";
import { CONVERSATION_FILE, conversationRecord } from "./resume/resume.js";
import { runAgentPhase } from "./run/run-stages.js";
import { newRunContext } from "./run/new-context.js";
import {
  type Capability,
  capabilitiesFor,
  type CapabilityRun,
  capabilitySecrets,
  closeCapabilities,
  recordedCapabilities,
  runAround,
  sandboxAsks,
  serviceSlots,
  settleCapabilities,
} from "./capabilities/index.js";

/** How the run talks to its entry, and the capabilities the entry adds to it. */
export interface RunIO extends ContextIO {
  /**
   * Capabilities the entry adds after the run's own (telemetry: a room the runner may not import). With
   * --attempts, the whole run's: the attempts' own runs are not given them (capability.ts's `around`).
   */
  readonly capabilities?: readonly Capability[];
}
import { placeReview, type ReviewPlacement } from "../review/review-task.js";
import { exportPatch, type PatchOut } from "./run/sandbox-record.js";
import { runVerify, type VerifyResult } from "./run/verify.js";
import { Watchdog, type WatchdogCause } from "./run/watchdog.js";
import { EXIT_CODES } from "./options.js";
import { knownSecrets, makeOutDir, type RunOutcome } from "./run/outcome.js";

export { EXIT_CODES };
export { endedBeforeAnyContainer, type RunOutcome } from "./run/outcome.js";

function classify(error: unknown, signal: AbortSignal, timedOut: () => boolean): RunFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (timedOut())
    return { reason: "timeout", kind: "Timeout", message: "the run's wall-clock limit was reached" };
  if (signal.aborted)
    return { reason: "cancelled", kind: "Cancelled", message: "the run was cancelled (SIGINT/SIGTERM)" };
  if (
    error instanceof ConfigError ||
    error instanceof ScriptError ||
    error instanceof WorkspaceError ||
    (error as Error)?.name === "PolicyConfigError"
  ) {
    return { reason: "config_error", kind: (error as Error).name, message };
  }
  if (error instanceof ModelApiError)
    return { reason: "api_error", kind: `ModelApiError/${error.kind}`, message };
  if (error instanceof EngineError || error instanceof SandboxGoneError)
    return { reason: "engine_error", kind: (error as Error).name, message };
  return { reason: "engine_error", kind: (error as Error)?.name ?? "Error", message };
}

/** The structured result's file in the output folder. */
export const STRUCTURED_OUTPUT_FILE = "output.json";

/**
 * The run the entry asked for: one run through the stages or, when a capability runs it around them
 * (attempts: N runs and a choice), that capability's; either way the capabilities are told once that its record
 * is written.
 */
export async function runAgent(
  config: RunConfig,
  io: RunIO,
  cancel: AbortSignal = new AbortController().signal,
): Promise<RunOutcome> {
  // Each capability's part of the run, made first: its configuration may hold secrets the redactor must know.
  const capabilities = capabilitiesFor(config, io.capabilities);
  const secrets = [...knownSecrets(config), ...capabilitySecrets(capabilities)];
  const whole = runAround(capabilities, { io, cancel, secrets, one: runAgent });
  if (!whole) return runStages(config, io, cancel, capabilities, secrets);
  const outcome = await whole;
  await recordedCapabilities(capabilities, { ...outcome, secrets }, io.stderr);
  return outcome;
}

/** One run through the stages, recorded and torn down however it ends. */
async function runStages(
  config: RunConfig,
  io: RunIO,
  cancel: AbortSignal,
  capabilities: readonly CapabilityRun[],
  secrets: readonly string[],
): Promise<RunOutcome> {
  const runId = newRunId();
  const outDir = makeOutDir(config, runId);
  const ctx = newRunContext(config, io, { runId, outDir, secrets });
  const deadline = Date.now() + config.timeoutMs;

  // One signal for everything in flight: the caller's cancel, or the wall clock.
  const controller = new AbortController();
  let timedOut = false;
  const onCancel = () => controller.abort(cancel.reason ?? new Error("cancelled"));
  cancel.addEventListener("abort", onCancel, { once: true });
  if (cancel.aborted) onCancel();
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error("timeout"));
  }, config.timeoutMs);

  // What the stages made, however far they got: what the run's end records and tears down.
  const soFar = new PhaseSoFar({ config, start: { phases: [] } });
  // When the loop does not answer at the deadline, the watchdog removes the container and, on this thread,
  // writes the record from what the loop has filled so far, then exits with the timeout code.
  const watchdog = new Watchdog({
    deadline,
    engineObjects: runEngineObjects(runId, serviceSlots(capabilities)),
    emergencyExit: (cause) => emergencyExit(ctx, capabilities, soFar.current, cause),
  });
  let phase: AgentPhase;
  try {
    // The watchdog's worker starts while the run prepares; the sandbox is handed to the agent once it watches.
    // From then a signal the blocked main thread cannot handle still ends the run.
    const watching = watchdog.ready.then(({ watchingSignals }) => {
      if (!watchingSignals)
        ctx.log(
          "the watchdog cannot watch SIGINT/SIGTERM in this Node version: a signal reaches the run only while its event loop answers",
        );
    });
    phase = await runAgentPhase(ctx, soFar, capabilities, { deadline, signal: controller.signal, watching });
  } catch (e) {
    const failure = classify(e, controller.signal, () => timedOut);
    ctx.log(`run ended: ${failure.reason}: ${failure.message}`);
    phase = soFar.add({ failure });
  } finally {
    clearTimeout(timer);
    cancel.removeEventListener("abort", onCancel);
  }
  try {
    return await finishRun(ctx, capabilities, phase, watchdog, cancel);
  } finally {
    phase.resume?.dispose();
  }
}

/**
 * The watchdog's way out, on this thread, inside whatever blocked it: the record from what the loop has filled
 * so far (an empty patch: none can be exported from a blocked loop, and the container is gone), the result
 * event, then exit with the code of the cause (5 for the wall clock, 130 for a signal).
 */
function emergencyExit(
  ctx: RunContext,
  capabilities: readonly CapabilityRun[],
  phase: AgentPhase,
  cause: WatchdogCause,
): never {
  const exitReason: ExitReason = cause.kind === "timeout" ? "timeout" : "cancelled";
  const why =
    cause.kind === "timeout" ? "the run's wall-clock limit was reached" : `the run received ${cause.signal}`;
  const message = `${why} while the event loop did not answer; the watchdog ended the run`;
  const patch: PatchOut = {
    text: "",
    bytes: Buffer.alloc(0),
    note: "no patch: the watchdog stopped a run whose event loop was blocked, and removed the container",
    excluded: [],
  };
  try {
    fs.writeFileSync(ctx.patchPath, patch.bytes);
    if (phase.conversation)
      fs.writeFileSync(path.join(ctx.outDir, CONVERSATION_FILE), conversationText(ctx, phase));
    const failure = { reason: exitReason, kind: "Watchdog", message };
    const report = buildReport({
      ...ctx,
      ...phase,
      capabilities,
      exitReason,
      failure,
      patch,
      outputErrors: [],
    });
    writeReportFilesSync(ctx.outDir, report, { patchText: "", redactor: ctx.redactor });
  } catch (e) {
    ctx.log(`the watchdog could not write the record: ${(e as Error).message}`);
  }
  phase.resume?.dispose();
  const { loop } = ctx;
  ctx.events.emit(
    resultEvent({
      sessionId: ctx.runId,
      exitReason,
      isError: true,
      errors: [message],
      runStart: ctx.runStart,
      loop,
      result: message,
      costUsd: loop.costUsd,
      usage: loop.usage,
      denials: [],
      patchPath: ctx.patchPath,
      reportPath: path.join(ctx.outDir, "report.json"),
    }),
  );
  ctx.events.close();
  ctx.log(`agent-ci: ${message}`);
  process.exit(EXIT_CODES[exitReason]);
}

/** The main conversation's record (conversation.jsonl), redacted. */
function conversationText(ctx: RunContext, phase: AgentPhase): string {
  return conversationRecord({
    runId: ctx.runId,
    messages: phase.conversation?.messages ?? [],
    state: ctx.state,
    redactDeep: ctx.redactor.redactDeep,
  });
}

/**
 * output.json: the agent's valid object, redacted like everything else written. Undefined when there is none;
 * a write error goes to `outputErrors`.
 */
async function writeStructuredOutput(
  ctx: RunContext,
  outputErrors: string[],
): Promise<{ path?: string; value?: Record<string, unknown> }> {
  const found = ctx.loop.structured?.value;
  if (!found) return {};
  const value = ctx.redactor.redactDeep(found);
  try {
    await atomicWriteFile(
      path.join(ctx.outDir, STRUCTURED_OUTPUT_FILE),
      `${JSON.stringify(value, null, 2)}\n`,
    );
    return { path: STRUCTURED_OUTPUT_FILE, value };
  } catch (e) {
    outputErrors.push(`${STRUCTURED_OUTPUT_FILE} could not be written: ${(e as Error).message}`);
    return { value };
  }
}

/**
 * After the loop, on every way out: the patch as far as the container still answers, the container's removal
 * started and the patch file and the conversation written while it is removed, then --verify, the record and
 * the result event. The removal starts before anything is written on the host, and is waited for whatever
 * the writes do, so that a failed write (a full disk) cannot keep it; the record is written once it ended,
 * so its teardown phase says what the removal did.
 */
async function finishRun(
  ctx: RunContext,
  capabilities: readonly CapabilityRun[],
  phase: AgentPhase,
  watchdog: Watchdog,
  cancel: AbortSignal,
): Promise<RunOutcome> {
  const { patch, failure, teardown } = await closeSandbox(ctx, capabilities, phase);
  const outputs = await writeOutputs(ctx, phase, patch).finally(() => teardown);
  // The container is gone and the loop answered: from here the run ends by itself (--verify has its own limit).
  await watchdog.stop();
  const verify = await verifyPatch(ctx, capabilities, phase, { patch, failure, cancel });
  // Work the capabilities left going while the agent worked (the setup snapshot's save to the Actions cache):
  // its outcome belongs in the record.
  await settleCapabilities(capabilities, phase.start);
  const outcome = await recordRun(ctx, capabilities, phase, { patch, failure, verify, ...outputs });
  // What the capabilities send of the written record (telemetry), once the outcome is settled.
  await recordedCapabilities(capabilities, { ...outcome, secrets: ctx.secrets }, ctx.io.stderr);
  return outcome;
}

/** What closing the sandbox left: the patch, the run's failure, the container's removal under way. */
interface Closed {
  patch: PatchOut;
  failure: RunFailure | undefined;
  /** The container's removal, which never rejects. */
  teardown: Promise<void>;
}

/**
 * The capabilities closed (background subagents stopped, MCP servers closed: what they wrote is in the patch),
 * the patch taken as far as the container still answers, the container's removal started.
 */
async function closeSandbox(
  ctx: RunContext,
  capabilities: readonly CapabilityRun[],
  phase: AgentPhase,
): Promise<Closed> {
  const { log } = ctx;
  const { sandbox, policy } = phase;
  await closeCapabilities(capabilities, log);
  const patch = sandbox
    ? await timed(ctx, "patch", () => exportPatch(sandbox, policy, log))
    : await exportPatch(sandbox, policy, log);
  let failure = phase.failure;
  if (sandbox && patch.note && !failure) {
    // The agent finished, but its work could not be exported (a command wiped agent-ci's baseline under /tmp,
    // say): that is not "no changes", and the exit code must say so.
    failure = { reason: "engine_error", kind: "PatchExportError", message: patch.note };
  }
  const teardown = sandbox
    ? timed(ctx, "teardown", () =>
        sandbox
          .dispose()
          .catch((e: unknown) => log(`removing the container failed: ${(e as Error).message}`)),
      )
    : Promise.resolve();
  return { patch, failure, teardown };
}

interface WrittenOutputs {
  /** Files of the output that could not be written (the record says so, and the exit code). */
  outputErrors: string[];
  structured: { path?: string; value?: Record<string, unknown> };
  review?: ReviewPlacement;
}

/** patch.diff, conversation.jsonl and output.json written; review findings placed on the diff. */
async function writeOutputs(ctx: RunContext, phase: AgentPhase, patch: PatchOut): Promise<WrittenOutputs> {
  const { outDir, patchPath, events, log } = ctx;
  const outputErrors: string[] = [];
  try {
    await atomicWriteFile(patchPath, patch.bytes);
  } catch (e) {
    outputErrors.push(`the patch could not be written to ${patchPath}: ${(e as Error).message}`);
  }
  if (events.writeError)
    outputErrors.push(`events.jsonl could not be written completely: ${events.writeError.message}`);
  if (phase.conversation) {
    try {
      await atomicWriteFile(path.join(outDir, CONVERSATION_FILE), conversationText(ctx, phase));
    } catch (e) {
      outputErrors.push(`${CONVERSATION_FILE} could not be written: ${(e as Error).message}`);
    }
  }
  const structured = await writeStructuredOutput(ctx, outputErrors);
  const review = phase.review && structured.value ? placeReview(phase.review, structured.value) : undefined;
  if (review)
    log(
      `review: ${review.inline.length} finding(s) on lines of the diff, ${review.outside.length} outside it`,
    );
  for (const message of outputErrors) log(message);
  return { outputErrors, structured, review };
}

/** --verify, unless the run ended with the engine failing or a cancel. */
async function verifyPatch(
  ctx: RunContext,
  capabilities: readonly CapabilityRun[],
  { config, sandbox, policy }: AgentPhase,
  { patch, failure, cancel }: { patch: PatchOut; failure: RunFailure | undefined; cancel: AbortSignal },
): Promise<VerifyResult | undefined> {
  const { log } = ctx;
  if (!config.verify || !sandbox || !policy) return undefined;
  if (failure?.reason === "engine_error" || failure?.reason === "cancelled") return undefined;
  return timed(ctx, "verify", () => {
    ctx.io.onProgress?.({ kind: "verifying" });
    return runVerify({
      runId: ctx.runId,
      config,
      asks: sandboxAsks(capabilities),
      imageName: sandbox.image.name,
      node: sandbox.node,
      patch: patch.bytes,
      log,
      signal: cancel,
      excludeFromCopy: policy.excludeFromCopy,
    }).catch((e: unknown): VerifyResult => {
      log(`verify could not run: ${(e as Error).message}`);
      return {
        command: config.verify ?? "",
        applied: false,
        exitCode: null,
        outputTail: ctx.redactor.redact((e as Error).message),
        durationMs: 0,
      };
    });
  });
}

/** The record written, the exit code settled, the result event sent: the run's outcome. */
async function recordRun(
  ctx: RunContext,
  capabilities: readonly CapabilityRun[],
  phase: AgentPhase,
  ended: WrittenOutputs & Omit<Closed, "teardown"> & { verify?: VerifyResult },
): Promise<RunOutcome> {
  const { runId, outDir, patchPath, redactor, log, events, loop } = ctx;
  const { patch, failure, verify, outputErrors, structured } = ended;
  const exitReason: ExitReason = failure?.reason ?? "completed";
  const report = buildReport({
    ...ctx,
    ...phase,
    capabilities,
    exitReason,
    failure,
    patch,
    verify,
    outputErrors,
    structuredPath: structured.path,
  });
  const written = await writeReportFiles(outDir, report, { patchText: patch.text, redactor }).catch(
    (e: unknown) => {
      log(`writing the report failed: ${(e as Error).message}`);
      outputErrors.push(`the report could not be written: ${(e as Error).message}`);
      return undefined;
    },
  );
  const reportPath = written?.paths.json;
  const verifyFailed = verify !== undefined && (!verify.applied || verify.exitCode !== 0);
  const reasonCode =
    exitReason === "completed" && verifyFailed ? EXIT_CODES.verify_failed : EXIT_CODES[exitReason];
  const exitCode = reasonCode === 0 && outputErrors.length ? EXIT_CODES.output_error : reasonCode;
  events.emit(
    resultEvent({
      sessionId: runId,
      exitReason,
      isError: exitCode !== 0,
      ...(exitReason === "completed" ? {} : { errors: [failure?.message ?? exitReason] }),
      runStart: ctx.runStart,
      loop,
      result: loop.finalText || failure?.message || "",
      costUsd: report.costUsd,
      usage: report.usage,
      denials: allCalls(loop, capabilities)
        .filter((c) => c.decision?.behavior === "deny")
        .map((c) => ({ tool_name: c.tool, tool_use_id: c.id, tool_input: c.input })),
      ...(structured.value ? { structured: structured.value } : {}),
      patchPath,
      reportPath,
    }),
  );
  events.close();
  // The message may quote a credential (a DOCKER_HOST with a password, an API error echoing the key): the
  // CLI and the Action print it, so it is redacted like everything else written or printed (S8).
  const error = failure?.message ?? (outputErrors.length ? outputErrors.join("; ") : undefined);
  return {
    runId,
    exitReason,
    exitCode,
    outDir,
    patchPath,
    reportPath,
    report: written?.report,
    error: error === undefined ? undefined : redactor.redact(error),
    structuredOutput: structured.value,
    review: ended.review,
    finalMessage: redactor.redact(loop.finalText),
  };
}
