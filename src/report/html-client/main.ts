// report.html's script: reads the JSON data block renderHtml wrote (ReportPageData) and draws the page — summary,
// timeline, tool calls with their details, the patch, usage and run details. No imports at run time and no
// network: scripts/report-client.mjs bundles this file (and what it imports from ../format.ts) into one script
// that is inlined into the page. Checked in a real browser by test/browser/report-html.test.ts.
import {
  EXIT_REASON_LABELS,
  OUTCOME_LABELS,
  formatBytes,
  formatDuration,
  formatInt,
  formatUsd,
  stripControl,
} from "../format.js";
import type { ReportPageData, ViewHunk, ViewLine } from "../html-data.js";
import type { CallPatch, Denial, Outcome, ToolCall, Turn } from "../schema.js";
import { add, byId, h, type Child } from "./dom.js";

const data = JSON.parse(byId("report-data").textContent || "{}") as ReportPageData;
const report = data.report;
const calls = report.toolCalls;
const summaries = data.callSummaries;
const TOOL_COLORS: ReadonlyMap<string, string> = new Map([
  ["Bash", "#6366f1"],
  ["Read", "#0ea5e9"],
  ["Edit", "#f59e0b"],
  ["MultiEdit", "#f59e0b"],
  ["Write", "#f97316"],
  ["Grep", "#14b8a6"],
  ["Glob", "#22c55e"],
  ["TodoWrite", "#a855f7"],
  ["BashOutput", "#818cf8"],
  ["KillShell", "#64748b"],
]);
const EXTRA_COLORS = ["#ec4899", "#84cc16", "#06b6d4", "#eab308", "#8b5cf6", "#10b981", "#f43f5e"];
const OUTCOME_ICON: Record<Outcome, string> = {
  changes: "\u2713",
  no_changes: "\u2013",
  verify_failed: "\u2715",
  stopped: "!",
  error: "\u2715",
};

// ------------------------------------------------------------------------------------------- helpers
type CallStatus = "ok" | "error" | "denied";

