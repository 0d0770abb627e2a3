// The timeline: a lane for the run's phases (where the first minutes went: images, container, copy-in…), one
// for model turns and one per tool of the main loop, bars packed into rows, ticks that follow the zoom. A
// subagent's calls are nested under the lane of the Task call that started it: one indented lane per
// subagent, its span drawn behind its calls.
import { formatDuration, formatInt } from "../format.js";
import type { Phase, Subagent, ToolCall, Turn } from "../schema.js";
import { byId, type Child, h } from "./dom.js";
import {
  callById,
  calls,
  callStatus,
  fmtOffset,
  panel,
  plural,
  report,
  summaries,
  toolColor,
} from "./page.js";

const ROW = 22;
const phases = report.phases ?? [];
/** The span the timeline shows: the run, or longer when a call, turn or phase ends after it. */
const totalMs = [...calls, ...report.turns, ...phases].reduce(
  (max, span) => Math.max(max, span.startOffsetMs + span.durationMs),
  Math.max(1, report.durationMs),
);
let zoom = 1;

/** Zoomed in, the selected bar may be out of view and is scrolled to. */
export function isZoomed(): boolean {
  return zoom > 1;
}

/** The timeline's moving parts, once drawn: ticks follow its width, zoom changes it. */
interface TimelineParts {
  canvas: HTMLDivElement;
  axis: HTMLDivElement;
  gridHost: HTMLDivElement;
}
let timeline: TimelineParts | null = null;

