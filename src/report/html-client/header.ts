// The summary header: outcome, exit reason, headline figures, callouts (error, warnings, verify, secrets).
import { EXIT_REASON_LABELS, formatDuration, formatInt, formatUsd, OUTCOME_LABELS } from "../format.js";
import type { Outcome } from "../schema.js";
import { h } from "./dom.js";
import { calls, deniedCount, failedCount, plural, report } from "./page.js";

/** What the model was told: the memory files, the git snapshot and the system prompt (report.json `context`). */
function renderContext(): HTMLElement | null {
  const context = report.context;
  if (!context) return null;
  const { memory, git, systemPrompt } = context;
  const start = memory.files.filter((f) => f.at === "start" && !f.agent).length;
  const nested = memory.files.filter((f) => f.at === "nested").length;
  const summary = [
    `${plural(start, "memory file")} at the start${nested ? `, ${nested} more as tools reached them` : ""}`,
    `project memory: ${memory.project}`,
    git
      ? `git ${git.branch}, ${git.status ? plural(git.status.split("\n").length, "change") : "clean"}`
      : "not a git repository",
    `system prompt ${formatInt(systemPrompt.chars)} chars`,
  ].join(" \u00b7 ");
  const rows = memory.files.map((f) =>
    h("li", {}, [
      h("code", { text: f.path }),
      ` \u2014 ${f.at === "start" ? "at the start" : `beside ${f.toolUseId ?? "a tool result"}`}`,
      f.agent ? ` (${f.agent})` : "",
      `, ${f.revision}, ${formatInt(f.chars)} chars`,
      f.cut ? ", cut" : "",
      f.importedBy ? `, imported by ${f.importedBy}` : "",
    ]),
  );
  return h("details", { class: "context", id: "model-context" }, [
    h("summary", {}, [h("span", { class: "title", text: "What the model was told" }), ` ${summary}`]),
    rows.length ? h("ul", {}, rows) : h("p", { text: "No memory files." }),
    git
      ? h("pre", {
          class: "mono",
          text: [
            `Current branch: ${git.branch} (main branch: ${git.mainBranch})`,
            git.status || "(clean)",
            ...git.commits,
          ].join("\n"),
        })
      : null,
    h("p", {
      class: "mono",
      text: `system prompt sha256 ${systemPrompt.sha256.slice(0, 16)}\u2026 \u00b7 ${context.environment.date}`,
    }),
  ]);
}

const OUTCOME_ICON: Record<Outcome, string> = {
  changes: "\u2713",
  no_changes: "\u2013",
  verify_failed: "\u2715",
  stopped: "!",
  error: "\u2715",
};

/** The headline figures: label, value and a detail line under each. */
function headlineStats(): [string, string, string | null][] {
  const usage = report.usage;
  const patch = report.patch;
  const limits = report.limits;
  return [
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
}

/** The detail under "Tool calls": how many were denied and how many failed. */
function callCountDetail(): HTMLDivElement {
  return h(
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
}

/** The callouts above the fold: the run's error, its warnings, a failed verify, secrets in the patch. */
function renderCallouts(): HTMLElement[] {
  const patch = report.patch;
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
  return callouts;
}

/** The summary header: who ran what when, the outcome, the headline figures, the context and the callouts. */
export function renderHeader(): HTMLElement {
  const started = report.startedAt.replace("T", " ").replace(/\.\d+Z$/, "Z");
  const stats = headlineStats();
  const callDetail = callCountDetail();
  const callouts = renderCallouts();
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
    renderContext(),
    callouts,
    h(
      "nav",
      { class: "nav" },
      nav.map(([href, text]) => h("a", { href, text })),
    ),
  ]);
}
