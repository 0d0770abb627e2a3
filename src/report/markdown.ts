// report.md: the summary a person reads in the job summary or an issue/PR comment, rendered from report.json
// data only. Untrusted strings are escaped; long runs stay readable (collapsed sections) and the output is
// shortened step by step to fit GitHub's size limits, with a note pointing to the full artifact.
import {
  EXIT_REASON_LABELS,
  OUTCOME_LABELS,
  capText,
  describeCall,
  formatBytes,
  formatDuration,
  formatInt,
  formatUsd,
  oneLine,
  stripControl,
} from "./format.js";
import type { Outcome, RunReport, ToolCall } from "./schema.js";
import { setupCacheLine } from "./schema-setup-cache.js";
import { fencedBlock } from "../text.js";
import { defuseGitHubReferences } from "./github-text.js";

/** GitHub rejects issue/PR comments longer than this (characters). */
export const GITHUB_COMMENT_MAX_CHARS = 65_536;
/** GitHub's limit for one step's job summary (bytes). */
export const GITHUB_JOB_SUMMARY_MAX_BYTES = 1_048_576;
/** Default cap: a comment, with room for the Action's marker and artifact link. */
export const MARKDOWN_DEFAULT_MAX_CHARS = 60_000;

export interface MarkdownOptions {
  /** Cap in characters (UTF-16 code units). Default MARKDOWN_DEFAULT_MAX_CHARS. */
  maxChars?: number;
  /** Cap in UTF-8 bytes (for the job summary). Default: none. */
  maxBytes?: number;
  /** Link to the uploaded artifact, used in the footer and the shortening note. */
  artifactUrl?: string;
}

const OUTCOME_ICONS: Record<Outcome, string> = {
  changes: "✅",
  no_changes: "⚪",
  verify_failed: "❌",
  stopped: "⚠️",
  error: "❌",
};

const CALL_CELL_CHARS = 90;
const REASON_CELL_CHARS = 160;
const MESSAGE_CHARS = 600;
const OUTPUT_TAIL_CHARS = 3_000;
const TURN_TEXT_CHARS = 400;
/** Lists longer than this are collapsed into a <details>. */
const COLLAPSE_AFTER_ROWS = 10;

// ---------------------------------------------------------------------------------------------- escaping

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

/**
 * Untrusted text for inline Markdown (table cells, list items): one line, HTML escaped, Markdown punctuation
 * backslash-escaped, @mentions and #references defused with a zero-width space so a comment pings nobody.
 */