function fmtOffset(ms: number): string {
  const s = ms / 1000;
  const m = Math.floor(s / 60);
  const rest = s - m * 60;
  return `+${m}:${rest < 10 ? "0" : ""}${rest.toFixed(1)}`;
}
function plural(n: number, word: string): string {
  return `${formatInt(n)} ${word}${n === 1 ? "" : "s"}`;
}
function callStatus(call: ToolCall): CallStatus {
  if (call.decision?.behavior === "deny") return "denied";
  if (call.isError) return "error";
  return "ok";
}
let extraIndex = 0;
const extraColors = new Map<string, string>();
function toolColor(tool: string): string {
  const known = TOOL_COLORS.get(tool) ?? extraColors.get(tool);
  if (known !== undefined) return known;
  const color = EXTRA_COLORS[extraIndex++ % EXTRA_COLORS.length] ?? "";
  extraColors.set(tool, color);
  return color;
}
function pretty(value: unknown): string {
  if (typeof value === "string") return stripControl(value);
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
function badge(kind: string, text: string): HTMLSpanElement {
  return h("span", { class: `badge ${kind}`, text });
}
function statusBadge(call: ToolCall): HTMLSpanElement {
  const status = callStatus(call);
  if (status === "denied") return badge("denied", "denied");
  if (status === "error") return badge("error", call.errorKind ? `error: ${call.errorKind}` : "error");
  return badge("ok", call.exitCode !== undefined ? `exit ${call.exitCode}` : "ok");
}
function panel(id: string, title: string, sub: string | null, body: Child, tools: Child): HTMLElement {
  return h("section", { class: "panel", id }, [
    h("div", { class: "section-head" }, [
      h("h2", { text: title }),
      sub ? h("span", { class: "sub", text: sub }) : null,
      h("span", { class: "spacer" }),
      tools || null,
    ]),
    body,
  ]);
}
function kv(pairs: [string, Child][]): HTMLDListElement {
  const dl = h("dl", { class: "kv" });
  for (const [term, value] of pairs) {
    if (value === null || value === undefined || value === "") continue;
    dl.appendChild(h("dt", { text: term }));
    dl.appendChild(h("dd", null, value));
  }
  return dl;
}
const denialById = new Map<string, Denial>(report.denials.map((denial) => [denial.callId, denial]));
const callById = new Map<string, { call: ToolCall; position: number }>(
  calls.map((call, position) => [call.id, { call, position }]),
);
const failedCount = calls.filter((c) => callStatus(c) === "error").length;
const deniedCount = calls.filter((c) => callStatus(c) === "denied").length;

// ------------------------------------------------------------------------------------------- header
function renderHeader(): HTMLElement {
  const usage = report.usage;
  const started = report.startedAt.replace("T", " ").replace(/\.\d+Z$/, "Z");
  const patch = report.patch;
  const limits = report.limits;
  const stats: [string, string, string | null][] = [
    [
      "Cost",
      formatUsd(report.costUsd),
      limits.maxBudgetUsd !== undefined ? `budget ${formatUsd(limits.maxBudgetUsd)}` : "estimate",
    ],
    [
      "Tokens",
      formatInt(usage.inputTokens + usage.outputTokens),
      `${formatInt(usage.inputTokens)} in \u00b7 ${formatInt(usage.outputTokens)} out`,
    ],
    [
      "Cache",
      formatInt(usage.cacheReadInputTokens),
      `read \u00b7 ${formatInt(usage.cacheCreationInputTokens)} written`,
    ],
    [
      "Turns",
      formatInt(report.turns.length),
      limits.maxTurns !== undefined ? `of ${formatInt(limits.maxTurns)} max` : "no limit",
    ],
    ["Tool calls", formatInt(calls.length), null],
    [
      "Duration",
      formatDuration(report.durationMs),
      limits.timeoutMs !== undefined ? `limit ${formatDuration(limits.timeoutMs)}` : "",
    ],
    [
      "Changes",
      patch.empty ? "none" : `+${formatInt(patch.added)} \u2212${formatInt(patch.removed)}`,
      plural(patch.files.length, "file"),
    ],
    ["Policy", report.policy.mode, plural(report.policy.rules.length, "rule")],
  ];
  const callDetail = h(
    "div",
    { class: "detail" },
    deniedCount || failedCount
      ? [
          deniedCount ? h("span", { class: "bad", text: `${deniedCount} denied` }) : null,
          deniedCount && failedCount ? " \u00b7 " : null,
          failedCount ? h("span", { class: "bad", text: `${failedCount} failed` }) : null,
        ]
      : "all allowed, none failed",
  );
  const callouts: HTMLElement[] = [];
  if (report.error) {
    callouts.push(
      h("div", { class: "callout error", id: "run-error" }, [
        h("span", { class: "title", text: report.error.kind }),
        report.error.message,
      ]),
    );
  }
  for (const warning of report.warnings) {
    const body = warning.severity === "critical" ? h("strong", { text: warning.message }) : warning.message;
    callouts.push(
      h("div", { class: `callout ${warning.severity}` }, [
        h("span", { class: "title", text: warning.severity === "info" ? "Note" : "Warning" }),
        body,
      ]),
    );
  }
  const verify = report.verify;
  if (verify && !(verify.applied && verify.exitCode === 0)) {
    callouts.push(
      h("div", { class: "callout error", id: "verify-failed" }, [
        h("span", { class: "title", text: "Verify failed" }),
        h("code", { text: verify.command }),
        !verify.applied
          ? " — the patch did not apply to a clean checkout."
          : verify.exitCode === null
            ? " — the command did not finish."
            : ` exited ${verify.exitCode} with the patch applied.`,
      ]),
    );
  }
  if (patch.secretFindings.length) {
    callouts.push(
      h("div", { class: "callout critical" }, [
        h("span", { class: "title", text: "Secrets in the patch" }),
        h("strong", {
          text: `${plural(patch.secretFindings.length, "possible secret")} found in added lines. `,
        }),
        "Review the patch before applying or posting it (see Changes).",
      ]),
    );
  }
  const nav: [string, string][] = [
    ["#timeline-section", "Timeline"],
    ["#calls-section", "Tool calls"],
    ["#changes-section", "Changes"],
    ["#usage-section", "Usage"],
    ["#run-section", "Run details"],
  ];
  return h("header", { class: "panel hero", id: "summary" }, [
    h("div", { class: "brand" }, [
      h("span", { class: "logo", text: "agent-ci" }),
      h("span", { class: "mono", text: report.runId }),
      h("span", { class: "dot-sep" }),
      h("span", { text: started }),
      h("span", { class: "dot-sep" }),
      h("span", { class: "mono", text: report.model.name }),
      h("span", { class: "dot-sep" }),
      h("span", { text: `v${report.agentCiVersion}` }),
    ]),
    h("div", { class: "headline" }, [
      h(
        "span",
        { class: `outcome outcome-${report.outcome}`, id: "outcome", "data-outcome": report.outcome },
        [h("span", { class: "icon", text: OUTCOME_ICON[report.outcome] }), OUTCOME_LABELS[report.outcome]],
      ),
      h("span", { class: "exit", id: "exit-reason" }, [
        "exit ",
        h("code", { text: report.exitReason }),
        ` \u2014 ${EXIT_REASON_LABELS[report.exitReason]}`,
      ]),
    ]),
    h(
      "div",
      { class: "stats" },
      stats.map(([label, value, detail]) =>
        h("div", { class: "stat" }, [
          h("div", { class: "label", text: label }),
          h("div", { class: label === "Policy" ? "value text" : "value", text: value, title: value }),
          label === "Tool calls" ? callDetail : h("div", { class: "detail", text: detail || "\u00a0" }),
        ]),
      ),
    ),
    callouts,
    h(
      "nav",
      { class: "nav" },
      nav.map(([href, text]) => h("a", { href, text })),
    ),
  ]);
}

// ------------------------------------------------------------------------------------------- timeline
const ROW = 22;
let totalMs = Math.max(1, report.durationMs);
for (const c of calls) totalMs = Math.max(totalMs, c.startOffsetMs + c.durationMs);
for (const t of report.turns) totalMs = Math.max(totalMs, t.startOffsetMs + t.durationMs);
let zoom = 1;

/** The timeline's moving parts, once drawn: ticks follow its width, zoom changes it. */
interface TimelineParts {
  canvas: HTMLDivElement;
  axis: HTMLDivElement;
  gridHost: HTMLDivElement;
}
let timeline: TimelineParts | null = null;

type Span = { start: number; duration: number } & ({ turn: Turn } | { call: ToolCall });
interface Packed {
  placed: { item: Span; row: number }[];
  rows: number;
}

function pack(items: Span[]): Packed {
  const ends: number[] = [];
  const placed: Packed["placed"] = [];
  const minSpan = totalMs * 0.006;
  for (const item of items.slice().sort((a, b) => a.start - b.start)) {
    let row = 0;
    while (row < ends.length && (ends[row] ?? 0) > item.start) row++;
    ends[row] = item.start + Math.max(item.duration, minSpan);
    placed.push({ item, row });
  }
  return { placed, rows: Math.max(1, ends.length) };
}
function pct(ms: number): string {
  return `${(ms / totalMs) * 100}%`;
}
const TICK_STEPS = [
  100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 900000, 1800000,
  3600000,
];
function niceStep(targetMs: number): number {
  const step = TICK_STEPS.find((candidate) => candidate >= targetMs);
  if (step !== undefined) return step;
  const largest = TICK_STEPS[TICK_STEPS.length - 1] ?? 1;
  return largest * Math.ceil(targetMs / largest);
}
function tickLabel(ms: number, step: number): string {
  if (step < 1000) return `${(ms / 1000).toFixed(1)}s`;
  if (ms < 60000) return `${Math.round(ms / 1000)}s`;
  const m = Math.floor(ms / 60000);
  const s = Math.round((ms % 60000) / 1000);
  return `${m}m${s ? String(s).padStart(2, "0") + "s" : ""}`;
}
function renderTicks(): void {
  if (!timeline) return;
  const { canvas, axis, gridHost } = timeline;
  axis.textContent = "";
  gridHost.textContent = "";
  const width = canvas.getBoundingClientRect().width || 900;
  const step = niceStep(totalMs / Math.max(2, width / 90));
  for (let t = 0; t <= totalMs; t += step) {
    axis.appendChild(h("span", { class: "tl-tick", text: tickLabel(t, step), style: { left: pct(t) } }));
    if (t > 0) gridHost.appendChild(h("span", { class: "tl-gridline", style: { left: pct(t) } }));
  }
}
function setZoom(next: number): void {
  if (!timeline) return;
  zoom = Math.max(1, Math.min(64, next));
  timeline.canvas.style.width = `${zoom * 100}%`;
  byId("zoom-level").textContent = `${zoom}\u00d7`;
  renderTicks();
}

function legendItem(swatch: Child, label: string): HTMLSpanElement {
  return h("span", { class: "item" }, [swatch, label]);
}

function renderTimeline(): HTMLElement {
  const tools: string[] = [];
  for (const c of calls) if (!tools.includes(c.tool)) tools.push(c.tool);
  const lanes: { label: string; color: string; count: number; packed: Packed }[] = [];
  if (report.turns.length) {
    lanes.push({
      label: "Model",
      color: "var(--turn)",
      count: report.turns.length,
      packed: pack(
        report.turns.map((turn) => ({ start: turn.startOffsetMs, duration: turn.durationMs, turn })),
      ),
    });
  }
  for (const tool of tools) {
    const own = calls.filter((c) => c.tool === tool);
    lanes.push({
      label: tool,
      color: toolColor(tool),
      count: own.length,
      packed: pack(own.map((call) => ({ start: call.startOffsetMs, duration: call.durationMs, call }))),
    });
  }
  const labels = h("div", { class: "tl-labels" });
  const axis = h("div", { class: "tl-axis" });
  const gridHost = h("div");
  const marks = h("div", { class: "tl-marks" });
  const canvas = h("div", { class: "tl-canvas" }, [axis, marks, gridHost]);
  timeline = { canvas, axis, gridHost };
  for (const c of calls) {
    const status = callStatus(c);
    if (status === "ok") continue;
    marks.appendChild(h("span", { class: `tl-mark ${status}`, style: { left: pct(c.startOffsetMs) } }));
  }
  for (const lane of lanes) {
    const height = lane.packed.rows * ROW + 6;
    labels.appendChild(
      h("div", { class: "tl-label", style: { height: `${height}px` } }, [
        h("span", null, [h("span", { class: "dot", style: { "--c": lane.color } }), lane.label]),
        h("span", { class: "count", text: String(lane.count) }),
      ]),
    );
    const laneEl = h("div", { class: "tl-lane", style: { height: `${height}px` } });
    for (const { item, row } of lane.packed.placed) {
      const top = `${3 + row * ROW + 3}px`;
      if ("turn" in item) {
        const turn = item.turn;
        laneEl.appendChild(
          h("button", {
            class: "turn-bar",
            type: "button",
            "data-turn": turn.index,
            title:
              `Turn ${turn.index} \u00b7 ${formatDuration(turn.durationMs)} \u00b7 ${formatInt(turn.usage.outputTokens)} tokens out` +
              (turn.stopReason ? ` \u00b7 ${turn.stopReason}` : ""),
            style: { left: pct(item.start), width: pct(item.duration), top },
            onclick: () => selectTurn(turn.index),
          }),
        );
        continue;
      }
      const call = item.call;
      const position = callById.get(call.id)?.position ?? -1;
      laneEl.appendChild(
        h("button", {
          class: "call-bar",
          type: "button",
          "data-call-id": call.id,
          "data-tool": call.tool,
          "data-status": callStatus(call),
          "aria-label": `Call ${call.index + 1} ${call.tool}`,
          title:
            `#${call.index + 1} ${call.tool} \u00b7 ${summaries[position] || ""}\n` +
            `${fmtOffset(call.startOffsetMs)} \u00b7 ${formatDuration(call.durationMs)} \u00b7 ${callStatus(call)}`,
          style: { "--c": toolColor(call.tool), left: pct(item.start), width: pct(item.duration), top },
          onclick: () => selectCall(call.id, true),
        }),
      );
    }
    canvas.appendChild(laneEl);
  }
  const turnSwatch = report.turns.length
    ? legendItem(h("span", { class: "swatch turn" }), "model turn")
    : null;
  const legendTools = h("div", { class: "legend legend-tool" }, [
    turnSwatch,
    tools.map((tool) => legendItem(h("span", { class: "swatch", style: { "--c": toolColor(tool) } }), tool)),
    legendItem(h("span", { class: "swatch denied" }), "denied"),
    legendItem(
      h("span", {
        class: "swatch error",
        style: { background: "transparent", "box-shadow": "inset 0 0 0 2px var(--bad)" },
      }),
      "error",
    ),
  ]);
  const legendOutcome = h("div", { class: "legend legend-outcome" }, [
    legendItem(h("span", { class: "swatch ok" }), "succeeded"),
    legendItem(h("span", { class: "swatch error" }), "failed"),
    legendItem(h("span", { class: "swatch denied" }), "denied"),
    report.turns.length ? legendItem(h("span", { class: "swatch turn" }), "model turn") : null,
  ]);
  const colorButton = (mode: string, text: string): HTMLButtonElement =>
    h("button", {
      type: "button",
      "data-color-mode": mode,
      "aria-pressed": mode === "tool" ? "true" : "false",
      text,
      onclick: () => {
        byId("timeline").setAttribute("data-color", mode);
        for (const b of document.querySelectorAll("[data-color-mode]"))
          b.setAttribute("aria-pressed", b.getAttribute("data-color-mode") === mode ? "true" : "false");
      },
    });
  const controls = h(
    "div",
    {
      class: "seg-group",
      style: { display: "flex", gap: "10px", "align-items": "center", "flex-wrap": "wrap" },
    },
    [
      h("span", { class: "ctl-label", text: "Colour by" }),
      h("div", { class: "seg" }, [colorButton("tool", "Tool"), colorButton("outcome", "Outcome")]),
      h("span", { class: "ctl-label", text: "Zoom" }),
      h("div", { class: "seg" }, [
        h("button", { type: "button", text: "\u2212", title: "Zoom out", onclick: () => setZoom(zoom / 2) }),
        h("button", {
          type: "button",
          id: "zoom-level",
          text: "1\u00d7",
          title: "Fit",
          onclick: () => setZoom(1),
        }),
        h("button", { type: "button", text: "+", title: "Zoom in", onclick: () => setZoom(zoom * 2) }),
      ]),
    ],
  );
  const empty = !calls.length && !report.turns.length;
  const body = empty
    ? h("div", { class: "empty", text: "No turns and no tool calls were recorded." })
    : h("div", null, [
        legendTools,
        legendOutcome,
        h("div", { class: "tl" }, [labels, h("div", { class: "tl-scroll" }, canvas)]),
        h("div", { class: "tl-foot" }, [
          h("span", { text: "0:00" }),
          h("span", { text: "Click a bar to see the call \u00b7 \u2190 \u2192 to step through calls" }),
          h("span", { text: formatDuration(totalMs) }),
        ]),
      ]);
  const sub = `${plural(report.turns.length, "turn")} \u00b7 ${plural(calls.length, "tool call")} \u00b7 ${formatDuration(report.durationMs)}`;
  const section = panel("timeline-section", "Timeline", sub, body, empty ? null : controls);
  return h("div", { class: "tl-root", id: "timeline", "data-color": "tool" }, section);
}

// ------------------------------------------------------------------------------------------- diff
const LINE_CLASSES: Record<string, string> = { "+": "add", "-": "del", "\\": "note" };

function diffTable(hunks: ViewHunk[], findings: ReadonlyMap<number, string> | undefined): HTMLDivElement {
  const table = h("table", { class: "diff" });
  for (const hunk of hunks) {
    table.appendChild(
      h("tr", { class: "hunk" }, [
        h("td", { class: "ln" }),
        h("td", { class: "ln" }),
        h("td", { colspan: "2", text: hunk.header }),
      ]),
    );
    for (const [type, oldNo, newNo, text] of hunk.lines) {
      const cls = LINE_CLASSES[type] ?? "ctx";
      const finding = type === "+" && newNo !== null ? findings?.get(newNo) : undefined;
      table.appendChild(
        h("tr", { class: cls + (finding ? " secret" : "") }, [
          h("td", { class: "ln", text: oldNo === null ? "" : String(oldNo) }),
          h("td", { class: "ln", text: newNo === null ? "" : String(newNo) }),
          h("td", { class: "sign", text: type === "\\" ? "" : type }),
          h("td", null, [
            text,
            finding ? h("span", { class: "secret-flag", text: `secret: ${finding}` }) : null,
          ]),
        ]),
      );
    }
  }
  return h("div", { class: "diff-wrap" }, table);
}
function structuredToHunks(patch: CallPatch): ViewHunk[] {
  return patch.hunks.map((hunk) => {
    let oldNo = hunk.oldStart;
    let newNo = hunk.newStart;
    return {
      header: `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`,
      lines: hunk.lines.map((raw): ViewLine => {
        const type = raw.charAt(0);
        const text = raw.slice(1);
        if (type === "+") return ["+", null, newNo++, text];
        if (type === "-") return ["-", oldNo++, null, text];
        if (type === "\\") return ["\\", null, null, raw];
        return [" ", oldNo++, newNo++, text];
      }),
    };
  });
}

// ------------------------------------------------------------------------------------------- calls
let selectedId: string | null = null;
const filterState: { kind: "all" | CallStatus; text: string } = { kind: "all", text: "" };

function renderCalls(): HTMLElement {
  const list = h("div", { class: "call-list", id: "call-list" });
  const details = h(
    "aside",
    { class: "call-details", id: "call-details", "aria-live": "polite" },
    calls.length
      ? h("div", {
          class: "empty",
          text: "Select a call on the timeline or in this list to see its input, decision and result.",
        })
      : null,
  );
  if (calls.length) {
    const tbody = h("tbody");
    calls.forEach((call, i) => {
      tbody.appendChild(
        h(
          "tr",
          {
            class: "call-row",
            "data-call-id": call.id,
            "data-status": callStatus(call),
            tabindex: "0",
            onclick: () => selectCall(call.id, false),
            onkeydown: (event) => {
              if ((event as KeyboardEvent).key === "Enter") selectCall(call.id, false);
            },
          },
          [
            h("td", { class: "num faint", text: String(call.index + 1) }),
            h(
              "td",
              null,
              h("span", { class: "tool-tag", style: { "--c": toolColor(call.tool) }, text: call.tool }),
            ),
            h("td", { class: "summary", title: summaries[i] || "", text: summaries[i] || "" }),
            h("td", null, statusBadge(call)),
            h("td", { class: "num muted nowrap", text: formatDuration(call.durationMs) }),
          ],
        ),
      );
    });
    const head = h("tr", null, [
      h("th", { class: "num", text: "#" }),
      h("th", { text: "Tool" }),
      h("th", { text: "Call" }),
      h("th", { text: "Result" }),
      h("th", { class: "num", text: "Time" }),
    ]);
    list.appendChild(h("table", { class: "grid-table" }, [h("thead", null, head), tbody]));
  }
  const filterButton = (kind: typeof filterState.kind, text: string): HTMLButtonElement =>
    h("button", {
      type: "button",
      "data-filter": kind,
      "aria-pressed": kind === "all" ? "true" : "false",
      text,
      onclick: () => {
        filterState.kind = kind;
        for (const b of document.querySelectorAll("[data-filter]"))
          b.setAttribute("aria-pressed", b.getAttribute("data-filter") === kind ? "true" : "false");
        applyFilter();
      },
    });
  const search = h("input", {
    class: "search",
    type: "search",
    id: "call-search",
    placeholder: "Filter calls\u2026",
    "aria-label": "Filter calls",
  });
  search.addEventListener("input", () => {
    filterState.text = search.value.toLowerCase();
    applyFilter();
  });
  const tools = h(
    "div",
    { style: { display: "flex", gap: "10px", "align-items": "center", "flex-wrap": "wrap" } },
    [
      search,
      h("div", { class: "seg" }, [
        filterButton("all", `All ${calls.length}`),
        filterButton("denied", `Denied ${deniedCount}`),
        filterButton("error", `Failed ${failedCount}`),
      ]),
    ],
  );
  const sub =
    plural(calls.length, "call") +
    (deniedCount ? ` \u00b7 ${deniedCount} denied` : "") +
    (failedCount ? ` \u00b7 ${failedCount} failed` : "");
  if (!calls.length) {
    return panel(
      "calls-section",
      "Tool calls",
      sub,
      h("div", null, [h("div", { class: "empty", text: "No tool calls were made." }), details]),
      null,
    );
  }
  return panel(
    "calls-section",
    "Tool calls",
    sub,
    h("div", { class: "calls-layout" }, [list, details]),
    tools,
  );
}

function applyFilter(): void {
  calls.forEach((call, i) => {
    const status = callStatus(call);
    const kindOk = filterState.kind === "all" || filterState.kind === status;
    const hay = `${call.tool} ${summaries[i] || ""}`.toLowerCase();
    const visible = kindOk && (!filterState.text || hay.includes(filterState.text));
    const sel = `[data-call-id="${CSS.escape(call.id)}"]`;
    for (const el of document.querySelectorAll<HTMLElement>(`.call-bar${sel}, .call-row${sel}`)) {
      if (el.classList.contains("call-bar")) el.classList.toggle("dim", !visible);
      else el.style.display = visible ? "" : "none";
    }
  });
}

function decisionBlock(call: ToolCall): HTMLDivElement {
  const decision = call.decision;
  if (!decision) {
    return h(
      "div",
      { class: "decision" },
      "Not evaluated: the call stopped before the permission stage (unknown tool, invalid input or failed validation).",
    );
  }
  const denial = denialById.get(call.id);
  const deny = decision.behavior === "deny";
  return h("div", { class: `decision ${decision.behavior}`, id: "call-decision" }, [
    h("div", { class: "row" }, [
      badge(deny ? "denied" : "ok", deny ? "denied" : "allowed"),
      h("span", { class: "muted", text: `decided by ${decision.decidedBy}` }),
      decision.subcommand ? h("span", null, ["for ", h("code", { text: decision.subcommand })]) : null,
    ]),
    decision.rule
      ? h("div", { class: "row" }, [
          h("span", { class: "muted", text: "rule" }),
          h("code", { text: decision.rule.text }),
          h("span", { class: "faint", text: `from ${decision.rule.source}` }),
        ])
      : null,
    h("div", { class: "row" }, h("span", { text: decision.reason })),
    denial
      ? h("div", { class: "row" }, [
          h("span", { class: "muted", text: "narrowest allow rule" }),
          denial.narrowestAllowRule === null
            ? h("span", { text: "none \u2014 a deny rule wins in every mode" })
            : h("code", { text: denial.narrowestAllowRule }),
        ])
      : null,
  ]);
}

function inputBlock(call: ToolCall): Child {
  const input = call.input;
  if (call.tool === "Bash" && isRecord(input) && typeof input.command === "string") {
    const rest = Object.fromEntries(Object.entries(input).filter(([key]) => key !== "command"));
    return [
      h("pre", { class: "code", id: "call-input" }, `$ ${stripControl(input.command)}`),
      Object.keys(rest).length
        ? h("pre", { class: "code", style: { "margin-top": "6px" } }, pretty(rest))
        : null,
    ];
  }
  return h("pre", { class: "code", id: "call-input" }, pretty(input));
}

function renderCallDetails(call: ToolCall, position: number): void {
  const panelEl = byId("call-details");
  panelEl.textContent = "";
  panelEl.setAttribute("data-call-id", call.id);
  const prev = calls[position - 1];
  const next = calls[position + 1];
  add(panelEl, [
    h("div", { class: "cd-head" }, [
      h(
        "span",
        { class: "tool-tag", style: { "--c": toolColor(call.tool) } },
        h("h3", { text: `#${call.index + 1} ${call.tool}` }),
      ),
      statusBadge(call),
      call.truncated ? badge("warn", "truncated") : null,
      h("span", { class: "spacer" }),
      h("button", {
        class: "btn",
        type: "button",
        text: "\u2190 Prev",
        disabled: !prev,
        onclick: () => {
          if (prev) selectCall(prev.id, true);
        },
      }),
      h("button", {
        class: "btn",
        type: "button",
        text: "Next \u2192",
        disabled: !next,
        onclick: () => {
          if (next) selectCall(next.id, true);
        },
      }),
    ]),
    h("div", { class: "cd-summary", text: summaries[position] || call.tool }),
    kv([
      ["Call id", h("code", { text: call.id })],
      ["Turn", String(call.turn)],
      ["Started", fmtOffset(call.startOffsetMs)],
      ["Duration", formatDuration(call.durationMs)],
      ["Exit code", call.exitCode !== undefined ? String(call.exitCode) : null],
      ["Result", `${formatInt(call.resultChars)} chars${call.truncated ? " (truncated for the model)" : ""}`],
      ["Full output", call.fullOutputPath ? h("code", { text: call.fullOutputPath }) : null],
      ["Error", call.isError ? call.errorKind || "error" : null],
    ]),
    h("h4", { text: "Decision" }),
    decisionBlock(call),
    h("h4", { text: "Input" }),
    inputBlock(call),
    h("h4", { text: "Result" }),
    call.resultPreview
      ? h(
          "pre",
          { class: `code${call.isError ? " error" : ""}`, id: "call-result" },
          stripControl(call.resultPreview),
        )
      : h("div", { class: "note", text: "(empty result)" }),
    call.resultPreview && call.resultChars > call.resultPreview.length
      ? h("div", {
          class: "note",
          text:
            `Preview of ${formatInt(call.resultChars)} characters` +
            (call.fullOutputPath ? `; the whole output is in ${call.fullOutputPath}.` : "."),
        })
      : null,
    call.patch
      ? [
          h("h4", { text: `Change to ${call.patch.file}` }),
          diffTable(structuredToHunks(call.patch), undefined),
        ]
      : null,
  ]);
}

function clearSelection(): void {
  for (const el of document.querySelectorAll(".selected")) el.classList.remove("selected");
}

function selectCall(id: string, scrollList: boolean): void {
  const entry = callById.get(id);
  if (!entry) return;
  selectedId = id;
  clearSelection();
  const sel = `[data-call-id="${CSS.escape(id)}"]`;
  for (const el of document.querySelectorAll(sel)) if (el.id !== "call-details") el.classList.add("selected");
  renderCallDetails(entry.call, entry.position);
  const row = document.querySelector(`.call-row${sel}`);
  if (scrollList && row) row.scrollIntoView({ block: "nearest" });
  const bar = document.querySelector(`.call-bar${sel}`);
  if (bar && zoom > 1) bar.scrollIntoView({ block: "nearest", inline: "center" });
  try {
    history.replaceState(null, "", `#call=${encodeURIComponent(id)}`);
  } catch {
    // file:// may refuse
  }
}

function selectTurn(index: number): void {
  const turn = report.turns.find((t) => t.index === index);
  if (!turn) return;
  clearSelection();
  selectedId = null;
  document.querySelector(`.turn-bar[data-turn="${index}"]`)?.classList.add("selected");
  const panelEl = byId("call-details");
  panelEl.textContent = "";
  panelEl.removeAttribute("data-call-id");
  const own = calls.filter((c) => c.turn === index);
  add(panelEl, [
    h("div", { class: "cd-head" }, [
      h("h3", { text: `Turn ${turn.index}` }),
      turn.stopReason ? badge("neutral", turn.stopReason) : null,
      turn.attempts > 1 ? badge("warn", `${turn.attempts} attempts`) : null,
    ]),
    kv([
      ["Started", fmtOffset(turn.startOffsetMs)],
      ["Duration", formatDuration(turn.durationMs)],
      ["Input tokens", formatInt(turn.usage.inputTokens)],
      ["Output tokens", formatInt(turn.usage.outputTokens)],
      ["Cache read", formatInt(turn.usage.cacheReadInputTokens)],
      ["Cache written", formatInt(turn.usage.cacheCreationInputTokens)],
      ["Tool calls", own.length ? own.map((c) => `#${c.index + 1} ${c.tool}`).join(", ") : "none"],
    ]),
    turn.text
      ? [h("h4", { text: "Assistant text" }), h("pre", { class: "code" }, stripControl(turn.text))]
      : null,
  ]);
  byId("calls-section").scrollIntoView({ block: "start", behavior: "smooth" });
}

function step(delta: number): void {
  if (!calls.length) return;
  const position =
    selectedId === null ? (delta > 0 ? -1 : calls.length) : (callById.get(selectedId)?.position ?? -1);
  const next = calls[Math.max(0, Math.min(calls.length - 1, position + delta))];
  if (next) selectCall(next.id, true);
}

// ------------------------------------------------------------------------------------------- changes
function blocks(added: number, removed: number): HTMLSpanElement {
  const total = added + removed;
  const el = h("span", { class: "blocks", "aria-hidden": "true" });
  const a = total ? Math.round((added / total) * 5) : 0;
  const d = total ? Math.min(5 - a, Math.round((removed / total) * 5)) : 0;
  for (let i = 0; i < 5; i++) el.appendChild(h("i", { class: i < a ? "a" : i < a + d ? "d" : "" }));
  return el;
}
function statusBadgeFor(status: string): HTMLSpanElement {
  const kind =
    status === "added"
      ? "ok"
      : status === "deleted"
        ? "denied"
        : status === "modified"
          ? "neutral"
          : "accent";
  return badge(kind, status);
}
function fileTitle(file: { path: string; oldPath?: string | undefined }): string {
  return file.oldPath ? `${file.oldPath} \u2192 ${file.path}` : file.path;
}
function renderChanges(): HTMLElement {
  const patch = report.patch;
  const view = data.patch;
  const body = h("div", { class: "section-body" });
  if (patch.empty) {
    body.appendChild(h("div", { class: "empty", text: "The run produced no changes." }));
  } else {
    const findingsByFile = new Map<string, Map<number, string>>();
    for (const f of patch.secretFindings) {
      const lines = findingsByFile.get(f.file) ?? new Map<number, string>();
      findingsByFile.set(f.file, lines);
      if (f.line !== undefined) lines.set(f.line, f.kind);
    }
    if (patch.secretFindings.length) {
      body.appendChild(
        h("div", { class: "callout critical", style: { "margin-top": "0", "margin-bottom": "12px" } }, [
          h("span", { class: "title", text: "Possible secrets" }),
          patch.secretFindings.map((f, i) => [
            i ? ", " : "",
            h("code", { text: f.file + (f.line !== undefined ? `:${f.line}` : "") }),
            ` (${f.kind})`,
          ]),
          ". The patch file is unchanged; secret values are masked in this view.",
        ]),
      );
    }
    const list = h("div", { class: "file-list" });
    patch.files.forEach((file, i) => {
      list.appendChild(
        h("a", { class: "file-row", href: `#file-${i}` }, [
          statusBadgeFor(file.status),
          h("span", { class: "path", text: fileTitle(file) }),
          file.binary
            ? badge("neutral", "binary")
            : [
                h("span", { class: "plus", text: `+${formatInt(file.added)}` }),
                h("span", { class: "minus", text: `\u2212${formatInt(file.removed)}` }),
                blocks(file.added, file.removed),
              ],
        ]),
      );
    });
    body.appendChild(list);
    if (!view.available) {
      body.appendChild(
        h("div", { class: "callout info" }, [
          h("span", { class: "title", text: "Patch not included" }),
          "patch.diff was not found next to report.json, so only the file list is shown.",
        ]),
      );
    } else {
      view.files.forEach((file, i) => {
        const content = file.binary
          ? h("div", { class: "binary", text: "Binary file (not shown)." })
          : !file.hunks.length
            ? h("div", { class: "binary", text: "No textual change (mode change, rename or empty file)." })
            : diffTable(file.hunks, findingsByFile.get(file.path));
        const open = view.files.length <= 10 && file.lines < 1500;
        body.appendChild(
          h("details", { class: "file", id: `file-${i}`, open }, [
            h("summary", null, [
              statusBadgeFor(file.status),
              h("span", { class: "path", text: fileTitle(file) }),
              file.binary
                ? null
                : [
                    h("span", { class: "plus", text: `+${formatInt(file.added)}` }),
                    h("span", { class: "minus", text: `\u2212${formatInt(file.removed)}` }),
                  ],
            ]),
            content,
            file.omittedLines
              ? h("div", {
                  class: "note",
                  style: { padding: "6px 12px" },
                  text: `${formatInt(file.omittedLines)} more lines not shown; see patch.diff.`,
                })
              : null,
          ]),
        );
      });
      if (view.truncated)
        body.appendChild(
          h("div", {
            class: "note",
            text: "The patch is long; some files or lines are not shown here. patch.diff has all of it.",
          }),
        );
    }
  }
  let expand: HTMLElement | null = null;
  if (view.available && view.files.length > 1) {
    const setAll = (open: boolean) => {
      for (const d of document.querySelectorAll<HTMLDetailsElement>("details.file")) d.open = open;
    };
    expand = h("div", { class: "seg" }, [
      h("button", { type: "button", text: "Expand all", onclick: () => setAll(true) }),
      h("button", { type: "button", text: "Collapse all", onclick: () => setAll(false) }),
    ]);
  }
  const sub = patch.empty
    ? "no changes"
    : `${plural(patch.files.length, "file")} \u00b7 +${formatInt(patch.added)} \u2212${formatInt(patch.removed)} \u00b7 ` +
      `${formatBytes(patch.bytes)} \u00b7 sha256 ${patch.sha256.slice(0, 12)}`;
  return panel("changes-section", "Changes", sub, body, expand);
}

// ------------------------------------------------------------------------------------------- usage
function renderUsage(): HTMLElement {
  const usage = report.usage;
  const totals = report.turns.map(
    ({ usage: u }) => u.inputTokens + u.outputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens,
  );
  const max = Math.max(1, ...totals);
  const chart = h("div", { class: "chart", "aria-label": "Tokens per turn" });
  for (const t of report.turns) {
    const u = t.usage;
    const seg = (cls: string, n: number) =>
      n ? h("div", { class: cls, style: { height: `${(n / max) * 140}px` } }) : null;
    chart.appendChild(
      h(
        "div",
        {
          class: "col",
          title:
            `Turn ${t.index}: ${formatInt(u.inputTokens)} in, ${formatInt(u.outputTokens)} out, ` +
            `${formatInt(u.cacheReadInputTokens)} cache read, ${formatInt(u.cacheCreationInputTokens)} cache write`,
        },
        [
          seg("seg-cr", u.cacheReadInputTokens),
          seg("seg-cw", u.cacheCreationInputTokens),
          seg("seg-in", u.inputTokens),
          seg("seg-out", u.outputTokens),
        ],
      ),
    );
  }
  const rows = report.turns.map((t) =>
    h("tr", null, [
      h("td", { class: "num", text: String(t.index) }),
      h("td", { text: t.stopReason || "\u2014" }),
      h("td", { class: "num", text: formatInt(t.usage.inputTokens) }),
      h("td", { class: "num", text: formatInt(t.usage.outputTokens) }),
      h("td", { class: "num", text: formatInt(t.usage.cacheReadInputTokens) }),
      h("td", { class: "num", text: formatInt(t.usage.cacheCreationInputTokens) }),
      h("td", { class: "num", text: String(t.attempts) }),
      h("td", { class: "num", text: formatDuration(t.durationMs) }),
    ]),
  );
  const model = report.model;
  const swatch = (cls: string, label: string) =>
    h("span", { class: "item" }, [h("span", { class: `swatch ${cls}` }), ` ${label}`]);
  const left = h("div", null, [
    kv([
      ["Estimated cost", h("strong", { text: formatUsd(report.costUsd) })],
      ["Input tokens", formatInt(usage.inputTokens)],
      ["Output tokens", formatInt(usage.outputTokens)],
      ["Cache read", formatInt(usage.cacheReadInputTokens)],
      ["Cache written", formatInt(usage.cacheCreationInputTokens)],
      ["Turns", formatInt(report.turns.length)],
      ["Model", h("code", { text: model.name })],
      ["Driver", model.driver],
      ["Max tokens", model.maxTokens !== undefined ? formatInt(model.maxTokens) : null],
      ["Thinking budget", model.thinkingBudget !== undefined ? formatInt(model.thinkingBudget) : null],
    ]),
    report.turns.length
      ? [
          h("h4", { text: "Tokens per turn" }),
          chart,
          h("div", { class: "chart-legend" }, [
            swatch("in", "input"),
            swatch("out", "output"),
            swatch("cr", "cache read"),
            swatch("cw", "cache write"),
          ]),
        ]
      : null,
  ]);
  const headings = ["Turn", "Stop", "In", "Out", "Cache read", "Cache write", "Tries", "Time"];
  const right = report.turns.length
    ? h(
        "div",
        { class: "usage-table" },
        h("table", { class: "grid-table" }, [
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              headings.map((text, i) => h("th", { class: i === 1 ? "" : "num", text })),
            ),
          ),
          h("tbody", null, rows),
        ]),
      )
    : h("div", { class: "empty", text: "No model turns." });
  const sub = `${formatUsd(report.costUsd)} \u00b7 ${formatInt(usage.inputTokens + usage.outputTokens)} tokens`;
  return panel(
    "usage-section",
    "Usage",
    sub,
    h("div", { class: "section-body" }, h("div", { class: "usage-grid" }, [left, right])),
    null,
  );
}

