// What every part of the page shares: the data block, the report, and small builders (badges, panels,
// key-value lists) and per-call facts (status, colour, position).
import { formatInt, stripControl } from "../format.js";
import type { ReportPageData } from "../html-data.js";
import type { Denial, ToolCall } from "../schema.js";
import { byId, type Child, h } from "./dom.js";

export const data = JSON.parse(byId("report-data").textContent || "{}") as ReportPageData;
export const report = data.report;
export const calls = report.toolCalls;
export const summaries = data.callSummaries;
const TOOL_COLORS: ReadonlyMap<string, string> = new Map([
  ["Bash", "#6366f1"],
  ["Read", "#0ea5e9"],
  ["Edit", "#f59e0b"],
  ["MultiEdit", "#f59e0b"],
  ["Write", "#f97316"],
  ["Grep", "#14b8a6"],
  ["Glob", "#22c55e"],
  ["TodoWrite", "#a855f7"],
  ["TaskOutput", "#818cf8"],
  ["KillShell", "#64748b"],
]);
const EXTRA_COLORS = ["#ec4899", "#84cc16", "#06b6d4", "#eab308", "#8b5cf6", "#10b981", "#f43f5e"];

export type CallStatus = "ok" | "error" | "denied";

export function fmtOffset(ms: number): string {
  const s = ms / 1000;
  const m = Math.floor(s / 60);
  const rest = s - m * 60;
  return `+${m}:${rest < 10 ? "0" : ""}${rest.toFixed(1)}`;
}
export function plural(n: number, word: string): string {
  return `${formatInt(n)} ${word}${n === 1 ? "" : "s"}`;
}
export function callStatus(call: ToolCall): CallStatus {
  if (call.decision?.behavior === "deny") return "denied";
  if (call.isError) return "error";
  return "ok";
}
let extraIndex = 0;
const extraColors = new Map<string, string>();
export function toolColor(tool: string): string {
  const known = TOOL_COLORS.get(tool) ?? extraColors.get(tool);
  if (known !== undefined) return known;
  const color = EXTRA_COLORS[extraIndex++ % EXTRA_COLORS.length] ?? "";
  extraColors.set(tool, color);
  return color;
}
export function pretty(value: unknown): string {
  if (typeof value === "string") return stripControl(value);
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
export function badge(kind: string, text: string): HTMLSpanElement {
  return h("span", { class: `badge ${kind}`, text });
}
export function statusBadge(call: ToolCall): HTMLSpanElement {
  const status = callStatus(call);
  if (status === "denied") return badge("denied", "denied");
  if (status === "error") return badge("error", call.errorKind ? `error: ${call.errorKind}` : "error");
  return badge("ok", call.exitCode !== undefined ? `exit ${call.exitCode}` : "ok");
}
export function panel(id: string, title: string, sub: string | null, body: Child, tools: Child): HTMLElement {
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
export function kv(pairs: [string, Child][]): HTMLDListElement {
  const dl = h("dl", { class: "kv" });
  for (const [term, value] of pairs) {
    if (value === null || value === undefined || value === "") continue;
    dl.appendChild(h("dt", { text: term }));
    dl.appendChild(h("dd", null, value));
  }
  return dl;
}
export const denialById = new Map<string, Denial>(report.denials.map((denial) => [denial.callId, denial]));
export const callById = new Map<string, { call: ToolCall; position: number }>(
  calls.map((call, position) => [call.id, { call, position }]),
);
export const failedCount = calls.filter((c) => callStatus(c) === "error").length;
export const deniedCount = calls.filter((c) => callStatus(c) === "denied").length;