type Span = { start: number; duration: number } & ({ turn: Turn } | { call: ToolCall } | { phase: Phase });
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
export function renderTicks(): void {
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

/** What a click on a bar selects, in the call list's details panel. */
export interface TimelineSelect {
  call(id: string): void;
  turn(index: number): void;
}

interface Lane {
  label: string;
  color: string;
  count: number;
  packed: Packed;
  /** A subagent's lane: the Task call that started it, its record, and the span it ran. */
  nested?: { parent: string; agent?: Subagent; type: string };
}

const subagentByTask = new Map((report.subagents ?? []).map((a) => [a.toolUseId, a] as const));

/** A subagent's lane: its calls, labelled with its type, under its Task call. */
function subagentLane(parent: string, own: ToolCall[]): Lane {
  const agent = subagentByTask.get(parent);
  const type = agent?.type ?? own[0]?.agent ?? "subagent";
  return {
    label: `\u21b3 ${type}`,
    color: "var(--turn)",
    count: own.length,
    packed: pack(own.map((call) => ({ start: call.startOffsetMs, duration: call.durationMs, call }))),
    nested: { parent, agent, type },
  };
}

/** A subagent's calls, by the Task call that started it; a recorded subagent without calls has none. */
function callsByParent(): Map<string, ToolCall[]> {
  const children = new Map<string, ToolCall[]>();
  for (const c of calls) {
    if (c.parentToolUseId === undefined) continue;
    const siblings = children.get(c.parentToolUseId);
    if (siblings) siblings.push(c);
    else children.set(c.parentToolUseId, [c]);
  }
  for (const agent of report.subagents ?? [])
    if (!children.has(agent.toolUseId)) children.set(agent.toolUseId, []);
  return children;
}

/** The lanes, top to bottom: phases, model turns, one per main-loop tool followed by its subagents. */
function buildLanes(): Lane[] {
  // A subagent's calls, by the Task call that started it; the main loop's tools get the top-level lanes.
  const children = callsByParent();
  const mainCalls = calls.filter((c) => c.parentToolUseId === undefined);
  const mainTools: string[] = [];
  for (const c of mainCalls) if (!mainTools.includes(c.tool)) mainTools.push(c.tool);
  const lanes: Lane[] = [];
  if (phases.length) {
    lanes.push({
      label: "Phases",
      color: "var(--phase)",
      count: phases.length,
      // One row: phases follow each other, and a short one is read from its title rather than pushed down.
      packed: {
        placed: phases.map((phase) => ({
          item: { start: phase.startOffsetMs, duration: phase.durationMs, phase },
          row: 0,
        })),
        rows: 1,
      },
    });
  }
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
  const placedAgents = new Set<string>();
  for (const tool of mainTools) {
    const own = mainCalls.filter((c) => c.tool === tool);
    lanes.push({
      label: tool,
      color: toolColor(tool),
      count: own.length,
      packed: pack(own.map((call) => ({ start: call.startOffsetMs, duration: call.durationMs, call }))),
    });
    for (const call of own) {
      const nested = children.get(call.id);
      if (!nested) continue;
      lanes.push(subagentLane(call.id, nested));
      placedAgents.add(call.id);
    }
  }
  // Calls of a subagent whose Task call the record lacks still get a lane, at the end.
  for (const [parent, nested] of children)
    if (!placedAgents.has(parent)) lanes.push(subagentLane(parent, nested));
  return lanes;
}

/** The marks above the lanes: failed or denied calls, network connections and context compactions. */
function renderMarks(marks: HTMLDivElement): void {
  for (const c of calls) {
    const status = callStatus(c);
    if (status === "ok") continue;
    marks.appendChild(h("span", { class: `tl-mark ${status}`, style: { left: pct(c.startOffsetMs) } }));
  }
  // --network allowlist: a mark where each connection attempt began, refused ones in red.
  const runStart = Date.parse(report.startedAt);
  for (const c of report.egress?.connections ?? []) {
    const title = `${c.decision === "denied" ? "Network refused" : "Network"}: ${c.host}:${c.port}${c.reason ? ` — ${c.reason}` : ""}`;
    marks.appendChild(
      h("span", {
        class: `tl-mark egress ${c.decision}`,
        title,
        style: { left: pct(Math.max(0, Date.parse(c.startedAt) - runStart)) },
      }),
    );
  }
  for (const c of report.compactions ?? []) {
    const title = `Turn ${c.turn}: context ${c.strategy} · ${formatInt(c.tokensBefore)} → ${formatInt(c.tokensAfter)} tokens`;
    marks.appendChild(h("span", { class: "tl-mark compaction", title, style: { left: pct(c.offsetMs) } }));
  }
}

/** One bar of a lane at its packed row: a phase (not clickable), a model turn or a tool call. */
function renderBar(item: Span, row: number, select: TimelineSelect): HTMLElement {
  const top = `${3 + row * ROW + 3}px`;
  if ("phase" in item) {
    const { name, durationMs } = item.phase;
    return h("span", {
      class: "phase-bar",
      "data-phase": name,
      title: `${name} \u00b7 ${fmtOffset(item.start)} \u00b7 ${formatDuration(durationMs)}`,
      text: `${name} ${formatDuration(durationMs)}`,
      style: { left: pct(item.start), width: pct(item.duration), top },
    });
  }
  if ("turn" in item) {
    const turn = item.turn;
    return h("button", {
      class: "turn-bar",
      type: "button",
      "data-turn": turn.index,
      title:
        `Turn ${turn.index} \u00b7 ${formatDuration(turn.durationMs)} \u00b7 ${formatInt(turn.usage.outputTokens)} tokens out` +
        (turn.stopReason ? ` \u00b7 ${turn.stopReason}` : ""),
      style: { left: pct(item.start), width: pct(item.duration), top },
      onclick: () => select.turn(turn.index),
    });
  }
  const call = item.call;
  const position = callById.get(call.id)?.position ?? -1;
  return h("button", {
    class: "call-bar",
    type: "button",
    "data-call-id": call.id,
    "data-tool": call.tool,
    "data-status": callStatus(call),
    ...(call.parentToolUseId !== undefined ? { "data-parent-call-id": call.parentToolUseId } : {}),
    "aria-label": `Call ${call.index + 1} ${call.tool}${call.agent ? ` (${call.agent} subagent)` : ""}`,
    title:
      `#${call.index + 1} ${call.tool} \u00b7 ${summaries[position] || ""}\n` +
      `${fmtOffset(call.startOffsetMs)} \u00b7 ${formatDuration(call.durationMs)} \u00b7 ${callStatus(call)}`,
    style: { "--c": toolColor(call.tool), left: pct(item.start), width: pct(item.duration), top },
    onclick: () => select.call(call.id),
  });
}

/** One lane: its label (appended to `labels`) and its row of bars, behind a subagent's span when it has one. */
function renderLane(lane: Lane, labels: HTMLDivElement, select: TimelineSelect): HTMLDivElement {
  const height = lane.packed.rows * ROW + 6;
  const nested = lane.nested;
  const agentTitle = nested
    ? `${nested.type} subagent` +
      (nested.agent
        ? `: ${nested.agent.description} \u00b7 ${nested.agent.status}${nested.agent.background ? " \u00b7 background" : ""} \u00b7 ${nested.agent.model}`
        : "")
    : undefined;
  const nestedAttrs = nested ? { "data-parent-call-id": nested.parent, title: agentTitle } : {};
  labels.appendChild(
    h(
      "div",
      { class: nested ? "tl-label sub" : "tl-label", style: { height: `${height}px` }, ...nestedAttrs },
      [
        h("span", null, [h("span", { class: "dot", style: { "--c": lane.color } }), lane.label]),
        h("span", { class: "count", text: String(lane.count) }),
      ],
    ),
  );
  const laneEl = h("div", {
    class: nested ? "tl-lane sub" : "tl-lane",
    style: { height: `${height}px` },
    ...nestedAttrs,
  });
  if (nested?.agent) {
    const { startOffsetMs, durationMs = totalMs - startOffsetMs, status } = nested.agent;
    laneEl.appendChild(
      h("span", {
        class: "agent-span",
        "data-status": status,
        title: agentTitle,
        style: { left: pct(startOffsetMs), width: pct(durationMs) },
      }),
    );
  }
  for (const { item, row } of lane.packed.placed) laneEl.appendChild(renderBar(item, row, select));
  return laneEl;
}

/** The two legends, one per colour mode: by tool, and by outcome. */
function renderLegends(): HTMLDivElement[] {
  const tools: string[] = [];
  for (const c of calls) if (!tools.includes(c.tool)) tools.push(c.tool);
  const turnSwatch = report.turns.length
    ? legendItem(h("span", { class: "swatch turn" }), "model turn")
    : null;
  const phaseSwatch = phases.length ? legendItem(h("span", { class: "swatch phase" }), "phase") : null;
  const legendTools = h("div", { class: "legend legend-tool" }, [
    phaseSwatch,
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
    phaseSwatch?.cloneNode(true) ?? null,
  ]);
  return [legendTools, legendOutcome];
}

/** The colour-mode switch and the zoom buttons. */
function renderControls(): HTMLDivElement {
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
  return h(
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
}

export function renderTimeline(select: TimelineSelect): HTMLElement {
  const lanes = buildLanes();
  const labels = h("div", { class: "tl-labels" });
  const axis = h("div", { class: "tl-axis" });
  const gridHost = h("div");
  const marks = h("div", { class: "tl-marks" });
  const canvas = h("div", { class: "tl-canvas" }, [axis, marks, gridHost]);
  timeline = { canvas, axis, gridHost };
  renderMarks(marks);
  for (const lane of lanes) canvas.appendChild(renderLane(lane, labels, select));
  const [legendTools, legendOutcome] = renderLegends();
  const controls = renderControls();
  const empty = !calls.length && !report.turns.length && !phases.length;
  const body = empty
    ? h("div", { class: "empty", text: "No phases, turns or tool calls were recorded." })
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
