// Picking a run up again (`--resume <out-dir|report.json>`): what the earlier run left (report.json, patch.diff
// and the conversation record) becomes the start of a new run. The workspace is the earlier run's as it ended
// — its base commit checked out afresh from the user's repository, the earlier patch applied in the container
// after the baseline was taken, so the new patch is the whole change against the original base —, the
// conversation is the messages the model was last sent (tool results as they went, cleared ones as their
// placeholders), and what the model had read whole may be edited again without a new Read.
//
// The record is data, not configuration (it may be an artifact someone else uploaded): the resumed run's
// policy is its own configuration only — flags, inputs, trusted settings —, as Claude Code's --resume takes
// permissions from the current session and never from the transcript. The earlier record's policy is compared
// with it and the difference reported (`policyChanges`), never adopted. What the record claims about the
// workspace is checked against the commit publish pushed for the run (resume-binding.ts).
//
// The conversation record (conversation.jsonl) is written by every run that reached the model: one JSON
// object a line — a header, the files read, then the messages — redacted like everything else written, so a
// secret the earlier run saw stays `***` in the resumed conversation.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { ConfigError } from "../../errors.js";
import { git } from "../../host-git.js";
import {
  parseReport,
  REPORT_SCHEMA_VERSION,
  ReportSchemaError,
  type ReportPolicy,
  type RunReport,
} from "../../report/index.js";
import type { DockerSandbox } from "../../sandbox/docker-sandbox.js";
import type { RunState } from "../../tools/state.js";
import type { MessageParam } from "../model/driver.js";
import { bindResumeRecord } from "./resume-binding.js";

export const CONVERSATION_FILE = "conversation.jsonl";
/** Bump when a line's shape changes in a way an older reader would misread. */
export const CONVERSATION_VERSION = 1;

/** The user message a resumed run adds when no --prompt is given. */
export const DEFAULT_RESUME_PROMPT =
  "Continue the task from where you stopped. The workspace is as you left it. Finish the remaining work, check it, and summarise what you did.";

const ReadLine = z.object({
  type: z.literal("read"),
  path: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
  partial: z.boolean(),
});
const MessageLine = z.object({
  type: z.literal("message"),
  message: z.object({
    role: z.enum(["user", "assistant"]),
    content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
  }),
});
const HeaderLine = z.object({
  type: z.literal("conversation"),
  version: z.number().int(),
  runId: z.string(),
});

/**
 * The conversation record's text: the header, each file the model had read whole (its hash, so a resumed
 * run can tell whether it is still as read), then the messages as the model was last sent them. Each line
 * is redacted as a whole value before it is serialised.
 */
export function conversationRecord(options: {
  runId: string;
  messages: readonly MessageParam[];
  state: RunState;
  redactDeep: <T>(value: T) => T;
}): string {
  const lines: unknown[] = [{ type: "conversation", version: CONVERSATION_VERSION, runId: options.runId }];
  for (const [file, read] of options.state.reads) {
    // A window of a huge file has no hash: there is nothing to check it against later, so it is not kept.
    if (read.sha256 === undefined) continue;
    lines.push({ type: "read", path: file, sha256: read.sha256, size: read.size, partial: read.partial });
  }
  for (const message of options.messages) lines.push({ type: "message", message });
  return lines.map((line) => `${JSON.stringify(options.redactDeep(line))}\n`).join("");
}

export interface ParsedConversation {
  messages: MessageParam[];
  reads: Array<z.infer<typeof ReadLine>>;
}

/** Reads a conversation record; anything it cannot use is a ConfigError that names the line. */
export function parseConversation(text: string, file: string): ParsedConversation {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const header = HeaderLine.safeParse(jsonOrUndefined(lines[0]));
  if (!header.success)
    throw new ConfigError(`${file} is not an agent-ci conversation record: its first line has no header`);
  if (header.data.version !== CONVERSATION_VERSION)
    throw new ConfigError(
      `${file} is a version ${header.data.version} conversation record; this agent-ci resumes version ${CONVERSATION_VERSION}`,
    );
  const parsed: ParsedConversation = { messages: [], reads: [] };
  lines.slice(1).forEach((line, i) => {
    const value = jsonOrUndefined(line);
    const read = ReadLine.safeParse(value);
    if (read.success) {
      parsed.reads.push(read.data);
      return;
    }
    const message = MessageLine.safeParse(value);
    if (!message.success)
      throw new ConfigError(`${file} line ${i + 2}: not a message or a read of this record's version`);
    parsed.messages.push(message.data.message as MessageParam);
  });
  if (!parsed.messages.length)
    throw new ConfigError(`${file} holds no messages: the earlier run ended before its conversation began`);
  return parsed;
}

