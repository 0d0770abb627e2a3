// The Usage section: totals, tokens per turn as a chart and a table.
import { formatDuration, formatInt, formatUsd } from "../format.js";
import { h } from "./dom.js";
import { kv, panel, report } from "./page.js";

export function renderUsage(): HTMLElement {
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
