// The call list with its filter, and the details panel for the selected call or turn.
import { formatDuration, formatInt, stripControl } from "../format.js";
import type { ToolCall } from "../schema.js";
import { diffTable, structuredToHunks } from "./diff-view.js";
import { add, byId, type Child, h } from "./dom.js";
import {
  badge,
  callById,
  calls,
  callStatus,
  type CallStatus,
  denialById,
  deniedCount,
  failedCount,
  fmtOffset,
  isRecord,
  kv,
  panel,
  plural,
  pretty,
  report,
  statusBadge,
  summaries,
  toolColor,
} from "./page.js";
import { isZoomed } from "./timeline.js";

let selectedId: string | null = null;
const filterState: { kind: "all" | CallStatus; text: string } = { kind: "all", text: "" };

/** The list of calls, one row each, a subagent's calls indented under their Task call. */
function callTable(): HTMLTableElement {
  const tbody = h("tbody");
  calls.forEach((call, i) => {
    tbody.appendChild(
      h(
        "tr",
        {
          // A subagent's call follows its Task call in the record, indented under it.
          class: call.parentToolUseId !== undefined ? "call-row sub" : "call-row",
          "data-call-id": call.id,
          "data-parent-call-id": call.parentToolUseId,
          "data-status": callStatus(call),
          tabindex: "0",
          onclick: () => selectCall(call.id, false),
          onkeydown: (event) => {
            if ((event as KeyboardEvent).key === "Enter") selectCall(call.id, false);
          },
        },
        [
          h("td", { class: "num faint", text: String(call.index + 1) }),
          h("td", null, [
            h("span", { class: "tool-tag", style: { "--c": toolColor(call.tool) }, text: call.tool }),
            call.agent ? h("span", { class: "agent-tag", text: call.agent }) : null,
          ]),
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
  return h("table", { class: "grid-table" }, [h("thead", null, head), tbody]);
}

/** The filter bar: a search box and the all / denied / failed switch. */
function callFilters(): HTMLDivElement {
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
  return h("div", { style: { display: "flex", gap: "10px", "align-items": "center", "flex-wrap": "wrap" } }, [
    search,
    h("div", { class: "seg" }, [
      filterButton("all", `All ${calls.length}`),
      filterButton("denied", `Denied ${deniedCount}`),
      filterButton("error", `Failed ${failedCount}`),
    ]),
  ]);
}

export function renderCalls(): HTMLElement {
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
  if (calls.length) list.appendChild(callTable());
  const tools = callFilters();
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

export function selectCall(id: string, scrollList: boolean): void {
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
  if (bar && isZoomed()) bar.scrollIntoView({ block: "nearest", inline: "center" });
  try {
    history.replaceState(null, "", `#call=${encodeURIComponent(id)}`);
  } catch {
    // file:// may refuse
  }
}

export function selectTurn(index: number): void {
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

export function step(delta: number): void {
  if (!calls.length) return;
  const position =
    selectedId === null ? (delta > 0 ? -1 : calls.length) : (callById.get(selectedId)?.position ?? -1);
  const next = calls[Math.max(0, Math.min(calls.length - 1, position + delta))];
  if (next) selectCall(next.id, true);
}