function jsonOrUndefined(line: string | undefined): unknown {
  if (line === undefined) return undefined;
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

/** The tool_use ids of an assistant message. */
function toolUseIds(message: MessageParam): string[] {
  if (message.role !== "assistant" || typeof message.content === "string") return [];
  return message.content
    .filter((b): b is Anthropic.ToolUseBlockParam => b.type === "tool_use")
    .map((b) => b.id);
}

/**
 * The earlier messages with the new prompt after them, ready to send. A run that ended inside a turn's calls
 * (cancelled, timed out, the container lost) left tool_use blocks with no result: the API refuses such a
 * conversation, so each gets an error result saying the run ended before it finished, as the record says.
 * The prompt joins the last message when that is the user's (tool results), else it is a new one.
 */
export function restoreMessages(earlier: readonly MessageParam[], prompt: string): MessageParam[] {
  const messages = structuredClone(earlier) as MessageParam[];
  const last = messages.at(-1);
  const dangling = last ? toolUseIds(last) : [];
  const content: Anthropic.Beta.BetaContentBlockParam[] = dangling.map((id) => ({
    type: "tool_result",
    tool_use_id: id,
    is_error: true,
    content: "The run ended before this call finished; its result is unknown.",
  }));
  const tail = messages.at(-1);
  if (!content.length && tail?.role === "user") {
    tail.content =
      typeof tail.content === "string"
        ? [
            { type: "text", text: tail.content },
            { type: "text", text: prompt },
          ]
        : [...tail.content, { type: "text", text: prompt }];
    return messages;
  }
  messages.push({ role: "user", content: [...content, { type: "text", text: prompt }] });
  return messages;
}

/** What a resumed run starts from. */
export interface ResumeRecord {
  /** The path as given (for the record). */
  given: string;
  /** The earlier run's output folder. */
  dir: string;
  report: RunReport;
  baseCommit: string;
  conversation: ParsedConversation;
  /** The earlier patch's exact bytes (it may hold bytes that are not UTF-8). */
  patch: Buffer;
}

/** A resumed run's link to the run it continues. */
export interface RunResume {
  record: ResumeRecord;
  /** The user's workspace: the run itself works on a checkout of the base commit (`config.workspace`). */
  workspace: string;
  /** Removes the checkout. */
  dispose: () => void;
  /** Files read in the earlier run that may be edited without a new Read. */
  restoredReads: number;
  /** How this run's policy differs from the earlier one (empty: the same). */
  policyChanges: string[];
  /** The commit publish pushed for the earlier run, which the record reproduces (none: never published). */
  publishedCommit?: string;
}

/** Reads what `--resume` points at (an output folder or its report.json); a record that cannot be resumed is a ConfigError saying why. */
export function loadResumeRecord(given: string): ResumeRecord {
  const target = path.resolve(given);
  const dir = fs.existsSync(target) && fs.statSync(target).isDirectory() ? target : path.dirname(target);
  const reportFile = path.join(dir, "report.json");
  if (!fs.existsSync(reportFile))
    throw new ConfigError(
      `--resume ${given}: no report.json there; give the earlier run's output folder or its report.json`,
    );
  const report = readReport(reportFile, given);
  const base = report.workspace.baseCommit;
  if (!base)
    throw new ConfigError(
      `--resume ${given}: run ${report.runId} records no base commit (its workspace was not a git checkout), so its workspace cannot be rebuilt`,
    );
  const conversationFile = path.join(dir, CONVERSATION_FILE);
  if (!fs.existsSync(conversationFile))
    throw new ConfigError(
      `--resume ${given}: run ${report.runId} left no ${CONVERSATION_FILE} (it ended before reaching the model, or was made by an agent-ci without resume), so its conversation cannot be restored`,
    );
  const patchFile = path.join(dir, "patch.diff");
  if (!fs.existsSync(patchFile))
    throw new ConfigError(`--resume ${given}: run ${report.runId} left no patch.diff`);
  return {
    given,
    dir,
    report,
    baseCommit: base,
    conversation: parseConversation(fs.readFileSync(conversationFile, "utf8"), conversationFile),
    patch: fs.readFileSync(patchFile),
  };
}

function readReport(file: string, given: string): RunReport {
  const text = fs.readFileSync(file, "utf8");
  let version: unknown;
  try {
    version = (JSON.parse(text) as { schemaVersion?: unknown }).schemaVersion;
  } catch (e) {
    throw new ConfigError(`--resume ${given}: report.json is not JSON: ${(e as Error).message}`);
  }
  if (version !== REPORT_SCHEMA_VERSION)
    throw new ConfigError(
      `--resume ${given}: report.json has schemaVersion ${JSON.stringify(version)}; this agent-ci resumes records of schema version ${REPORT_SCHEMA_VERSION} only`,
    );
  try {
    return parseReport(text);
  } catch (e) {
    if (e instanceof ReportSchemaError) throw new ConfigError(`--resume ${given}: ${e.message}`);
    throw e;
  }
}

/**
 * A fresh checkout of the base commit from the user's repository, in a temporary folder named like the
 * workspace (the record names the workspace by its folder's name): the commit alone (a depth-1 fetch, as
 * actions/checkout makes by default), HEAD detached at it. The repository is only read.
 */
export async function checkoutBase(
  workspace: string,
  base: string,
  redact: (text: string) => string,
): Promise<{ dir: string; dispose: () => void }> {
  const isRepo = await git(["rev-parse", "--git-dir"], { cwd: workspace }).then(
    () => true,
    () => false,
  );
  if (!isRepo)
    throw new ConfigError(
      `the workspace ${workspace} is not a git repository: resuming needs the repository the earlier run worked on, to check out its base commit ${base}`,
    );
  const present = await git(["cat-file", "-e", `${base}^{commit}`], { cwd: workspace }).then(
    () => true,
    () => false,
  );
  if (!present)
    throw new ConfigError(
      `the earlier run's base commit ${base} is not in the repository at ${workspace}: fetch it there (git fetch origin ${base}; in a workflow, actions/checkout with fetch-depth: 0) and resume again`,
    );
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-resume-"));
  const dispose = () => fs.rmSync(parent, { recursive: true, force: true });
  try {
    const dir = path.join(parent, path.basename(workspace) || "workspace");
    fs.mkdirSync(dir);
    const options = { cwd: dir, redact, config: [["protocol.version", "2"]] as const };
    await git(["init", "--quiet"], options);
    // Protocol v2 serves a commit by id whether or not a ref names it; no FETCH_HEAD, so no host path is kept.
    await git(
      ["fetch", "--quiet", "--depth=1", "--no-tags", "--no-write-fetch-head", workspace, base],
      options,
    );
    await git(["checkout", "--quiet", "--detach", base], options);
    return { dir, dispose };
  } catch (e) {
    dispose();
    throw e;
  }
}

/**
 * The record `given` names, read, its base checked out afresh from the user's repository, and the record bound
 * to the commit publish pushed for its run (`publishedCommit`; undefined when never published and not
 * `required`). A record that cannot be resumed is a ConfigError, and nothing is left behind.
 */
export async function openResume(
  given: string,
  workspace: string,
  required: boolean,
  redact: (text: string) => string,
): Promise<{
  record: ResumeRecord;
  checkout: { dir: string; dispose: () => void };
  publishedCommit?: string;
}> {
  const record = loadResumeRecord(given);
  const checkout = await checkoutBase(workspace, record.baseCommit, redact);
  try {
    const publishedCommit = await bindResumeRecord({
      repo: workspace,
      baseRepo: checkout.dir,
      runId: record.report.runId,
      baseCommit: record.baseCommit,
      patch: record.patch,
      required,
      given,
      redact,
    });
    return { record, checkout, publishedCommit };
  } catch (error) {
    checkout.dispose();
    throw error;
  }
}

/** How this run's policy differs from the earlier record's, in sentences (compared, never adopted); empty when the same. */
export function policyChanges(earlier: ReportPolicy, current: ReportPolicy): string[] {
  const key = (r: ReportPolicy["rules"][number]) => `${r.behavior} ${r.text}`;
  const before = new Set(earlier.rules.map(key));
  const after = new Set(current.rules.map(key));
  const changes: string[] = [];
  if (earlier.mode !== current.mode) changes.push(`mode ${earlier.mode} → ${current.mode}`);
  const added = [...after].filter((k) => !before.has(k));
  const removed = [...before].filter((k) => !after.has(k));
  if (added.length) changes.push(`added ${added.join(", ")}`);
  if (removed.length) changes.push(`removed ${removed.join(", ")}`);
  return changes;
}

/**
 * --resume: the earlier run's record read, and its base commit checked out from the user's repository; the
 * run works on that checkout from here (`checkout`: the sandbox's copy, instructions, verify). A record
 * that cannot be resumed is a ConfigError saying why.
 */
export async function startResume(
  given: string,
  workspace: string,
  required: boolean,
  redact: (text: string) => string,
  log: (line: string) => void,
): Promise<{ resume: RunResume; checkout: string }> {
  const { record, checkout, publishedCommit } = await openResume(given, workspace, required, redact);
  log(
    `resuming run ${record.report.runId} (${record.report.exitReason}): ${record.conversation.messages.length} messages, base ${record.baseCommit}, ${publishedCommit ? `the record reproduces its published commit ${publishedCommit}` : "never published (no commit of the run to check the record against)"}`,
  );
  const resume = {
    record,
    workspace,
    dispose: checkout.dispose,
    restoredReads: 0,
    policyChanges: [],
    publishedCommit,
  };
  return { resume, checkout: checkout.dir };
}

/** Compares this run's policy with the earlier record's (never adopted: this run's decides), and says so. */
export function comparePolicy(resume: RunResume, current: ReportPolicy, log: (line: string) => void): void {
  const earlier = resume.record.report;
  resume.policyChanges = policyChanges(earlier.policy, current);
  if (resume.policyChanges.length)
    log(
      `the policy differs from run ${earlier.runId}'s record: ${resume.policyChanges.join("; ")}; this run's own policy applies (the report shows both)`,
    );
}

const EARLIER_PATCH = "/tmp/agent-ci-resume.patch";

/**
 * The earlier run's changes, applied in the container after its baseline was taken (so this run's patch is
 * the whole change against the base), and what the model had read whole restored for read-before-edit: the
 * hash it read is checked against the file as it is now, so a file changed since still needs a new Read.
 */
export async function continueWorkspace(
  resume: RunResume,
  sandbox: DockerSandbox,
  state: RunState,
  readOnly: boolean,
): Promise<void> {
  const { patch, baseCommit } = resume.record;
  if (patch.length) {
    await sandbox.writeFile(EARLIER_PATCH, patch, { confine: false });
    const applied = await sandbox.exec({
      argv: ["git", "apply", "--binary", "--whitespace=nowarn", EARLIER_PATCH],
      timeoutMs: 120_000,
    });
    await sandbox.exec({ argv: ["rm", "-f", EARLIER_PATCH], timeoutMs: 30_000 });
    if (applied.exitCode !== 0) {
      const plan = readOnly ? " (plan mode keeps the workspace read-only)" : "";
      throw new ConfigError(
        `the earlier run's patch does not apply to its base commit ${baseCommit}${plan}: ${applied.stderr.toString("utf8").trim().slice(-800)}`,
      );
    }
  }
  for (const read of resume.record.conversation.reads) {
    state.reads.set(read.path, {
      sha256: read.sha256,
      mtimeMs: 0,
      size: read.size,
      partial: read.partial,
    });
  }
  resume.restoredReads = resume.record.conversation.reads.length;
}