export function escapeMarkdownInline(text: string): string {
  return defuseGitHubReferences(
    oneLine(stripControl(text))
      .replace(/[&<>"]/g, (char) => HTML_ESCAPES[char] ?? char)
      .replace(/[\\`*_[\]{}|~!#]/g, "\\$&"),
  );
}

/**
 * Untrusted text inside <code> (monospace), for a table cell or a list item: a path, a command. Empty text
 * shows as an em dash. Publish, review and the Action's comment write file paths with it too: a backtick,
 * a newline or a closing keyword in a file's name stays inside the <code>.
 */
export function markdownCode(text: string, max = CALL_CELL_CHARS): string {
  const clipped = capText(oneLine(text), max);
  return clipped === "" ? "—" : `<code>${escapeMarkdownInline(clipped)}</code>`;
}

function plain(text: string, max = REASON_CELL_CHARS): string {
  return escapeMarkdownInline(capText(oneLine(text), max));
}

/** A fenced block that no backtick run in `text` can close. */
function fence(raw: string, info = "text"): string {
  return fencedBlock(stripControl(raw), info);
}

function details(summary: string, body: string, open = false): string {
  return `<details${open ? " open" : ""}><summary>${summary}</summary>\n\n${body}\n\n</details>`;
}

function table(header: string[], align: ("l" | "r")[], rows: string[][]): string {
  const head = `| ${header.join(" | ")} |`;
  const rule = `|${align.map((side) => (side === "r" ? "--:" : "---")).join("|")}|`;
  return [head, rule, ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n");
}

function plural(count: number, word: string): string {
  return `${formatInt(count)} ${word}${count === 1 ? "" : "s"}`;
}

// ---------------------------------------------------------------------------------------------- sections

interface Plan {
  /** Rows of the all-calls table; 0 drops the table. */
  callRows: number;
  /** Rows of the files/denials/failures lists. */
  listRows: number;
  runDetails: boolean;
}

const PLANS: readonly Plan[] = [
  { callRows: Infinity, listRows: Infinity, runDetails: true },
  { callRows: 100, listRows: Infinity, runDetails: true },
  { callRows: 50, listRows: Infinity, runDetails: true },
  { callRows: 20, listRows: Infinity, runDetails: true },
  { callRows: 20, listRows: Infinity, runDetails: false },
  { callRows: 0, listRows: Infinity, runDetails: false },
  { callRows: 0, listRows: 50, runDetails: false },
  { callRows: 0, listRows: 10, runDetails: false },
];

function failedCalls(report: RunReport): ToolCall[] {
  return report.toolCalls.filter((call) => call.isError && call.decision?.behavior !== "deny");
}

function headline(report: RunReport): string {
  const icon = OUTCOME_ICONS[report.outcome];
  const lines = [`### ${icon} agent-ci: ${OUTCOME_LABELS[report.outcome]}`];
  const patch = report.patch.empty
    ? "no patch"
    : `${plural(report.patch.files.length, "file")} changed, +${formatInt(report.patch.added)} −${formatInt(report.patch.removed)}`;
  lines.push(
    "",
    `**Exit reason:** \`${report.exitReason}\` (${EXIT_REASON_LABELS[report.exitReason]}) · **Patch:** ${patch}`,
  );
  if (report.error) {
    lines.push(
      "",
      "> [!CAUTION]",
      `> **${plain(report.error.kind, 80)}:** ${plain(report.error.message, MESSAGE_CHARS)}`,
    );
  }
  const critical = report.warnings.filter((warning) => warning.severity === "critical");
  const others = report.warnings.filter((warning) => warning.severity !== "critical");
  if (critical.length > 0) {
    lines.push(
      "",
      "> [!WARNING]",
      ...critical.map((warning) => `> **${plain(warning.message, MESSAGE_CHARS)}**`),
    );
  }
  if (others.length > 0) {
    lines.push(
      "",
      ...others.map(
        (warning) =>
          `- ${warning.severity === "warning" ? "⚠️ " : ""}${plain(warning.message, MESSAGE_CHARS)}`,
      ),
    );
  }
  return lines.join("\n");
}

function stats(report: RunReport): string {
  const denied = report.toolCalls.filter((call) => call.decision?.behavior === "deny").length;
  const failed = failedCalls(report).length;
  const callsCell = [
    plural(report.toolCalls.length, "call"),
    denied > 0 ? `${denied} denied` : "",
    failed > 0 ? `${failed} failed` : "",
  ]
    .filter((part) => part !== "")
    .join(" · ");
  const usage = report.usage;
  const row = [
    formatUsd(report.costUsd),
    `${formatInt(usage.inputTokens)} / ${formatInt(usage.outputTokens)}`,
    `${formatInt(usage.cacheReadInputTokens)} / ${formatInt(usage.cacheCreationInputTokens)}`,
    formatInt(report.turns.length),
    callsCell,
    formatDuration(report.durationMs),
  ];
  const statsTable = table(
    ["Cost", "Tokens in / out", "Cache read / write", "Turns", "Tool calls", "Duration"],
    ["r", "r", "r", "r", "r", "r"],
    [row],
  );
  const model = `${markdownCode(report.model.name, 60)} (${servedBy(report.model)})`;
  return `${statsTable}\n\nModel ${model} · permission mode \`${report.policy.mode}\` · run ${markdownCode(report.runId, 60)}`;
}

function collapseIfLong(title: string, count: number, body: string): string {
  if (count <= COLLAPSE_AFTER_ROWS) return `#### ${title}\n\n${body}`;
  return details(`<b>${title}</b>`, body);
}

function moreRows(shown: number, total: number, what: string): string {
  if (shown >= total) return "";
  return `\n\n_… ${formatInt(total - shown)} more ${what} in report.json / report.html._`;
}

function changedFiles(report: RunReport, plan: Plan): string {
  if (report.patch.empty || report.patch.files.length === 0) return "";
  const files = report.patch.files;
  const shown = files.slice(0, plan.listRows);
  const rows = shown.map((file) => [
    markdownCode(file.oldPath ? `${file.oldPath} → ${file.path}` : file.path, 120),
    file.status,
    file.binary ? "binary" : `+${formatInt(file.added)}`,
    file.binary ? "" : `−${formatInt(file.removed)}`,
  ]);
  const body =
    table(["File", "Status", "Added", "Removed"], ["l", "l", "r", "r"], rows) +
    moreRows(shown.length, files.length, "files") +
    `\n\nPatch: ${formatBytes(report.patch.bytes)}, sha256 \`${report.patch.sha256.slice(0, 12)}\``;
  return collapseIfLong(`Changed files (${formatInt(files.length)})`, files.length, body);
}

function secretFindings(report: RunReport, plan: Plan): string {
  const findings = report.patch.secretFindings;
  if (findings.length === 0) return "";
  const shown = findings.slice(0, plan.listRows);
  const items = shown.map(
    (finding) =>
      `> - ${markdownCode(finding.file, 120)}${finding.line === undefined ? "" : ` line ${finding.line}`}: ${plain(finding.kind, 60)}`,
  );
  return [
    "> [!CAUTION]",
    `> **The patch contains ${plural(findings.length, "possible secret")}.** Check it before applying or posting it.`,
    ">",
    ...items,
    ...(shown.length < findings.length
      ? [`> - … ${findings.length - shown.length} more in report.json`]
      : []),
  ].join("\n");
}

function verifySection(report: RunReport): string {
  const verify = report.verify;
  if (!verify) return "";
  const passed = verify.applied && verify.exitCode === 0;
  const status = !verify.applied
    ? "the patch did not apply"
    : verify.exitCode === null
      ? "the command did not finish"
      : `patch applied, exit ${verify.exitCode}`;
  const tail = capText(verify.outputTail, OUTPUT_TAIL_CHARS);
  const output = tail.trim() === "" ? "" : `\n\n${details("Output (tail)", fence(tail))}`;
  const inputs = verify.changedInputs ?? [];
  const changed = inputs.length
    ? `\n\n> [!WARNING]\n> The patch changes what this command runs: ${inputs
        .slice(0, 20)
        .map((input) => markdownCode(input, 120))
        .join(", ")}${inputs.length > 20 ? ", …" : ""}. Its result does not show that the change works.`
    : "";
  return `#### Verify\n\n${passed ? "✅" : "❌"} ${markdownCode(verify.command, 200)}: ${status} (${formatDuration(verify.durationMs)})${changed}${output}`;
}

function structuredOutputSection(report: RunReport): string {
  const out = report.structuredOutput;
  if (!out) return "";
  const schema = out.schema === "review" ? "the review's findings schema" : markdownCode(out.schema, 100);
  if (out.valid)
    return `#### Structured output\n\n✅ valid against ${schema}${out.path ? `, in ${markdownCode(out.path, 100)}` : ""} (${out.attempts} attempt(s))`;
  const errors = out.errors.slice(0, 10).map((e) => `- ${escapeMarkdownInline(capText(e, 300))}`);
  return `#### Structured output\n\n❌ no object valid against ${schema} (${out.attempts} attempt(s))${errors.length ? `\n\n${errors.join("\n")}` : ""}`;
}

function denialsSection(report: RunReport, plan: Plan): string {
  if (report.denials.length === 0) return "";
  const shown = report.denials.slice(0, plan.listRows);
  const index = new Map(report.toolCalls.map((call) => [call.id, call.index]));
  const rows = shown.map((denial) => {
    const callIndex = index.get(denial.callId);
    return [
      callIndex === undefined ? "—" : String(callIndex + 1),
      plain(denial.tool, 40),
      markdownCode(denial.summary),
      plain(denial.reason) +
        (denial.rule && !denial.reason.includes(denial.rule.text)
          ? ` (${markdownCode(denial.rule.text, 80)} from ${plain(denial.rule.source, 60)})`
          : ""),
      denial.narrowestAllowRule === null
        ? "none (a deny rule wins)"
        : markdownCode(denial.narrowestAllowRule, 120),
    ];
  });
  const body =
    table(["#", "Tool", "Call", "Why", "Narrowest allow rule"], ["r", "l", "l", "l", "l"], rows) +
    moreRows(shown.length, report.denials.length, "denials");
  return collapseIfLong(`Denied calls (${formatInt(report.denials.length)})`, report.denials.length, body);
}

/** `--network allowlist`: every connection attempt, the refused ones first, collapsed. */
function egressSection(report: RunReport, plan: Plan): string {
  const egress = report.egress;
  if (!egress) return "";
  const index = new Map(report.toolCalls.map((call) => [call.id, call.index]));
  const ordered = [
    ...egress.connections.filter((c) => c.decision === "denied"),
    ...egress.connections.filter((c) => c.decision === "allowed"),
  ];
  const shown = ordered.slice(0, plan.listRows);
  const rows = shown.map((c) => {
    const callIndex = c.caller === undefined ? undefined : index.get(c.caller);
    return [
      c.decision === "denied" ? "⛔ denied" : "allowed",
      markdownCode(`${c.host}:${c.port}`, 100),
      c.kind,
      callIndex === undefined ? plain(c.caller ?? "—", 40) : String(callIndex + 1),
      formatBytes(c.bytesUp),
      formatBytes(c.bytesDown),
      formatDuration(c.durationMs),
      plain(
        [
          c.reason,
          c.injected && `injected ${c.injected.join(", ")}`,
          c.scrubbed && `kept ${c.scrubbed.join(", ")} from the answer`,
        ]
          .filter(Boolean)
          .join("; "),
        160,
      ),
    ];
  });
  const denied = egress.connections.length - ordered.filter((c) => c.decision === "allowed").length;
  const injects = egress.injectSecrets?.length
    ? ` · Secrets the proxy injects: ${egress.injectSecrets.map((i) => markdownCode(i, 120)).join(", ")}`
    : "";
  const allowed = `Allowed: ${egress.allowedHosts.map((h) => markdownCode(h, 80)).join(", ") || "nothing"}${injects}`;
  const body =
    `${allowed}\n\n` +
    (rows.length
      ? table(
          ["", "Host", "Kind", "Call #", "Up", "Down", "Time", "Why"],
          ["l", "l", "l", "r", "r", "r", "r", "l"],
          rows,
        ) + moreRows(shown.length, ordered.length, "connections")
      : "No connection was attempted.");
  const fetched = egress.connections.filter((c) => c.kind === "fetch").length;
  const through =
    fetched === 0
      ? "the allowlist proxy"
      : fetched === egress.connections.length
        ? "WebFetch"
        : "the allowlist proxy and WebFetch";
  return details(
    `<b>Network: ${plural(egress.connections.length, "connection")} through ${through}, ${formatInt(denied)} denied</b>`,
    body,
  );
}

/** MCP servers: each one's kind, status, start time and tools, and why one failed (its stderr's end). */
function mcpSection(report: RunReport): string {
  const mcp = report.mcp;
  if (!mcp) return "";
  const rows = mcp.servers.map((s) => [
    markdownCode(s.name, 60),
    s.kind === "stdio" ? "stdio (in the sandbox)" : `${s.kind} (from agent-ci)`,
    s.status === "connected" ? (s.restarts ? "connected (restarted)" : "connected") : "⚠️ failed",
    s.startMs === undefined ? "—" : formatDuration(s.startMs),
    String(s.tools.length),
    plain(
      [s.error, s.stderrTail?.trim().split("\n").slice(-3).join(" ⏎ ")].filter(Boolean).join(" — "),
      REASON_CELL_CHARS,
    ),
  ]);
  const calls = report.toolCalls.filter((c) => c.mcp).length;
  const notes = [
    ...mcp.ignored.map((i) => `${plain(i.source, 80)} was ignored: ${plain(i.reason, 200)}`),
    ...mcp.refusedTools.map(
      (r) => `${markdownCode(`${r.server}/${r.tool}`, 80)} not offered: ${plain(r.reason, 200)}`,
    ),
  ];
  const body =
    (rows.length
      ? table(
          ["Server", "Runs", "Status", "Start", "Tools", "Error / stderr"],
          ["l", "l", "l", "r", "r", "l"],
          rows,
        )
      : "No MCP server was started.") + (notes.length ? `\n\n${notes.map((n) => `- ${n}`).join("\n")}` : "");
  const failed = mcp.servers.filter((s) => s.status !== "connected").length;
  return details(
    `<b>MCP servers: ${plural(mcp.servers.length, "server")}, ${formatInt(failed)} failed, ${plural(calls, "call")}</b>`,
    body,
    failed > 0,
  );
}

/** Hooks: each run around a call (in the sandbox, as the hooks' user), open when one blocked or failed. */
function hooksSection(report: RunReport, plan: Plan): string {
  const runs = report.toolCalls.flatMap((call) => (call.hooks ?? []).map((hook) => ({ call, hook })));
  if (runs.length === 0) return "";
  const shown = runs.slice(0, plan.listRows);
  const rows = shown.map(({ call, hook }) => [
    String(call.index + 1),
    plain(call.tool, 40),
    hook.event,
    markdownCode(hook.command),
    hook.outcome === "ok" ? "ok" : hook.outcome === "block" ? "⛔ block" : `⚠️ ${hook.outcome}`,
    hook.signal ?? (hook.exitCode === null ? "—" : String(hook.exitCode)),
    formatDuration(hook.durationMs),
    plain(hook.reason ?? "", REASON_CELL_CHARS),
  ]);
  const troubled = runs.filter(({ hook }) => hook.outcome !== "ok").length;
  return details(
    `<b>Hooks: ${plural(runs.length, "run")} in the sandbox, ${formatInt(troubled)} blocked or failed</b>`,
    table(
      ["#", "Tool", "Event", "Command", "Outcome", "Exit", "Time", "Reason"],
      ["r", "l", "l", "l", "l", "r", "r", "l"],
      rows,
    ) + moreRows(shown.length, runs.length, "hook runs"),
    troubled > 0,
  );
}

function failedSection(report: RunReport, plan: Plan): string {
  const failed = failedCalls(report);
  if (failed.length === 0) return "";
  const shown = failed.slice(0, plan.listRows);
  const rows = shown.map((call) => [
    String(call.index + 1),
    plain(call.tool, 40),
    markdownCode(describeCall(call)),
    call.errorKind === undefined ? "—" : markdownCode(call.errorKind, 40),
    plain(call.resultPreview, REASON_CELL_CHARS),
  ]);
  const body =
    table(["#", "Tool", "Call", "Error", "Message"], ["r", "l", "l", "l", "l"], rows) +
    moreRows(shown.length, failed.length, "failed calls");
  return collapseIfLong(`Failed calls (${formatInt(failed.length)})`, failed.length, body);
}

function decisionCell(call: ToolCall): string {
  if (!call.decision) return "—";
  if (call.decision.behavior === "allow") return `allow (${call.decision.decidedBy})`;
  return `⛔ deny (${call.decision.decidedBy})`;
}

function resultCell(call: ToolCall): string {
  const parts: string[] = [];
  if (call.isError) parts.push(`❌ ${call.errorKind === undefined ? "error" : plain(call.errorKind, 40)}`);
  if (call.exitCode !== undefined) parts.push(`exit ${call.exitCode}`);
  parts.push(`${formatInt(call.resultChars)} chars`);
  if (call.truncated) parts.push("truncated");
  return parts.join(" · ");
}

function callsSection(report: RunReport, plan: Plan): string {
  if (plan.callRows === 0 || report.toolCalls.length === 0) return "";
  const calls = report.toolCalls;
  const shown = calls.slice(0, plan.callRows);
  const rows = shown.map((call) => [
    String(call.index + 1),
    String(call.turn),
    call.agent ? `↳ ${plain(call.tool, 40)} (${plain(call.agent, 40)})` : plain(call.tool, 40),
    markdownCode(describeCall(call)),
    decisionCell(call),
    resultCell(call),
    formatDuration(call.durationMs),
  ]);
  const body =
    table(
      ["#", "Turn", "Tool", "Call", "Decision", "Result", "Time"],
      ["r", "r", "l", "l", "l", "l", "r"],
      rows,
    ) + moreRows(shown.length, calls.length, "calls");
  return details(`<b>All tool calls (${formatInt(calls.length)})</b>`, body);
}

/** Each subagent as a list item, its calls nested under it: the record's call tree. */
function subagentsSection(report: RunReport, plan: Plan): string {
  const agents = report.subagents ?? [];
  if (!agents.length) return "";
  const items = agents.map((agent) => {
    const tokens = agent.usage.inputTokens + agent.usage.outputTokens;
    const head = `- **${plain(agent.type, 60)}** (${plain(agent.description, 80)}): ${agent.status}${agent.detail ? ` (${plain(agent.detail, 120)})` : ""}, ${plural(agent.turns, "turn")}, ${plural(agent.toolUses, "tool call")}, ${formatInt(tokens)} tokens, ${formatUsd(agent.costUsd)}, ${plain(agent.model, 40)}${agent.background ? ", background" : ""}`;
    const calls = report.toolCalls.filter((c) => c.parentToolUseId === agent.toolUseId);
    const shown = calls.slice(0, plan.callRows);
    const lines = shown.map(
      (c) =>
        `  - ${c.isError ? "❌" : "✓"} ${plain(c.tool, 40)} ${markdownCode(describeCall(c))} — ${decisionCell(c)}`,
    );
    if (calls.length > shown.length) lines.push(`  - … ${formatInt(calls.length - shown.length)} more`);
    return [head, ...lines].join("\n");
  });
  return collapseIfLong(`Subagents (${formatInt(agents.length)})`, agents.length, items.join("\n"));
}

function turnsSection(report: RunReport, plan: Plan): string {
  if (!plan.runDetails || report.turns.length === 0) return "";
  if (plan.callRows === 0) return "";
  const rows = report.turns
    .slice(0, plan.callRows)
    .map((turn) => [
      String(turn.index),
      turn.stopReason === null ? "—" : plain(turn.stopReason, 30),
      formatInt(turn.usage.inputTokens),
      formatInt(turn.usage.outputTokens),
      formatInt(turn.usage.cacheReadInputTokens),
      String(turn.attempts),
      formatDuration(turn.durationMs),
      turn.text === undefined ? "" : plain(turn.text, TURN_TEXT_CHARS),
    ]);
  const body =
    table(
      ["Turn", "Stop", "In", "Out", "Cache read", "Attempts", "Time", "Text"],
      ["r", "l", "r", "r", "r", "r", "r", "l"],
      rows,
    ) + moreRows(rows.length, report.turns.length, "turns");
  return details(`<b>Turns (${formatInt(report.turns.length)})</b>`, body);
}

/** Each time the conversation was made smaller, with the prompt's size before and after. */
function compactionsSection(report: RunReport): string {
  const compactions = report.compactions ?? [];
  if (compactions.length === 0) return "";
  const rows = compactions.map((c) => [
    String(c.turn),
    formatDuration(c.offsetMs),
    c.trigger,
    c.strategy,
    `${formatInt(c.tokensBefore)} → ${formatInt(c.tokensAfter)}`,
    c.clearedToolResults === undefined ? "" : formatInt(c.clearedToolResults),
  ]);
  const body = table(
    ["Turn", "At", "Trigger", "How", "Prompt tokens", "Results cleared"],
    ["r", "r", "l", "l", "r", "r"],
    rows,
  );
  return details(`<b>Context window: ${plural(compactions.length, "compaction")}</b>`, body);
}

/** Where the run's time went: each phase with when it began, how long it took and its share of the run. */
function phasesSection(report: RunReport): string {
  const phases = report.phases ?? [];
  if (phases.length === 0) return "";
  const total = Math.max(1, report.durationMs);
  const rows = phases.map((p) => [
    p.name,
    formatDuration(p.startOffsetMs),
    formatDuration(p.durationMs),
    `${Math.round((p.durationMs / total) * 100)}%`,
  ]);
  const body = table(["Phase", "At", "Took", "Of the run"], ["l", "r", "r", "r"], rows);
  const longest = phases.reduce((a, b) => (b.durationMs > a.durationMs ? b : a));
  return details(
    `<b>Phases (${formatInt(phases.length)})</b>: longest ${longest.name}, ${formatDuration(longest.durationMs)}`,
    body,
  );
}

function yesNo(value: boolean): string {
  return value ? "yes" : "**no**";
}

/** Ignored paths suggested as patterns at most (the biggest). */
const SUGGESTED_PATTERNS = 3;

/** What git ignores and the copy left out, and the option that would copy it in. */
function ignoredLeftOutLines(left: NonNullable<RunReport["workspace"]["ignoredLeftOut"]>): string[] {
  const listed = left.paths.map((p) => `${markdownCode(p.path, 100)} (${formatInt(p.files)})`).join(", ");
  const more = left.morePaths ? `, and ${plural(left.morePaths, "more path")}` : "";
  // Directories (node_modules/, .venv/) are what a step installs; loose ignored files are rarely wanted.
  const dirs = left.paths.filter((p) => p.path.endsWith("/"));
  const patterns = (dirs.length ? dirs : left.paths)
    .slice(0, SUGGESTED_PATTERNS)
    .map((p) => p.path.replace(/\/$/, ""));
  return [
    `- **Left out, ignored by git**: ${plural(left.files, "file")}: ${listed}${more}`,
    `  - to copy them in (dependencies a step installed, say), run with ${markdownCode(`--include-ignored ${patterns.join(" ")}`, 200)} (CLI) or ${markdownCode(`include_ignored: ${patterns.join(", ")}`, 200)} (Action)`,
  ];
}

function runDetails(report: RunReport): string {
  const lines: string[] = [];
  const workspace = report.workspace;
  lines.push(
    `- **Run** ${markdownCode(report.runId, 80)} · agent-ci ${markdownCode(report.agentCiVersion, 40)} · ${markdownCode(report.startedAt, 40)} → ${markdownCode(report.endedAt, 40)}`,
    `- **Workspace** ${markdownCode(workspace.path, 80)}${workspace.repo ? ` (${markdownCode(workspace.repo, 80)})` : ""}${workspace.baseCommit ? ` at ${markdownCode(workspace.baseCommit.slice(0, 12), 12)}` : ""}: ${plural(workspace.filesCopied, "file")} copied (${formatBytes(workspace.bytesCopied)}), ${formatInt(workspace.skipped.length)} skipped`,
  );
  const resumed = report.resumedFrom;
  if (resumed)
    lines.push(
      `- **Continues run** ${markdownCode(resumed.runId, 80)} (it ended: ${markdownCode(resumed.exitReason, 30)}): ${plural(resumed.restoredMessages, "message")} and ${plural(resumed.restoredReads, "file read")} restored; the patch is the whole change since ${markdownCode(resumed.baseCommit.slice(0, 12), 12)}${resumed.publishedCommit ? `; the record matches its published commit ${markdownCode(resumed.publishedCommit.slice(0, 12), 12)}` : ""}${resumed.earlierPolicy ? `; its record's policy was mode ${markdownCode(resumed.earlierPolicy.mode, 30)} with ${plural(resumed.earlierPolicy.rules.length, "rule")}, not adopted (this run's differs, see the warnings)` : ""}`,
    );
  for (const skipped of workspace.skipped.slice(0, 20)) {
    lines.push(`  - skipped ${markdownCode(skipped.path, 100)}: ${plain(skipped.reason, 120)}`);
  }
  for (const held of workspace.credentialFilesHeldBack?.slice(0, 20) ?? [])
    lines.push(
      held.removed
        ? `  - credentials removed from ${markdownCode(held.path, 100)}: ${held.removed.map((r) => markdownCode(r, 80)).join(", ")}`
        : `  - held back ${markdownCode(held.path, 100)}: ${plain(held.reason, 120)}`,
    );
  if (workspace.ignoredLeftOut) lines.push(...ignoredLeftOutLines(workspace.ignoredLeftOut));
  if (report.image) {
    lines.push(
      `- **Image** ${markdownCode(report.image.name, 100)}${report.image.id ? ` ${markdownCode(report.image.id.slice(0, 19), 19)}` : ""}${report.image.architecture ? ` · ${markdownCode(report.image.architecture, 20)}${report.image.emulated ? " (emulated)" : ""}` : ""}`,
    );
    const tools = report.image.tools ?? [];
    const from = (where: "image" | "agent-ci") =>
      tools
        .filter((t) => t.from === where)
        .map((t) => markdownCode(t.name, 20))
        .join(", ") || "none";
    if (tools.length)
      lines.push(`  - tools from the image: ${from("image")}; from agent-ci's toolbelt: ${from("agent-ci")}`);
    const node = report.image.node;
    if (node?.mounted && node.version)
      lines.push(
        `  - Node.js ${markdownCode(node.version, 20)}${node.npm ? ` with npm ${markdownCode(node.npm, 20)}` : ""}, the official build: ${plain(node.source === "option" ? "the run's option" : node.source === "runner" ? "the Node.js the job set up" : `the workspace's ${node.file ?? node.source}`, 60)} says ${markdownCode(node.spec ?? "", 64)}`,
      );
  }
  if (report.setupCache) lines.push(`- **Setup cache** ${plain(setupCacheLine(report.setupCache), 600)}`);
  const hardening = report.hardening;
  if (hardening) {
    lines.push(
      `- **Container** user ${markdownCode(hardening.user, 30)} · network ${markdownCode(hardening.networkMode, 30)} · cap-drop ${markdownCode(hardening.capDrop.join(",") || "none", 60)} · no-new-privileges ${yesNo(hardening.noNewPrivileges)} · read-only root ${yesNo(hardening.readonlyRootfs)} · init ${yesNo(hardening.init)} · pids ${hardening.pidsLimit ?? "**unlimited**"} · memory ${hardening.memoryBytes === null ? "**unlimited**" : formatBytes(hardening.memoryBytes)} · CPUs ${hardening.nanoCpus === null ? "**unlimited**" : String(hardening.nanoCpus / 1e9)}${hardening.runtime ? ` · runtime ${markdownCode(hardening.runtime, 30)}` : ""}${hardening.egressRuntime ? ` · egress sidecar runtime ${markdownCode(hardening.egressRuntime, 30)}` : ""}`,
    );
    if (hardening.limitsInside)
      lines.push(
        `- **Limits inside ${markdownCode(hardening.runtime ?? "", 30)}'s kernel** processes ${hardening.limitsInside.processes} (RLIMIT_NPROC) · memory per Bash command ${formatBytes(hardening.limitsInside.addressSpaceBytes)} (RLIMIT_AS): ${hardening.limitsInside.heldBy}`,
      );
    for (const enforced of hardening.enforcedAt.slice(0, 30)) {
      const where =
        enforced.where === "tool_gate"
          ? "tool gate only"
          : enforced.where === "both"
            ? "container and tool gate"
            : "container";
      lines.push(
        `  - ${markdownCode(enforced.rule, 100)}: ${where}${enforced.how ? ` (${plain(enforced.how, 80)})` : ""}`,
      );
    }
  }
  const model = report.model;
  const modelParts = [
    model.maxTokens === undefined ? "" : `max tokens ${formatInt(model.maxTokens)}`,
    model.thinkingBudget === undefined ? "" : `thinking ${formatInt(model.thinkingBudget)}`,
  ].filter((part) => part !== "");
  lines.push(
    `- **Model** ${markdownCode(model.name, 60)} (${servedBy(model)})${modelParts.length ? ` · ${modelParts.join(" · ")}` : ""}`,
  );
  const limits = report.limits;
  const limitParts = [
    limits.maxTurns === undefined ? "" : `${formatInt(limits.maxTurns)} turns`,
    limits.maxBudgetUsd === undefined ? "" : formatUsd(limits.maxBudgetUsd),
    limits.timeoutMs === undefined ? "" : formatDuration(limits.timeoutMs),
  ].filter((part) => part !== "");
  lines.push(`- **Limits** ${limitParts.length ? limitParts.join(" · ") : "none"}`);
  lines.push(`- **Policy** mode \`${report.policy.mode}\`, ${plural(report.policy.rules.length, "rule")}`);
  for (const rule of report.policy.rules.slice(0, 50)) {
    lines.push(`  - ${rule.behavior} ${markdownCode(rule.text, 100)} from ${plain(rule.source, 80)}`);
  }
  for (const rule of report.policy.ignored.slice(0, 20)) {
    lines.push(
      `  - ignored ${markdownCode(rule.text, 100)} from ${plain(rule.source, 80)}: ${plain(rule.reason, 120)}`,
    );
  }
  if (report.todos && report.todos.length > 0) {
    const marks = { completed: "✅", in_progress: "⏳", pending: "⬜" } as const;
    lines.push(`- **Todos**`);
    for (const todo of report.todos.slice(0, 30))
      lines.push(`  - ${marks[todo.status]} ${plain(todo.content, 120)}`);
  }
  return details("<b>Run details</b>", lines.join("\n"));
}

function footer(report: RunReport, options: MarkdownOptions): string {
  const where = options.artifactUrl
    ? `[report.html and report.json in the run's artifact](${encodeURI(options.artifactUrl)})`
    : "report.html and report.json in the run's output";
  return `<sub>agent-ci ${escapeMarkdownInline(report.agentCiVersion)} · report schema v${report.schemaVersion} · full record: ${where}</sub>`;
}

/** "attempt k passed verify: …" as the choice says it, with the attempt named first when the reason does not. */
function chosenWhy(chosen: NonNullable<RunReport["chosen"]>): string {
  const reason = plain(chosen.reason);
  return reason.startsWith(`attempt ${chosen.attempt} `) ? reason : `attempt ${chosen.attempt}, ${reason}`;
}

/** With --attempts: what this report was chosen from and why, one row per attempt (the chosen one bold). */
function attemptsSection(report: RunReport): string {
  const attempts = report.attempts ?? [];
  if (!report.chosen || attempts.length === 0) return "";
  const rows = attempts.map((a) => {
    const n = a.attempt === report.chosen?.attempt ? `**${a.attempt}**` : String(a.attempt);
    return [
      n,
      a.started ? markdownCode(a.exitReason, 30) : `not started (${a.exitReason})`,
      a.verify === "not_run"
        ? "—"
        : a.verifyInputsChanged?.length
          ? `${a.verify} (changed what it runs)`
          : a.verify,
      formatInt(a.deniedCalls),
      formatInt(a.changedLines),
      formatInt(a.turns),
      formatUsd(a.costUsd),
      a.dir ? markdownCode(`${a.dir}/`, 40) : "—",
    ];
  });
  return [
    `**Chosen from ${plural(attempts.length, "attempt")}**: ${chosenWhy(report.chosen)}${report.chosen.verified ? "" : " (**not verified**)"}.`,
    table(
      ["Attempt", "Ended", "Verify", "Denied", "Changed lines", "Turns", "Cost", "Record"],
      ["r", "l", "l", "r", "r", "r", "r", "l"],
      rows,
    ),
  ].join("\n\n");
}

function assemble(report: RunReport, plan: Plan, options: MarkdownOptions): string {
  const sections = [
    headline(report),
    attemptsSection(report),
    stats(report),
    secretFindings(report, plan),
    verifySection(report),
    structuredOutputSection(report),
    changedFiles(report, plan),
    denialsSection(report, plan),
    egressSection(report, plan),
    mcpSection(report),
    hooksSection(report, plan),
    failedSection(report, plan),
    subagentsSection(report, plan),
    callsSection(report, plan),
    turnsSection(report, plan),
    compactionsSection(report),
    phasesSection(report),
    plan.runDetails ? runDetails(report) : "",
    footer(report, options),
  ];
  return `${sections.filter((section) => section !== "").join("\n\n")}\n`;
}

function fits(text: string, maxChars: number, maxBytes: number): boolean {
  return text.length <= maxChars && (maxBytes === Infinity || Buffer.byteLength(text, "utf8") <= maxBytes);
}

function shortenedNote(options: MarkdownOptions, limit: number): string {
  const where = options.artifactUrl
    ? `in [the run's artifact](${encodeURI(options.artifactUrl)})`
    : "(the run's output folder or artifact)";
  return `> [!NOTE]\n> This summary was shortened to fit ${formatInt(limit)} characters. The full record is in report.html and report.json ${where}.\n`;
}

/** Cuts at a line boundary and closes any <details> left open, so the cut Markdown still renders. */
function hardCut(text: string, budget: number): string {
  const cut = text.slice(0, Math.max(0, budget));
  const atLine = cut.lastIndexOf("\n") > 0 ? cut.slice(0, cut.lastIndexOf("\n")) : cut;
  const opened = (atLine.match(/<details/g) ?? []).length - (atLine.match(/<\/details>/g) ?? []).length;
  return atLine + "\n\n" + "</details>\n".repeat(Math.max(0, opened));
}

/** report.md from a validated report. */
export function renderMarkdown(report: RunReport, options: MarkdownOptions = {}): string {
  const maxChars = options.maxChars ?? MARKDOWN_DEFAULT_MAX_CHARS;
  const maxBytes = options.maxBytes ?? Infinity;
  const limit = Math.min(maxChars, maxBytes);
  for (const [step, plan] of PLANS.entries()) {
    const text = assemble(report, plan, options);
    const note = step === 0 ? "" : `\n${shortenedNote(options, limit)}`;
    if (fits(text + note, maxChars, maxBytes)) return text + note;
  }
  const note = `\n${shortenedNote(options, limit)}`;
  const last = PLANS[PLANS.length - 1] ?? { callRows: 0, listRows: 10, runDetails: false };
  const smallest = assemble(report, last, options);
  const closingRoom = 200;
  let budget = maxChars - note.length - closingRoom;
  let cut = hardCut(smallest, budget);
  while (!fits(cut + note, maxChars, maxBytes) && budget > 0) {
    budget = Math.floor(budget * 0.8);
    cut = hardCut(smallest, budget);
  }
  return fits(cut + note, maxChars, maxBytes) ? cut + note : capText(note, maxChars);
}

/** The driver, and the cloud that served the model when it was not the Anthropic API. */
function servedBy(model: RunReport["model"]): string {
  return model.provider && model.provider !== "anthropic"
    ? `${model.driver} on ${model.provider}`
    : model.driver;
}