// ------------------------------------------------------------------------------------------- run details
function check(ok: boolean, text: string, detail?: string): HTMLLIElement {
  return h("li", null, [
    h("span", { class: ok ? "yes" : "no", text: ok ? "\u2713" : "\u2715" }),
    h("span", null, [text, detail ? h("span", { class: "muted", text: ` ${detail}` }) : null]),
  ]);
}
function card(title: string, content: Child): HTMLDivElement {
  return h("div", { class: "card" }, [h("h3", { text: title }), content]);
}
function containerCard(): HTMLDivElement {
  const hd = report.hardening;
  const image = report.image;
  let items: (HTMLLIElement | null)[] = [];
  if (hd) {
    const root = hd.user === "0" || hd.user === "root" || hd.user.startsWith("0:") || hd.user === "";
    const added = hd.capAdd && hd.capAdd.length ? hd.capAdd : null;
    items = [
      check(!root, "Non-root user", hd.user || "(image default)"),
      check(
        hd.capDrop.includes("ALL") && !added,
        "Capabilities dropped",
        hd.capDrop.join(", ") + (added ? `; added ${added.join(", ")}` : ""),
      ),
      check(hd.noNewPrivileges, "no-new-privileges"),
      check(hd.readonlyRootfs, "Read-only root filesystem"),
      check(hd.networkMode === "none", "Network", hd.networkMode),
      check(
        hd.pidsLimit !== null && hd.pidsLimit > 0,
        "Process limit",
        hd.pidsLimit === null ? "none" : String(hd.pidsLimit),
      ),
      check(
        hd.memoryBytes !== null,
        "Memory limit",
        hd.memoryBytes === null ? "none" : formatBytes(hd.memoryBytes),
      ),
      check(hd.nanoCpus !== null, "CPU limit", hd.nanoCpus === null ? "none" : `${hd.nanoCpus / 1e9} CPUs`),
      check(hd.init, "Init process (reaps zombies)"),
      hd.seccomp ? check(hd.seccomp !== "unconfined", "Seccomp", hd.seccomp) : null,
      hd.runtime ? check(true, "Runtime", hd.runtime) : null,
      hd.userns ? check(true, "User namespace", hd.userns) : null,
    ];
  }
  const whereText = {
    tool_gate: "tool gate only",
    both: "container + gate",
    container: "container",
  } as const;
  return card("Container", [
    image
      ? kv([
          ["Image", h("code", { text: image.name })],
          ["Id", image.id ? h("code", { text: image.id.slice(0, 19) }) : null],
          ["Digest", image.digest ? h("code", { text: image.digest }) : null],
        ])
      : null,
    items.length ? h("ul", { class: "checks", style: { "margin-top": "8px" } }, items) : null,
    hd && hd.enforcedAt.length
      ? [
          h("h4", { text: "Rules enforced" }),
          h(
            "table",
            { class: "grid-table rules" },
            h(
              "tbody",
              null,
              hd.enforcedAt.map((e) =>
                h("tr", null, [
                  h("td", null, h("code", { text: e.rule })),
                  h("td", null, badge(e.where === "tool_gate" ? "neutral" : "ok", whereText[e.where])),
                  h("td", { class: "muted", text: e.how || "" }),
                ]),
              ),
            ),
          ),
        ]
      : null,
  ]);
}
function renderRun(): HTMLElement {
  const ws = report.workspace;
  const cards: HTMLDivElement[] = [];
  cards.push(
    card("Workspace", [
      kv([
        ["Directory", h("code", { text: ws.path })],
        ["Repository", ws.repo ? h("code", { text: ws.repo }) : null],
        ["Base commit", ws.baseCommit ? h("code", { text: ws.baseCommit.slice(0, 12) }) : null],
        ["Copied in", `${plural(ws.filesCopied, "file")} \u00b7 ${formatBytes(ws.bytesCopied)}`],
        ["Skipped", plural(ws.skipped.length, "file")],
      ]),
      ws.skipped.length
        ? h(
            "ul",
            { class: "checks", style: { "margin-top": "8px" } },
            ws.skipped
              .slice(0, 50)
              .map((s) =>
                h("li", null, [h("code", { text: s.path }), h("span", { class: "muted", text: s.reason })]),
              ),
          )
        : null,
    ]),
  );
  if (report.image || report.hardening) cards.push(containerCard());
  const policy = report.policy;
  const behaviorBadge = { allow: "ok", deny: "denied", ask: "warn" } as const;
  cards.push(
    card("Policy", [
      kv([
        ["Mode", h("code", { text: policy.mode })],
        ["Rules", String(policy.rules.length)],
        ["Ignored", policy.ignored.length ? String(policy.ignored.length) : null],
      ]),
      policy.rules.length
        ? h(
            "table",
            { class: "grid-table rules", style: { "margin-top": "8px" } },
            h(
              "tbody",
              null,
              policy.rules.map((r) =>
                h("tr", null, [
                  h("td", null, badge(behaviorBadge[r.behavior], r.behavior)),
                  h("td", null, h("code", { text: r.text })),
                  h("td", { class: "muted", text: r.source }),
                ]),
              ),
            ),
          )
        : null,
      policy.ignored.length
        ? [
            h("h4", { text: "Ignored rules" }),
            h(
              "table",
              { class: "grid-table rules" },
              h(
                "tbody",
                null,
                policy.ignored.map((r) =>
                  h("tr", null, [
                    h("td", null, h("code", { text: r.text })),
                    h("td", { class: "muted", text: r.source }),
                    h("td", { text: r.reason }),
                  ]),
                ),
              ),
            ),
          ]
        : null,
    ]),
  );
  const limits = report.limits;
  cards.push(
    card(
      "Run",
      kv([
        ["Run id", h("code", { text: report.runId })],
        ["agent-ci", report.agentCiVersion],
        ["Started", report.startedAt],
        ["Ended", report.endedAt],
        ["Duration", formatDuration(report.durationMs)],
        ["Max turns", limits.maxTurns !== undefined ? formatInt(limits.maxTurns) : "none"],
        ["Budget", limits.maxBudgetUsd !== undefined ? formatUsd(limits.maxBudgetUsd) : "none"],
        ["Timeout", limits.timeoutMs !== undefined ? formatDuration(limits.timeoutMs) : "none"],
        ["Report schema", `v${report.schemaVersion}`],
      ]),
    ),
  );
  const v = report.verify;
  if (v) {
    const passed = v.applied && v.exitCode === 0;
    cards.push(
      card("Verify", [
        h("div", { class: "row" }, [badge(passed ? "ok" : "denied", passed ? "passed" : "failed")]),
        kv([
          ["Command", h("code", { text: v.command })],
          ["Patch applied", v.applied ? "yes" : "no"],
          ["Exit code", v.exitCode === null ? "did not finish" : String(v.exitCode)],
          ["Duration", formatDuration(v.durationMs)],
        ]),
        v.outputTail
          ? [
              h("h4", { text: "Output (tail)" }),
              h("pre", { class: `code${passed ? "" : " error"}` }, stripControl(v.outputTail)),
            ]
          : null,
      ]),
    );
  }
  const todoIcon = { completed: "\u2713", in_progress: "\u25d0", pending: "\u25cb" } as const;
  if (report.todos && report.todos.length) {
    cards.push(
      card(
        "Todos",
        h(
          "ul",
          { class: "checks" },
          report.todos.map((t) =>
            h("li", null, [
              h("span", { class: t.status === "completed" ? "yes" : "faint", text: todoIcon[t.status] }),
              h("span", { text: t.content }),
            ]),
          ),
        ),
      ),
    );
  }
  return panel(
    "run-section",
    "Run details",
    null,
    h("div", { class: "section-body" }, h("div", { class: "cards" }, cards)),
    null,
  );
}

// ------------------------------------------------------------------------------------------- boot
const app = byId("app");
app.textContent = "";
add(app, [
  renderHeader(),
  renderTimeline(),
  renderCalls(),
  renderChanges(),
  renderUsage(),
  renderRun(),
  h("footer", {
    text: `agent-ci ${report.agentCiVersion} \u00b7 report schema v${report.schemaVersion} \u00b7 generated from report.json`,
  }),
]);
renderTicks();
window.addEventListener("resize", renderTicks);
document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (target instanceof Element && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
  if (event.key === "ArrowRight" || event.key === "j") {
    step(1);
    event.preventDefault();
  }
  if (event.key === "ArrowLeft" || event.key === "k") {
    step(-1);
    event.preventDefault();
  }
});
const hashCall = /^#call=(.+)$/.exec(location.hash)?.[1];
if (hashCall !== undefined) selectCall(decodeURIComponent(hashCall), true);
document.documentElement.setAttribute("data-ready", "true");
