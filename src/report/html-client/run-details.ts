// The Run details section: workspace, container hardening, policy, limits, verify and todos as cards.
import { formatBytes, formatDuration, formatInt, formatUsd, stripControl } from "../format.js";
import type { NodeRecord } from "../schema.js";
import { type Child, h, type StyleMap } from "./dom.js";
import { badge, kv, panel, plural, report } from "./page.js";

function check(ok: boolean, text: string, detail?: string): HTMLLIElement {
  return h("li", null, [
    h("span", { class: ok ? "yes" : "no", text: ok ? "\u2713" : "\u2715" }),
    h("span", null, [text, detail ? h("span", { class: "muted", text: ` ${detail}` }) : null]),
  ]);
}
/** A rules table (enforced, policy, ignored): one row of cells per item. */
function rulesTable<T>(
  items: T[],
  cells: (item: T) => HTMLTableCellElement[],
  style?: StyleMap,
): HTMLTableElement {
  return h(
    "table",
    { class: "grid-table rules", style },
    h(
      "tbody",
      null,
      items.map((item) => h("tr", null, cells(item))),
    ),
  );
}
function card(title: string, content: Child): HTMLDivElement {
  return h("div", { class: "card" }, [h("h3", { text: title }), content]);
}
/** Which Node.js the Bash tool had, and why. */
function nodeText(node: NodeRecord): string {
  const why =
    node.source === "image"
      ? "the image's own"
      : node.source === "runner"
        ? `the job's (${node.spec ?? ""} on the step's PATH)`
        : `${node.source === "option" ? "--node-version" : node.source === "volta" ? "package.json volta.node" : node.source} says ${node.spec ?? ""}`;
  const build = node.mounted ? `, the official build${node.npm ? ` with npm ${node.npm}` : ""}` : "";
  return `${node.version ?? "the image's own"}: ${why}${build}`;
}
function containerCard(): HTMLDivElement {
  const hd = report.hardening;
  const image = report.image;
  let items: (HTMLLIElement | null)[] = [];
  if (hd) {
    const root = hd.user === "0" || hd.user === "root" || hd.user.startsWith("0:") || hd.user === "";
    items = [
      check(!root, "Non-root user", hd.user || "(image default)"),
      check(hd.capDrop.includes("ALL"), "Capabilities dropped", hd.capDrop.join(", ")),
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
    ];
  }
  const whereText = {
    tool_gate: "tool gate only",
    both: "container + gate",
  } as const;
  return card("Container", [
    image
      ? kv([
          ["Image", h("code", { text: image.name })],
          ["Id", image.id ? h("code", { text: image.id.slice(0, 19) }) : null],
          [
            "Architecture",
            image.architecture
              ? h("code", { text: `${image.architecture}${image.emulated ? " (emulated)" : ""}` })
              : null,
          ],
          ["Node.js", image.node ? nodeText(image.node) : null],
        ])
      : null,
    items.length ? h("ul", { class: "checks", style: { "margin-top": "8px" } }, items) : null,
    hd && hd.enforcedAt.length
      ? [
          h("h4", { text: "Rules enforced" }),
          rulesTable(hd.enforcedAt, (e) => [
            h("td", null, h("code", { text: e.rule })),
            h("td", null, badge(e.where === "tool_gate" ? "neutral" : "ok", whereText[e.where])),
            h("td", { class: "muted", text: e.how || "" }),
          ]),
        ]
      : null,
  ]);
}

