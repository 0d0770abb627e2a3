// The script inlined into report.html. Plain browser JavaScript (no imports, no network), kept as a string so
// the page is one self-contained file. It reads the JSON data block and builds the page with createElement and
// textContent only: untrusted strings are never parsed as HTML. Checked in a real browser by
// test/browser/report-html.test.ts. No backticks or template placeholders in here (it is a template literal).

export const REPORT_CLIENT_JS = String.raw`
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent || "{}");
  var report = data.report;
  var calls = report.toolCalls;
  var summaries = data.callSummaries || [];
  var TOOL_COLORS = {
    Bash: "#6366f1", Read: "#0ea5e9", Edit: "#f59e0b", MultiEdit: "#f59e0b", Write: "#f97316", Grep: "#14b8a6",
    Glob: "#22c55e", TodoWrite: "#a855f7", BashOutput: "#818cf8", KillShell: "#64748b"
  };
  var EXTRA_COLORS = ["#ec4899", "#84cc16", "#06b6d4", "#eab308", "#8b5cf6", "#10b981", "#f43f5e"];
  var OUTCOME_TEXT = {
    changes: "Changes ready", no_changes: "No changes", verify_failed: "Verify failed", stopped: "Stopped early", error: "Run failed"
  };
  var OUTCOME_ICON = { changes: "\u2713", no_changes: "\u2013", verify_failed: "\u2715", stopped: "!", error: "\u2715" };

  // ------------------------------------------------------------------------------------------- helpers
  function h(tag, attrs, children) {
    var el = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        var value = attrs[key];
        if (value === null || value === undefined || value === false) return;
        if (key === "class") el.className = value;
        else if (key === "text") el.textContent = String(value);
        else if (key === "vars") Object.keys(value).forEach(function (name) { el.style.setProperty(name, value[name]); });
        else if (key === "css") Object.keys(value).forEach(function (name) { el.style[name] = value[name]; });
        else if (key.indexOf("on") === 0) el.addEventListener(key.slice(2), value);
        else el.setAttribute(key, value === true ? "" : String(value));
      });
    }
    add(el, children);
    return el;
  }
  function add(el, children) {
    if (children === null || children === undefined || children === false) return el;
    if (!Array.isArray(children)) children = [children];
    children.forEach(function (child) {
      if (child === null || child === undefined || child === false) return;
      if (Array.isArray(child)) { add(el, child); return; }
      el.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
    });
    return el;
  }
  function byId(id) { return document.getElementById(id); }
  function clean(text) {
    return String(text).replace(/\u001b\[[0-9;?]*[ -\/]*[@-~]/g, "").replace(/\u001b[@-_]/g, "")
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, "");
  }
  function fmtInt(n) { return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function fmtUsd(v) {
    if (v === 0) return "$0.00";
    if (v < 0.01) return "$" + v.toFixed(4);
    if (v < 1) return "$" + v.toFixed(3);
    return "$" + fmtInt(Math.floor(v)) + "." + v.toFixed(2).slice(-2);
  }
  function fmtDur(ms) {
    if (ms < 1000) return Math.round(ms) + " ms";
    if (ms < 10000) return (ms / 1000).toFixed(2) + " s";
    if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
    var s = Math.round(ms / 1000), hrs = Math.floor(s / 3600), min = Math.floor((s % 3600) / 60), sec = s % 60;
    if (hrs > 0) return hrs + "h " + String(min).padStart(2, "0") + "m";
    return min + "m " + String(sec).padStart(2, "0") + "s";
  }
  function fmtOffset(ms) {
    var s = ms / 1000, m = Math.floor(s / 60), rest = s - m * 60;
    return "+" + m + ":" + (rest < 10 ? "0" : "") + rest.toFixed(1);
  }
  function fmtBytes(b) {
    if (b < 1024) return b + " B";
    if (b < 1048576) return (b / 1024).toFixed(1) + " KiB";
    if (b < 1073741824) return (b / 1048576).toFixed(1) + " MiB";
    return (b / 1073741824).toFixed(1) + " GiB";
  }
  function plural(n, word) { return fmtInt(n) + " " + word + (n === 1 ? "" : "s"); }
  function callStatus(call) {
    if (call.decision && call.decision.behavior === "deny") return "denied";
    if (call.isError) return "error";
    return "ok";
  }
  var extraIndex = 0, extraColors = {};
  function toolColor(tool) {
    if (TOOL_COLORS[tool]) return TOOL_COLORS[tool];
    if (!extraColors[tool]) extraColors[tool] = EXTRA_COLORS[extraIndex++ % EXTRA_COLORS.length];
    return extraColors[tool];
  }
  function pretty(value) {
    if (typeof value === "string") return clean(value);
    try { return JSON.stringify(value, null, 2); } catch (e) { return String(value); }
  }
  function badge(kind, text) { return h("span", { class: "badge " + kind, text: text }); }
  function statusBadge(call) {
    var status = callStatus(call);
    if (status === "denied") return badge("denied", "denied");
    if (status === "error") return badge("error", call.errorKind ? "error: " + call.errorKind : "error");
    return badge("ok", call.exitCode !== undefined ? "exit " + call.exitCode : "ok");
  }
  function panel(id, title, sub, body, tools) {
    return h("section", { class: "panel", id: id }, [
      h("div", { class: "section-head" }, [h("h2", { text: title }), sub ? h("span", { class: "sub", text: sub }) : null,
        h("span", { class: "spacer" }), tools || null]),
      body
    ]);
  }
  var denialById = {};
  report.denials.forEach(function (denial) { denialById[denial.callId] = denial; });
  var callById = {};
  calls.forEach(function (call, i) { callById[call.id] = { call: call, position: i }; });
  var failedCount = calls.filter(function (c) { return callStatus(c) === "error"; }).length;
  var deniedCount = calls.filter(function (c) { return callStatus(c) === "denied"; }).length;

  // ------------------------------------------------------------------------------------------- header
  function renderHeader() {
    var usage = report.usage;
    var started = report.startedAt.replace("T", " ").replace(/\.\d+Z$/, "Z");
    var patch = report.patch;
    var stats = [
      ["Cost", fmtUsd(report.costUsd), report.limits.maxBudgetUsd !== undefined ? "budget " + fmtUsd(report.limits.maxBudgetUsd) : "estimate"],
      ["Tokens", fmtInt(usage.inputTokens + usage.outputTokens), fmtInt(usage.inputTokens) + " in \u00b7 " + fmtInt(usage.outputTokens) + " out"],
      ["Cache", fmtInt(usage.cacheReadInputTokens), "read \u00b7 " + fmtInt(usage.cacheCreationInputTokens) + " written"],
      ["Turns", fmtInt(report.turns.length), report.limits.maxTurns !== undefined ? "of " + fmtInt(report.limits.maxTurns) + " max" : "no limit"],
      ["Tool calls", fmtInt(calls.length), null],
      ["Duration", fmtDur(report.durationMs), report.limits.timeoutMs !== undefined ? "limit " + fmtDur(report.limits.timeoutMs) : ""],
      ["Changes", patch.empty ? "none" : "+" + fmtInt(patch.added) + " \u2212" + fmtInt(patch.removed), plural(patch.files.length, "file")],
      ["Policy", report.policy.mode, plural(report.policy.rules.length, "rule")]
    ];
    var callDetail = h("div", { class: "detail" }, deniedCount || failedCount ? [
      deniedCount ? h("span", { class: "bad", text: deniedCount + " denied" }) : null,
      deniedCount && failedCount ? " \u00b7 " : null,
      failedCount ? h("span", { class: "bad", text: failedCount + " failed" }) : null
    ] : "all allowed, none failed");
    var callouts = [];
    if (report.error) {
      callouts.push(h("div", { class: "callout error", id: "run-error" }, [h("span", { class: "title", text: report.error.kind }), report.error.message]));
    }
    report.warnings.forEach(function (warning) {
      var body = warning.severity === "critical" ? h("strong", { text: warning.message }) : warning.message;
      callouts.push(h("div", { class: "callout " + warning.severity }, [h("span", { class: "title", text: warning.severity === "info" ? "Note" : "Warning" }), body]));
    });
    if (report.verify && !(report.verify.applied && report.verify.exitCode === 0)) {
      var verify = report.verify;
      callouts.push(h("div", { class: "callout error", id: "verify-failed" }, [h("span", { class: "title", text: "Verify failed" }),
        h("code", { text: verify.command }), !verify.applied ? " — the patch did not apply to a clean checkout." :
          verify.exitCode === null ? " — the command did not finish." : " exited " + verify.exitCode + " with the patch applied."]));
    }
    if (patch.secretFindings.length) {
      callouts.push(h("div", { class: "callout critical" }, [h("span", { class: "title", text: "Secrets in the patch" }),
        h("strong", { text: plural(patch.secretFindings.length, "possible secret") + " found in added lines. " }),
        "Review the patch before applying or posting it (see Changes)."]));
    }
    var header = h("header", { class: "panel hero", id: "summary" }, [
      h("div", { class: "brand" }, [h("span", { class: "logo", text: "agent-ci" }), h("span", { class: "mono", text: report.runId }),
        h("span", { class: "dot-sep" }), h("span", { text: started }), h("span", { class: "dot-sep" }),
        h("span", { class: "mono", text: report.model.name }), h("span", { class: "dot-sep" }), h("span", { text: "v" + report.agentCiVersion })]),
      h("div", { class: "headline" }, [
        h("span", { class: "outcome outcome-" + report.outcome, id: "outcome", "data-outcome": report.outcome }, [
          h("span", { class: "icon", text: OUTCOME_ICON[report.outcome] || "?" }), OUTCOME_TEXT[report.outcome] || report.outcome]),
        h("span", { class: "exit", id: "exit-reason" }, ["exit ", h("code", { text: report.exitReason }), " \u2014 " + (data.exitText || "")])
      ]),
      h("div", { class: "stats" }, stats.map(function (stat) {
        return h("div", { class: "stat" }, [h("div", { class: "label", text: stat[0] }), h("div", { class: stat[0] === "Policy" ? "value text" : "value", text: stat[1], title: stat[1] }),
          stat[0] === "Tool calls" ? callDetail : h("div", { class: "detail", text: stat[2] || "\u00a0" })]);
      })),
      callouts,
      h("nav", { class: "nav" }, [["#timeline-section", "Timeline"], ["#calls-section", "Tool calls"], ["#changes-section", "Changes"],
        ["#usage-section", "Usage"], ["#run-section", "Run details"]].map(function (link) { return h("a", { href: link[0], text: link[1] }); }))
    ]);
    return header;
  }

  // ------------------------------------------------------------------------------------------- timeline
  var ROW = 22;
  var totalMs = Math.max(1, report.durationMs);
  calls.forEach(function (c) { totalMs = Math.max(totalMs, c.startOffsetMs + c.durationMs); });
  report.turns.forEach(function (t) { totalMs = Math.max(totalMs, t.startOffsetMs + t.durationMs); });
  var zoom = 1;
  var canvas = null, axis = null, gridHost = null;

  function pack(items) {
    var ends = [], rows = [], minSpan = totalMs * 0.006;
    items.slice().sort(function (a, b) { return a.start - b.start; }).forEach(function (item) {
      var row = 0;
      while (row < ends.length && ends[row] > item.start) row++;
      ends[row] = item.start + Math.max(item.duration, minSpan);
      rows.push({ item: item, row: row });
    });
    return { placed: rows, rows: Math.max(1, ends.length) };
  }
  function pct(ms) { return (ms / totalMs * 100) + "%"; }
  function niceStep(targetMs) {
    var steps = [100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 900000, 1800000, 3600000];
    for (var i = 0; i < steps.length; i++) if (steps[i] >= targetMs) return steps[i];
    return steps[steps.length - 1] * Math.ceil(targetMs / steps[steps.length - 1]);
  }
  function tickLabel(ms, step) {
    if (step < 1000) return (ms / 1000).toFixed(1) + "s";
    if (ms < 60000) return Math.round(ms / 1000) + "s";
    var m = Math.floor(ms / 60000), s = Math.round((ms % 60000) / 1000);
    return m + "m" + (s ? String(s).padStart(2, "0") + "s" : "");
  }
  function renderTicks() {
    if (!canvas) return;
    axis.textContent = "";
    gridHost.textContent = "";
    var width = canvas.getBoundingClientRect().width || 900;
    var step = niceStep(totalMs / Math.max(2, width / 90));
    for (var t = 0; t <= totalMs; t += step) {
      axis.appendChild(h("span", { class: "tl-tick", text: tickLabel(t, step), css: { left: pct(t) } }));
      if (t > 0) gridHost.appendChild(h("span", { class: "tl-gridline", css: { left: pct(t) } }));
    }
  }
  function setZoom(next) {
    zoom = Math.max(1, Math.min(64, next));
    canvas.style.width = (zoom * 100) + "%";
    byId("zoom-level").textContent = zoom + "\u00d7";
    renderTicks();
  }

  function renderTimeline() {
    var tools = [];
    calls.forEach(function (c) { if (tools.indexOf(c.tool) === -1) tools.push(c.tool); });
    var lanes = [];
    if (report.turns.length) {
      lanes.push({ label: "Model", color: "var(--turn)", count: report.turns.length, packed: pack(report.turns.map(function (t) {
        return { start: t.startOffsetMs, duration: t.durationMs, turn: t };
      })) });
    }
    tools.forEach(function (tool) {
      var own = calls.filter(function (c) { return c.tool === tool; });
      lanes.push({ label: tool, color: toolColor(tool), count: own.length, packed: pack(own.map(function (c) {
        return { start: c.startOffsetMs, duration: c.durationMs, call: c };
      })) });
    });
    var labels = h("div", { class: "tl-labels" });
    axis = h("div", { class: "tl-axis" });
    gridHost = h("div");
    var marks = h("div", { class: "tl-marks" });
    canvas = h("div", { class: "tl-canvas" }, [axis, marks, gridHost]);
    calls.forEach(function (c) {
      var status = callStatus(c);
      if (status === "ok") return;
      marks.appendChild(h("span", { class: "tl-mark " + status, css: { left: pct(c.startOffsetMs) } }));
    });
    (report.compactions || []).forEach(function (c) {
      marks.appendChild(h("span", { class: "tl-mark compaction", title: "Turn " + c.turn + ": context " + c.strategy + " \u00b7 " + fmtInt(c.tokensBefore) + " \u2192 " + fmtInt(c.tokensAfter) + " tokens",
        css: { left: pct(c.offsetMs) } }));
    });
    lanes.forEach(function (lane) {
      var height = lane.packed.rows * ROW + 6;
      labels.appendChild(h("div", { class: "tl-label", css: { height: height + "px" } }, [
        h("span", null, [h("span", { class: "dot", vars: { "--c": lane.color } }), lane.label]),
        h("span", { class: "count", text: String(lane.count) })]));
      var laneEl = h("div", { class: "tl-lane", css: { height: height + "px" } });
      lane.packed.placed.forEach(function (p) {
        var top = (3 + p.row * ROW + 3) + "px";
        if (p.item.turn) {
          var turn = p.item.turn;
          laneEl.appendChild(h("button", { class: "turn-bar", type: "button", "data-turn": turn.index,
            title: "Turn " + turn.index + " \u00b7 " + fmtDur(turn.durationMs) + " \u00b7 " + fmtInt(turn.usage.outputTokens) + " tokens out" + (turn.stopReason ? " \u00b7 " + turn.stopReason : ""),
            css: { left: pct(p.item.start), width: pct(p.item.duration), top: top },
            onclick: function () { selectTurn(turn.index); } }));
          return;
        }
        var call = p.item.call;
        var position = callById[call.id].position;
        laneEl.appendChild(h("button", {
          class: "call-bar", type: "button", "data-call-id": call.id, "data-tool": call.tool, "data-status": callStatus(call),
          "aria-label": "Call " + (call.index + 1) + " " + call.tool,
          title: "#" + (call.index + 1) + " " + call.tool + " \u00b7 " + (summaries[position] || "") + "\n" + fmtOffset(call.startOffsetMs) + " \u00b7 " + fmtDur(call.durationMs) + " \u00b7 " + callStatus(call),
          vars: { "--c": toolColor(call.tool) },
          css: { left: pct(p.item.start), width: pct(p.item.duration), top: top },
          onclick: function () { selectCall(call.id, true); }
        }));
      });
      canvas.appendChild(laneEl);
    });
    var legendTools = h("div", { class: "legend legend-tool" }, [
      report.turns.length ? h("span", { class: "item" }, [h("span", { class: "swatch turn" }), "model turn"]) : null,
      tools.map(function (tool) { return h("span", { class: "item" }, [h("span", { class: "swatch", vars: { "--c": toolColor(tool) } }), tool]); }),
      h("span", { class: "item" }, [h("span", { class: "swatch denied" }), "denied"]),
      h("span", { class: "item" }, [h("span", { class: "swatch error", css: { background: "transparent", boxShadow: "inset 0 0 0 2px var(--bad)" } }), "error"])
    ]);
    var legendOutcome = h("div", { class: "legend legend-outcome" }, [
      h("span", { class: "item" }, [h("span", { class: "swatch ok" }), "succeeded"]),
      h("span", { class: "item" }, [h("span", { class: "swatch error" }), "failed"]),
      h("span", { class: "item" }, [h("span", { class: "swatch denied" }), "denied"]),
      report.turns.length ? h("span", { class: "item" }, [h("span", { class: "swatch turn" }), "model turn"]) : null
    ]);
    function colorButton(mode, text) {
      return h("button", { type: "button", "data-color-mode": mode, "aria-pressed": mode === "tool" ? "true" : "false", text: text, onclick: function () {
        byId("timeline").setAttribute("data-color", mode);
        document.querySelectorAll("[data-color-mode]").forEach(function (b) { b.setAttribute("aria-pressed", b.getAttribute("data-color-mode") === mode ? "true" : "false"); });
      } });
    }
    var controls = h("div", { class: "seg-group", css: { display: "flex", gap: "10px", alignItems: "center", flexWrap: "wrap" } }, [
      h("span", { class: "ctl-label", text: "Colour by" }), h("div", { class: "seg" }, [colorButton("tool", "Tool"), colorButton("outcome", "Outcome")]),
      h("span", { class: "ctl-label", text: "Zoom" }),
      h("div", { class: "seg" }, [
        h("button", { type: "button", text: "\u2212", title: "Zoom out", onclick: function () { setZoom(zoom / 2); } }),
        h("button", { type: "button", id: "zoom-level", text: "1\u00d7", title: "Fit", onclick: function () { setZoom(1); } }),
        h("button", { type: "button", text: "+", title: "Zoom in", onclick: function () { setZoom(zoom * 2); } })
      ])
    ]);
    var body;
    if (!calls.length && !report.turns.length) {
      body = h("div", { class: "empty", text: "No turns and no tool calls were recorded." });
    } else {
      body = h("div", null, [legendTools, legendOutcome,
        h("div", { class: "tl" }, [labels, h("div", { class: "tl-scroll" }, canvas)]),
        h("div", { class: "tl-foot" }, [h("span", { text: "0:00" }), h("span", { text: "Click a bar to see the call \u00b7 \u2190 \u2192 to step through calls" }), h("span", { text: fmtDur(totalMs) })])]);
    }
    var empty = !calls.length && !report.turns.length;
    var section = panel("timeline-section", "Timeline", plural(report.turns.length, "turn") + " \u00b7 " + plural(calls.length, "tool call") + " \u00b7 " + fmtDur(report.durationMs), body, empty ? null : controls);
    var root = h("div", { class: "tl-root", id: "timeline", "data-color": "tool" }, section);
    return root;
  }

  // ------------------------------------------------------------------------------------------- diff
  function diffTable(hunks, findings) {
    var table = h("table", { class: "diff" });
    hunks.forEach(function (hunk) {
      table.appendChild(h("tr", { class: "hunk" }, [h("td", { class: "ln" }), h("td", { class: "ln" }), h("td", { colspan: "2", text: hunk.header })]));
      hunk.lines.forEach(function (line) {
        var type = line[0], oldNo = line[1], newNo = line[2], text = line[3];
        var cls = type === "+" ? "add" : type === "-" ? "del" : type === "\\" ? "note" : "ctx";
        var finding = type === "+" && findings && newNo !== null ? findings[newNo] : null;
        table.appendChild(h("tr", { class: cls + (finding ? " secret" : "") }, [
          h("td", { class: "ln", text: oldNo === null ? "" : String(oldNo) }),
          h("td", { class: "ln", text: newNo === null ? "" : String(newNo) }),
          h("td", { class: "sign", text: type === "\\" ? "" : type }),
          h("td", null, [text, finding ? h("span", { class: "secret-flag", text: "secret: " + finding }) : null])
        ]));
      });
    });
    return h("div", { class: "diff-wrap" }, table);
  }
  function structuredToHunks(patch) {
    return patch.hunks.map(function (hunk) {
      var oldNo = hunk.oldStart, newNo = hunk.newStart;
      return {
        header: "@@ -" + hunk.oldStart + "," + hunk.oldLines + " +" + hunk.newStart + "," + hunk.newLines + " @@",
        lines: hunk.lines.map(function (raw) {
          var type = raw.charAt(0), text = raw.slice(1);
          if (type === "+") return ["+", null, newNo++, text];
          if (type === "-") return ["-", oldNo++, null, text];
          if (type === "\\") return ["\\", null, null, raw];
          return [" ", oldNo++, newNo++, text];
        })
      };
    });
  }

  // ------------------------------------------------------------------------------------------- calls
  var selectedId = null;
  var filterState = { kind: "all", text: "" };

  function renderCalls() {
    var list = h("div", { class: "call-list", id: "call-list" });
    var details = h("aside", { class: "call-details", id: "call-details", "aria-live": "polite" },
      calls.length ? h("div", { class: "empty", text: "Select a call on the timeline or in this list to see its input, decision and result." }) : null);
    if (calls.length) {
      var tbody = h("tbody");
      calls.forEach(function (call, i) {
        tbody.appendChild(h("tr", { class: "call-row", "data-call-id": call.id, "data-status": callStatus(call), tabindex: "0",
          onclick: function () { selectCall(call.id, false); },
          onkeydown: function (event) { if (event.key === "Enter") selectCall(call.id, false); } }, [
          h("td", { class: "num faint", text: String(call.index + 1) }),
          h("td", null, h("span", { class: "tool-tag", vars: { "--c": toolColor(call.tool) }, text: call.tool })),
          h("td", { class: "summary", title: summaries[i] || "", text: summaries[i] || "" }),
          h("td", null, statusBadge(call)),
          h("td", { class: "num muted nowrap", text: fmtDur(call.durationMs) })
        ]));
      });
      list.appendChild(h("table", { class: "grid-table" }, [h("thead", null, h("tr", null, [
        h("th", { class: "num", text: "#" }), h("th", { text: "Tool" }), h("th", { text: "Call" }), h("th", { text: "Result" }), h("th", { class: "num", text: "Time" })])), tbody]));
    }
    function filterButton(kind, text) {
      return h("button", { type: "button", "data-filter": kind, "aria-pressed": kind === "all" ? "true" : "false", text: text, onclick: function () {
        filterState.kind = kind;
        document.querySelectorAll("[data-filter]").forEach(function (b) { b.setAttribute("aria-pressed", b.getAttribute("data-filter") === kind ? "true" : "false"); });
        applyFilter();
      } });
    }
    var tools = h("div", { css: { display: "flex", gap: "10px", alignItems: "center", flexWrap: "wrap" } }, [
      h("input", { class: "search", type: "search", id: "call-search", placeholder: "Filter calls\u2026", "aria-label": "Filter calls",
        oninput: function (event) { filterState.text = event.target.value.toLowerCase(); applyFilter(); } }),
      h("div", { class: "seg" }, [filterButton("all", "All " + calls.length), filterButton("denied", "Denied " + deniedCount), filterButton("error", "Failed " + failedCount)])
    ]);
    var sub = plural(calls.length, "call") + (deniedCount ? " \u00b7 " + deniedCount + " denied" : "") + (failedCount ? " \u00b7 " + failedCount + " failed" : "");
    if (!calls.length) {
      return panel("calls-section", "Tool calls", sub, h("div", null, [h("div", { class: "empty", text: "No tool calls were made." }), details]));
    }
    return panel("calls-section", "Tool calls", sub, h("div", { class: "calls-layout" }, [list, details]), tools);
  }

  function applyFilter() {
    calls.forEach(function (call, i) {
      var status = callStatus(call);
      var kindOk = filterState.kind === "all" || filterState.kind === status;
      var hay = (call.tool + " " + (summaries[i] || "")).toLowerCase();
      var visible = kindOk && (!filterState.text || hay.indexOf(filterState.text) !== -1);
      var sel = '[data-call-id="' + CSS.escape(call.id) + '"]';
      document.querySelectorAll(".call-bar" + sel + ", .call-row" + sel).forEach(function (el) {
        if (el.classList.contains("call-bar")) el.classList.toggle("dim", !visible);
        else el.style.display = visible ? "" : "none";
      });
    });
  }

  function kv(pairs) {
    var dl = h("dl", { class: "kv" });
    pairs.forEach(function (pair) {
      if (pair[1] === null || pair[1] === undefined || pair[1] === "") return;
      dl.appendChild(h("dt", { text: pair[0] }));
      dl.appendChild(h("dd", null, pair[1]));
    });
    return dl;
  }

  function decisionBlock(call) {
    var decision = call.decision;
    if (!decision) {
      return h("div", { class: "decision" }, "Not evaluated: the call stopped before the permission stage (unknown tool, invalid input or failed validation).");
    }
    var denial = denialById[call.id];
    var deny = decision.behavior === "deny";
    return h("div", { class: "decision " + decision.behavior, id: "call-decision" }, [
      h("div", { class: "row" }, [badge(deny ? "denied" : "ok", deny ? "denied" : "allowed"), h("span", { class: "muted", text: "decided by " + decision.decidedBy }),
        decision.subcommand ? h("span", null, ["for ", h("code", { text: decision.subcommand })]) : null]),
      decision.rule ? h("div", { class: "row" }, [h("span", { class: "muted", text: "rule" }), h("code", { text: decision.rule.text }), h("span", { class: "faint", text: "from " + decision.rule.source })]) : null,
      h("div", { class: "row" }, h("span", { text: decision.reason })),
      denial ? h("div", { class: "row" }, [h("span", { class: "muted", text: "narrowest allow rule" }),
        denial.narrowestAllowRule === null ? h("span", { text: "none \u2014 a deny rule wins in every mode" }) : h("code", { text: denial.narrowestAllowRule })]) : null
    ]);
  }

  function inputBlock(call) {
    var input = call.input;
    if (call.tool === "Bash" && input && typeof input.command === "string") {
      var rest = {};
      Object.keys(input).forEach(function (key) { if (key !== "command") rest[key] = input[key]; });
      return [h("pre", { class: "code", id: "call-input" }, "$ " + clean(input.command)), Object.keys(rest).length ? h("pre", { class: "code", css: { marginTop: "6px" } }, pretty(rest)) : null];
    }
    if ((call.tool === "Edit" || call.tool === "Write") && input && typeof input === "object") {
      return h("pre", { class: "code", id: "call-input" }, pretty(input));
    }
    return h("pre", { class: "code", id: "call-input" }, pretty(input));
  }

  function renderCallDetails(call) {
    var position = callById[call.id].position;
    var panelEl = byId("call-details");
    panelEl.textContent = "";
    panelEl.setAttribute("data-call-id", call.id);
    var prev = calls[position - 1], next = calls[position + 1];
    add(panelEl, [
      h("div", { class: "cd-head" }, [
        h("span", { class: "tool-tag", vars: { "--c": toolColor(call.tool) } }, h("h3", { text: "#" + (call.index + 1) + " " + call.tool })),
        statusBadge(call), call.truncated ? badge("warn", "truncated") : null,
        h("span", { class: "spacer" }),
        h("button", { class: "btn", type: "button", text: "\u2190 Prev", disabled: !prev, onclick: function () { if (prev) selectCall(prev.id, true); } }),
        h("button", { class: "btn", type: "button", text: "Next \u2192", disabled: !next, onclick: function () { if (next) selectCall(next.id, true); } })
      ]),
      h("div", { class: "cd-summary", text: summaries[position] || call.tool }),
      kv([
        ["Call id", h("code", { text: call.id })],
        ["Turn", String(call.turn)],
        ["Started", fmtOffset(call.startOffsetMs)],
        ["Duration", fmtDur(call.durationMs)],
        ["Exit code", call.exitCode !== undefined ? String(call.exitCode) : null],
        ["Result", fmtInt(call.resultChars) + " chars" + (call.truncated ? " (truncated for the model)" : "")],
        ["Full output", call.fullOutputPath ? h("code", { text: call.fullOutputPath }) : null],
        ["Error", call.isError ? (call.errorKind || "error") : null]
      ]),
      h("h4", { text: "Decision" }), decisionBlock(call),
      h("h4", { text: "Input" }), inputBlock(call),
      h("h4", { text: "Result" }),
      call.resultPreview ? h("pre", { class: "code" + (call.isError ? " error" : ""), id: "call-result" }, clean(call.resultPreview)) : h("div", { class: "note", text: "(empty result)" }),
      call.resultPreview && call.resultChars > call.resultPreview.length ? h("div", { class: "note", text: "Preview of " + fmtInt(call.resultChars) + " characters" + (call.fullOutputPath ? "; the whole output is in " + call.fullOutputPath + "." : ".") }) : null,
      call.patch ? [h("h4", { text: "Change to " + call.patch.file }), diffTable(structuredToHunks(call.patch), null)] : null
    ]);
  }

  function clearSelection() {
    document.querySelectorAll(".selected").forEach(function (el) { el.classList.remove("selected"); });
  }

  function selectCall(id, scrollList) {
    var entry = callById[id];
    if (!entry) return;
    selectedId = id;
    clearSelection();
    document.querySelectorAll('[data-call-id="' + CSS.escape(id) + '"]').forEach(function (el) {
      if (el.id !== "call-details") el.classList.add("selected");
    });
    renderCallDetails(entry.call);
    var row = document.querySelector('.call-row[data-call-id="' + CSS.escape(id) + '"]');
    if (scrollList && row) row.scrollIntoView({ block: "nearest" });
    var bar = document.querySelector('.call-bar[data-call-id="' + CSS.escape(id) + '"]');
    if (bar && bar.scrollIntoView && zoom > 1) bar.scrollIntoView({ block: "nearest", inline: "center" });
    try { history.replaceState(null, "", "#call=" + encodeURIComponent(id)); } catch (e) { /* file:// may refuse */ }
  }

  function selectTurn(index) {
    var turn = report.turns.filter(function (t) { return t.index === index; })[0];
    if (!turn) return;
    clearSelection();
    selectedId = null;
    var bar = document.querySelector('.turn-bar[data-turn="' + index + '"]');
    if (bar) bar.classList.add("selected");
    var panelEl = byId("call-details");
    panelEl.textContent = "";
    panelEl.removeAttribute("data-call-id");
    var own = calls.filter(function (c) { return c.turn === index; });
    add(panelEl, [
      h("div", { class: "cd-head" }, [h("h3", { text: "Turn " + turn.index }), turn.stopReason ? badge("neutral", turn.stopReason) : null,
        turn.attempts > 1 ? badge("warn", turn.attempts + " attempts") : null]),
      kv([
        ["Started", fmtOffset(turn.startOffsetMs)], ["Duration", fmtDur(turn.durationMs)],
        ["Input tokens", fmtInt(turn.usage.inputTokens)], ["Output tokens", fmtInt(turn.usage.outputTokens)],
        ["Cache read", fmtInt(turn.usage.cacheReadInputTokens)], ["Cache written", fmtInt(turn.usage.cacheCreationInputTokens)],
        ["Tool calls", own.length ? own.map(function (c) { return "#" + (c.index + 1) + " " + c.tool; }).join(", ") : "none"]
      ]),
      turn.text ? [h("h4", { text: "Assistant text" }), h("pre", { class: "code" }, clean(turn.text))] : null
    ]);
    byId("calls-section").scrollIntoView({ block: "start", behavior: "smooth" });
  }

  function step(delta) {
    if (!calls.length) return;
    var position = selectedId === null ? (delta > 0 ? -1 : calls.length) : callById[selectedId].position;
    var next = calls[Math.max(0, Math.min(calls.length - 1, position + delta))];
    if (next) selectCall(next.id, true);
  }

  // ------------------------------------------------------------------------------------------- changes
  function blocks(added, removed) {
    var total = added + removed, el = h("span", { class: "blocks", "aria-hidden": "true" });
    var a = total ? Math.round(added / total * 5) : 0, d = total ? Math.min(5 - a, Math.round(removed / total * 5)) : 0;
    for (var i = 0; i < 5; i++) el.appendChild(h("i", { class: i < a ? "a" : i < a + d ? "d" : "" }));
    return el;
  }
  function statusBadgeFor(status) {
    var kind = status === "added" ? "ok" : status === "deleted" ? "denied" : status === "modified" ? "neutral" : "accent";
    return badge(kind, status);
  }
  function renderChanges() {
    var patch = report.patch;
    var view = data.patch;
    var body = h("div", { class: "section-body" });
    if (patch.empty) {
      body.appendChild(h("div", { class: "empty", text: "The run produced no changes." }));
    } else {
      var findingsByFile = {};
      patch.secretFindings.forEach(function (f) {
        findingsByFile[f.file] = findingsByFile[f.file] || {};
        if (f.line !== undefined) findingsByFile[f.file][f.line] = f.kind;
      });
      if (patch.secretFindings.length) {
        body.appendChild(h("div", { class: "callout critical", css: { marginTop: "0", marginBottom: "12px" } }, [
          h("span", { class: "title", text: "Possible secrets" }),
          patch.secretFindings.map(function (f, i) { return [i ? ", " : "", h("code", { text: f.file + (f.line !== undefined ? ":" + f.line : "") }), " (" + f.kind + ")"]; }),
          ". The patch file is unchanged; secret values are masked in this view."]));
      }
      var list = h("div", { class: "file-list" });
      patch.files.forEach(function (file, i) {
        list.appendChild(h("a", { class: "file-row", href: "#file-" + i }, [statusBadgeFor(file.status),
          h("span", { class: "path", text: file.oldPath ? file.oldPath + " \u2192 " + file.path : file.path }),
          file.binary ? badge("neutral", "binary") : [h("span", { class: "plus", text: "+" + fmtInt(file.added) }), h("span", { class: "minus", text: "\u2212" + fmtInt(file.removed) }), blocks(file.added, file.removed)]]));
      });
      body.appendChild(list);
      if (!view || !view.available) {
        body.appendChild(h("div", { class: "callout info" }, [h("span", { class: "title", text: "Patch not included" }), "patch.diff was not found next to report.json, so only the file list is shown."]));
      } else {
        view.files.forEach(function (file, i) {
          var content;
          if (file.binary) content = h("div", { class: "binary", text: "Binary file (not shown)." });
          else if (!file.hunks.length) content = h("div", { class: "binary", text: "No textual change (mode change, rename or empty file)." });
          else content = diffTable(file.hunks, findingsByFile[file.path]);
          var open = view.files.length <= 10 && file.lines < 1500;
          body.appendChild(h("details", { class: "file", id: "file-" + i, open: open }, [
            h("summary", null, [statusBadgeFor(file.status), h("span", { class: "path", text: file.oldPath ? file.oldPath + " \u2192 " + file.path : file.path }),
              file.binary ? null : [h("span", { class: "plus", text: "+" + fmtInt(file.added) }), h("span", { class: "minus", text: "\u2212" + fmtInt(file.removed) })]]),
            content,
            file.omittedLines ? h("div", { class: "note", css: { padding: "6px 12px" }, text: fmtInt(file.omittedLines) + " more lines not shown; see patch.diff." }) : null
          ]));
        });
        if (view.truncated) body.appendChild(h("div", { class: "note", text: "The patch is long; some files or lines are not shown here. patch.diff has all of it." }));
      }
    }
    var expand = null;
    if (view && view.available && view.files.length > 1) {
      var setAll = function (open) { document.querySelectorAll("details.file").forEach(function (d) { d.open = open; }); };
      expand = h("div", { class: "seg" }, [h("button", { type: "button", text: "Expand all", onclick: function () { setAll(true); } }),
        h("button", { type: "button", text: "Collapse all", onclick: function () { setAll(false); } })]);
    }
    var sub = patch.empty ? "no changes" : plural(patch.files.length, "file") + " \u00b7 +" + fmtInt(patch.added) + " \u2212" + fmtInt(patch.removed) + " \u00b7 " + fmtBytes(patch.bytes) + " \u00b7 sha256 " + patch.sha256.slice(0, 12);
    return panel("changes-section", "Changes", sub, body, expand);
  }

  // ------------------------------------------------------------------------------------------- usage
  function renderUsage() {
    var usage = report.usage;
    var totals = report.turns.map(function (t) { var u = t.usage; return u.inputTokens + u.outputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens; });
    var max = Math.max.apply(null, [1].concat(totals));
    var chart = h("div", { class: "chart", "aria-label": "Tokens per turn" });
    report.turns.forEach(function (t) {
      var u = t.usage;
      function seg(cls, n) { return n ? h("div", { class: cls, css: { height: (n / max * 140) + "px" } }) : null; }
      chart.appendChild(h("div", { class: "col", title: "Turn " + t.index + ": " + fmtInt(u.inputTokens) + " in, " + fmtInt(u.outputTokens) + " out, " + fmtInt(u.cacheReadInputTokens) + " cache read, " + fmtInt(u.cacheCreationInputTokens) + " cache write" },
        [seg("seg-cr", u.cacheReadInputTokens), seg("seg-cw", u.cacheCreationInputTokens), seg("seg-in", u.inputTokens), seg("seg-out", u.outputTokens)]));
    });
    var rows = report.turns.map(function (t) {
      return h("tr", null, [h("td", { class: "num", text: String(t.index) }), h("td", { text: t.stopReason || "\u2014" }),
        h("td", { class: "num", text: fmtInt(t.usage.inputTokens) }), h("td", { class: "num", text: fmtInt(t.usage.outputTokens) }),
        h("td", { class: "num", text: fmtInt(t.usage.cacheReadInputTokens) }), h("td", { class: "num", text: fmtInt(t.usage.cacheCreationInputTokens) }),
        h("td", { class: "num", text: String(t.attempts) }), h("td", { class: "num", text: fmtDur(t.durationMs) })]);
    });
    var left = h("div", null, [
      kv([["Estimated cost", h("strong", { text: fmtUsd(report.costUsd) })], ["Input tokens", fmtInt(usage.inputTokens)], ["Output tokens", fmtInt(usage.outputTokens)],
        ["Cache read", fmtInt(usage.cacheReadInputTokens)], ["Cache written", fmtInt(usage.cacheCreationInputTokens)], ["Turns", fmtInt(report.turns.length)],
        ["Model", h("code", { text: report.model.name })], ["Driver", report.model.driver],
        ["Max tokens", report.model.maxTokens !== undefined ? fmtInt(report.model.maxTokens) : null],
        ["Thinking budget", report.model.thinkingBudget !== undefined ? fmtInt(report.model.thinkingBudget) : null]]),
      report.turns.length ? [h("h4", { text: "Tokens per turn" }), chart, h("div", { class: "chart-legend" }, [
        h("span", { class: "item" }, [h("span", { class: "swatch in" }), " input"]), h("span", { class: "item" }, [h("span", { class: "swatch out" }), " output"]),
        h("span", { class: "item" }, [h("span", { class: "swatch cr" }), " cache read"]), h("span", { class: "item" }, [h("span", { class: "swatch cw" }), " cache write"])])] : null
    ]);
    var right = report.turns.length ? h("div", { class: "usage-table" }, h("table", { class: "grid-table" }, [
      h("thead", null, h("tr", null, ["Turn", "Stop", "In", "Out", "Cache read", "Cache write", "Tries", "Time"].map(function (t, i) { return h("th", { class: i === 1 ? "" : "num", text: t }); }))),
      h("tbody", null, rows)])) : h("div", { class: "empty", text: "No model turns." });
    return panel("usage-section", "Usage", fmtUsd(report.costUsd) + " \u00b7 " + fmtInt(usage.inputTokens + usage.outputTokens) + " tokens", h("div", { class: "section-body" }, h("div", { class: "usage-grid" }, [left, right])));
  }

  // ------------------------------------------------------------------------------------------- run details
  function check(ok, text, detail) {
    return h("li", null, [h("span", { class: ok ? "yes" : "no", text: ok ? "\u2713" : "\u2715" }), h("span", null, [text, detail ? h("span", { class: "muted", text: " " + detail }) : null])]);
  }
  function card(title, content) { return h("div", { class: "card" }, [h("h3", { text: title }), content]); }
  function renderRun() {
    var ws = report.workspace, cards = [];
    cards.push(card("Workspace", [kv([["Directory", h("code", { text: ws.path })], ["Repository", ws.repo ? h("code", { text: ws.repo }) : null],
      ["Base commit", ws.baseCommit ? h("code", { text: ws.baseCommit.slice(0, 12) }) : null],
      ["Copied in", plural(ws.filesCopied, "file") + " \u00b7 " + fmtBytes(ws.bytesCopied)], ["Skipped", plural(ws.skipped.length, "file")]]),
      ws.skipped.length ? h("ul", { class: "checks", css: { marginTop: "8px" } }, ws.skipped.slice(0, 50).map(function (s) {
        return h("li", null, [h("code", { text: s.path }), h("span", { class: "muted", text: s.reason })]); })) : null]));
    var hd = report.hardening;
    if (report.image || hd) {
      var items = [];
      if (hd) {
        var root = hd.user === "0" || hd.user === "root" || hd.user.indexOf("0:") === 0 || hd.user === "";
        items = [
          check(!root, "Non-root user", hd.user || "(image default)"),
          check(hd.capDrop.indexOf("ALL") !== -1 && !(hd.capAdd && hd.capAdd.length), "Capabilities dropped", hd.capDrop.join(", ") + (hd.capAdd && hd.capAdd.length ? "; added " + hd.capAdd.join(", ") : "")),
          check(hd.noNewPrivileges, "no-new-privileges"),
          check(hd.readonlyRootfs, "Read-only root filesystem"),
          check(hd.networkMode === "none", "Network", hd.networkMode),
          check(hd.pidsLimit !== null && hd.pidsLimit > 0, "Process limit", hd.pidsLimit === null ? "none" : String(hd.pidsLimit)),
          check(hd.memoryBytes !== null, "Memory limit", hd.memoryBytes === null ? "none" : fmtBytes(hd.memoryBytes)),
          check(hd.nanoCpus !== null, "CPU limit", hd.nanoCpus === null ? "none" : (hd.nanoCpus / 1e9) + " CPUs"),
          check(hd.init, "Init process (reaps zombies)"),
          hd.seccomp ? check(hd.seccomp !== "unconfined", "Seccomp", hd.seccomp) : null,
          hd.runtime ? check(true, "Runtime", hd.runtime) : null,
          hd.userns ? check(true, "User namespace", hd.userns) : null
        ];
      }
      cards.push(card("Container", [report.image ? kv([["Image", h("code", { text: report.image.name })], ["Id", report.image.id ? h("code", { text: report.image.id.slice(0, 19) }) : null],
        ["Digest", report.image.digest ? h("code", { text: report.image.digest }) : null]]) : null,
        items.length ? h("ul", { class: "checks", css: { marginTop: "8px" } }, items) : null,
        hd && hd.enforcedAt.length ? [h("h4", { text: "Rules enforced" }), h("table", { class: "grid-table rules" }, h("tbody", null, hd.enforcedAt.map(function (e) {
          return h("tr", null, [h("td", null, h("code", { text: e.rule })), h("td", null, badge(e.where === "tool_gate" ? "neutral" : "ok", e.where === "tool_gate" ? "tool gate only" : e.where === "both" ? "container + gate" : "container")),
            h("td", { class: "muted", text: e.how || "" })]);
        })))] : null]));
    }
    var policy = report.policy;
    cards.push(card("Policy", [kv([["Mode", h("code", { text: policy.mode })], ["Rules", String(policy.rules.length)], ["Ignored", policy.ignored.length ? String(policy.ignored.length) : null]]),
      policy.rules.length ? h("table", { class: "grid-table rules", css: { marginTop: "8px" } }, h("tbody", null, policy.rules.map(function (r) {
        return h("tr", null, [h("td", null, badge(r.behavior === "allow" ? "ok" : r.behavior === "deny" ? "denied" : "warn", r.behavior)), h("td", null, h("code", { text: r.text })), h("td", { class: "muted", text: r.source })]);
      }))) : null,
      policy.ignored.length ? [h("h4", { text: "Ignored rules" }), h("table", { class: "grid-table rules" }, h("tbody", null, policy.ignored.map(function (r) {
        return h("tr", null, [h("td", null, h("code", { text: r.text })), h("td", { class: "muted", text: r.source }), h("td", { text: r.reason })]);
      })))] : null]));
    var limits = report.limits;
    cards.push(card("Run", kv([["Run id", h("code", { text: report.runId })], ["agent-ci", report.agentCiVersion], ["Started", report.startedAt], ["Ended", report.endedAt],
      ["Duration", fmtDur(report.durationMs)], ["Max turns", limits.maxTurns !== undefined ? fmtInt(limits.maxTurns) : "none"],
      ["Budget", limits.maxBudgetUsd !== undefined ? fmtUsd(limits.maxBudgetUsd) : "none"], ["Timeout", limits.timeoutMs !== undefined ? fmtDur(limits.timeoutMs) : "none"],
      ["Report schema", "v" + report.schemaVersion]])));
    if (report.verify) {
      var v = report.verify, passed = v.applied && v.exitCode === 0;
      cards.push(card("Verify", [h("div", { class: "row" }, [badge(passed ? "ok" : "denied", passed ? "passed" : "failed")]),
        kv([["Command", h("code", { text: v.command })], ["Patch applied", v.applied ? "yes" : "no"], ["Exit code", v.exitCode === null ? "did not finish" : String(v.exitCode)], ["Duration", fmtDur(v.durationMs)]]),
        v.outputTail ? [h("h4", { text: "Output (tail)" }), h("pre", { class: "code" + (passed ? "" : " error") }, clean(v.outputTail))] : null]));
    }
    if (report.todos && report.todos.length) {
      cards.push(card("Todos", h("ul", { class: "checks" }, report.todos.map(function (t) {
        return h("li", null, [h("span", { class: t.status === "completed" ? "yes" : "faint", text: t.status === "completed" ? "\u2713" : t.status === "in_progress" ? "\u25d0" : "\u25cb" }), h("span", { text: t.content })]);
      }))));
    }
    return panel("run-section", "Run details", null, h("div", { class: "section-body" }, h("div", { class: "cards" }, cards)));
  }

  // ------------------------------------------------------------------------------------------- boot
  var app = byId("app");
  app.textContent = "";
  add(app, [renderHeader(), renderTimeline(), renderCalls(), renderChanges(), renderUsage(), renderRun(),
    h("footer", { text: "agent-ci " + report.agentCiVersion + " \u00b7 report schema v" + report.schemaVersion + " \u00b7 generated from report.json" })]);
  if (canvas) renderTicks();
  window.addEventListener("resize", renderTicks);
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
    if (event.key === "ArrowRight" || event.key === "j") { step(1); event.preventDefault(); }
    if (event.key === "ArrowLeft" || event.key === "k") { step(-1); event.preventDefault(); }
  });
  var match = /^#call=(.+)$/.exec(location.hash);
  if (match) selectCall(decodeURIComponent(match[1]), true);
  document.documentElement.setAttribute("data-ready", "true");
})();
`;