/** The workspace copied in: where from, which commit, the run it continues, what was skipped. */
function workspaceCard(): HTMLDivElement {
  const ws = report.workspace;
  return card("Workspace", [
    kv([
      ["Directory", h("code", { text: ws.path })],
      ["Repository", ws.repo ? h("code", { text: ws.repo }) : null],
      ["Base commit", ws.baseCommit ? h("code", { text: ws.baseCommit.slice(0, 12) }) : null],
      [
        "Continues run",
        report.resumedFrom
          ? h("span", null, [
              h("code", { text: report.resumedFrom.runId }),
              ` (${report.resumedFrom.exitReason}; ${plural(report.resumedFrom.restoredMessages, "message")} restored${report.resumedFrom.earlierPolicy ? "; its policy differed" : ""})`,
            ])
          : null,
      ],
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
  ]);
}

/** The policy: its mode, its rules and the rules it ignored, with why. */
function policyCard(): HTMLDivElement {
  const policy = report.policy;
  const behaviorBadge = { allow: "ok", deny: "denied", ask: "warn" } as const;
  return card("Policy", [
    kv([
      ["Mode", h("code", { text: policy.mode })],
      ["Rules", String(policy.rules.length)],
      ["Ignored", policy.ignored.length ? String(policy.ignored.length) : null],
    ]),
    policy.rules.length
      ? rulesTable(
          policy.rules,
          (r) => [
            h("td", null, badge(behaviorBadge[r.behavior], r.behavior)),
            h("td", null, h("code", { text: r.text })),
            h("td", { class: "muted", text: r.source }),
          ],
          { "margin-top": "8px" },
        )
      : null,
    policy.ignored.length
      ? [
          h("h4", { text: "Ignored rules" }),
          rulesTable(policy.ignored, (r) => [
            h("td", null, h("code", { text: r.text })),
            h("td", { class: "muted", text: r.source }),
            h("td", { text: r.reason }),
          ]),
        ]
      : null,
  ]);
}

/** The run's identity, times and limits. */
function runCard(): HTMLDivElement {
  const limits = report.limits;
  return card(
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
  );
}

/** The verify command: whether the patch applied and the command passed, with its output's tail. */
function verifyCard(): HTMLDivElement | null {
  const v = report.verify;
  if (!v) return null;
  const passed = v.applied && v.exitCode === 0;
  return card("Verify", [
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
  ]);
}

/** MCP servers: each one's kind, status, start and tools; why one failed, with its stderr's end. */
function mcpCard(): HTMLDivElement | null {
  if (!report.mcp) return null;
  return card(
    "MCP servers",
    h("ul", { class: "checks" }, [
      ...report.mcp.servers.map((s) =>
        h("li", null, [
          h("span", {
            class: s.status === "connected" ? "yes" : "no",
            text: s.status === "connected" ? "\u2713" : "\u2715",
          }),
          h("span", null, [
            h("code", { text: s.name }),
            ` ${s.kind === "stdio" ? "in the sandbox" : `${s.kind}, from agent-ci`} · ${plural(s.tools.length, "tool")}`,
            s.startMs === undefined ? "" : ` · started in ${formatDuration(s.startMs)}`,
            s.restarts ? " · restarted" : "",
            s.error ? h("span", { class: "muted", text: ` ${stripControl(s.error)}` }) : null,
            s.stderrTail ? h("pre", { class: "code error" }, stripControl(s.stderrTail.slice(-1000))) : null,
          ]),
        ]),
      ),
      ...report.mcp.ignored.map((i) =>
        h("li", null, [
          h("span", { class: "faint", text: "\u25cb" }),
          h("span", { text: `${i.source} ignored: ${i.reason}` }),
        ]),
      ),
    ]),
  );
}

/** The agent's todo list as it last left it. */
function todosCard(): HTMLDivElement | null {
  const todoIcon = { completed: "\u2713", in_progress: "\u25d0", pending: "\u25cb" } as const;
  if (!report.todos || !report.todos.length) return null;
  return card(
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
  );
}

/** The cards in reading order; verify, MCP and todos only when the run had them. */
export function renderRun(): HTMLElement {
  const cards: HTMLDivElement[] = [workspaceCard()];
  if (report.image || report.hardening) cards.push(containerCard());
  cards.push(policyCard(), runCard());
  for (const optional of [verifyCard(), mcpCard(), todosCard()]) if (optional) cards.push(optional);
  return panel(
    "run-section",
    "Run details",
    null,
    h("div", { class: "section-body" }, h("div", { class: "cards" }, cards)),
    null,
  );
}
