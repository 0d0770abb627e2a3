// The stylesheet inlined into report.html: light and dark themes, the summary header, the timeline,
// the call list and details panel, diffs. No fonts or images are loaded.

export const REPORT_CSS = `
:root {
  color-scheme: light dark;
  --bg: #f6f7f9; --panel: #ffffff; --panel-2: #f9fafb; --border: #e3e6ea; --border-strong: #cfd4da;
  --text: #1b1f24; --muted: #5f6b7a; --faint: #8a94a3;
  --accent: #4f46e5; --accent-soft: #eef0ff;
  --ok: #1f9d55; --ok-soft: #e5f6ec; --bad: #d12f2f; --bad-soft: #fdecec; --warn: #b7791f; --warn-soft: #fdf6e3;
  --info-soft: #eaf3fd; --info: #2563eb;
  --add-bg: #e6ffec; --add-num: #ccffd8; --del-bg: #ffebe9; --del-num: #ffd7d5; --hunk-bg: #eef2ff;
  --turn: #94a3b8; --phase: #cbd5e1; --phase-text: #334155; --grid: rgba(15, 23, 42, 0.06);
  --shadow: 0 1px 2px rgba(16, 24, 40, 0.05), 0 1px 3px rgba(16, 24, 40, 0.06);
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --radius: 10px;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --panel: #151b23; --panel-2: #1a212b; --border: #2a323d; --border-strong: #3a4350;
    --text: #e6edf3; --muted: #9aa6b2; --faint: #6e7a87;
    --accent: #8b8cf8; --accent-soft: #22244a;
    --ok: #3fb950; --ok-soft: #12261a; --bad: #f85149; --bad-soft: #2d1416; --warn: #d29922; --warn-soft: #2b2111;
    --info-soft: #132339; --info: #58a6ff;
    --add-bg: #12261a; --add-num: #173a22; --del-bg: #2d1416; --del-num: #471b1e; --hunk-bg: #1b2140;
    --turn: #64748b; --phase: #334155; --phase-text: #e2e8f0; --grid: rgba(230, 237, 243, 0.06);
    --shadow: 0 1px 2px rgba(0, 0, 0, 0.4);
  }
}
* { box-sizing: border-box; }
html { background: var(--bg); }
body { margin: 0; font: 14px/1.5 var(--sans); color: var(--text); background: var(--bg); }
code, pre, .mono { font-family: var(--mono); font-size: 12.5px; }
a { color: var(--accent); }
h2 { font-size: 16px; margin: 0; letter-spacing: -0.01em; }
h3 { font-size: 15px; margin: 0; }
h4 { font-size: 12px; margin: 18px 0 6px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); }
.wrap { max-width: 1400px; margin: 0 auto; padding: 24px 24px 64px; }
.panel { background: var(--panel); border: 1px solid var(--border); border-radius: var(--radius); box-shadow: var(--shadow); }
section.panel { margin-top: 20px; }
.section-head { display: flex; align-items: center; gap: 12px; padding: 14px 18px; border-bottom: 1px solid var(--border); flex-wrap: wrap; }
.section-head .sub { color: var(--muted); font-size: 13px; }
.section-head .spacer { flex: 1; }
.section-body { padding: 16px 18px; }
.muted { color: var(--muted); }
.faint { color: var(--faint); }
.nowrap { white-space: nowrap; }

/* header */
.hero { padding: 22px 24px 20px; }
.brand { display: flex; align-items: center; gap: 10px; color: var(--muted); font-size: 13px; flex-wrap: wrap; }
.brand .logo { font-weight: 700; color: var(--text); letter-spacing: -0.02em; }
.brand .dot-sep::before { content: "·"; margin: 0 2px; color: var(--faint); }
.headline { display: flex; align-items: center; gap: 14px; margin-top: 10px; flex-wrap: wrap; }
.headline h1 { font-size: 26px; margin: 0; letter-spacing: -0.02em; }
.outcome { display: inline-flex; align-items: center; gap: 8px; padding: 5px 12px 5px 10px; border-radius: 999px; font-weight: 600; font-size: 13px; }
.outcome .icon { width: 18px; height: 18px; border-radius: 50%; display: inline-grid; place-items: center; color: #fff; font-size: 11px; font-weight: 700; }
.outcome-changes { background: var(--ok-soft); color: var(--ok); } .outcome-changes .icon { background: var(--ok); }
.outcome-no_changes { background: var(--panel-2); color: var(--muted); border: 1px solid var(--border); } .outcome-no_changes .icon { background: var(--faint); }
.outcome-stopped { background: var(--warn-soft); color: var(--warn); } .outcome-stopped .icon { background: var(--warn); }
.outcome-verify_failed, .outcome-error { background: var(--bad-soft); color: var(--bad); }
.outcome-verify_failed .icon, .outcome-error .icon { background: var(--bad); }
.exit { font-size: 13px; color: var(--muted); }
.exit code { background: var(--panel-2); border: 1px solid var(--border); border-radius: 6px; padding: 1px 6px; color: var(--text); }
.stats { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 10px; margin-top: 18px; }
.stat { background: var(--panel-2); border: 1px solid var(--border); border-radius: 8px; padding: 10px 12px; min-width: 0; }
.stat .label { font-size: 11px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); }
.stat .value { font-size: 20px; font-weight: 650; letter-spacing: -0.02em; margin-top: 2px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.stat .value.text { font-family: var(--mono); font-size: 17px; line-height: 30px; font-weight: 600; }
.stat .detail { font-size: 12px; color: var(--muted); line-height: 1.35; margin-top: 2px; }
.stat .detail .bad { color: var(--bad); font-weight: 600; }
.context { margin-top: 14px; font-size: 13px; color: var(--muted); }
.context summary { cursor: pointer; }
.context .title { font-weight: 650; color: var(--text); }
.context ul { margin: 6px 0 0 18px; padding: 0; }
.context pre { margin: 6px 0 0; white-space: pre-wrap; }
.callout { margin-top: 14px; border-radius: 8px; padding: 10px 14px; border: 1px solid; font-size: 13.5px; }
.callout strong { font-weight: 650; }
.callout.critical, .callout.error { background: var(--bad-soft); border-color: color-mix(in srgb, var(--bad) 40%, transparent); color: var(--text); }
.callout.warning { background: var(--warn-soft); border-color: color-mix(in srgb, var(--warn) 40%, transparent); }
.callout.info { background: var(--info-soft); border-color: color-mix(in srgb, var(--info) 30%, transparent); }
.callout .title { font-weight: 700; margin-right: 6px; }
.callout.critical .title, .callout.error .title { color: var(--bad); }
.callout.warning .title { color: var(--warn); }
.callout.info .title { color: var(--info); }
.nav { display: flex; gap: 4px; margin-top: 18px; flex-wrap: wrap; }
.nav a { text-decoration: none; color: var(--muted); font-size: 13px; padding: 4px 10px; border-radius: 6px; }
.nav a:hover { background: var(--panel-2); color: var(--text); }

/* controls */
.seg { display: inline-flex; border: 1px solid var(--border); border-radius: 7px; overflow: hidden; background: var(--panel-2); }
.seg button, .btn { font: inherit; font-size: 12.5px; border: 0; background: transparent; color: var(--muted); padding: 4px 10px; cursor: pointer; }
.seg button + button { border-left: 1px solid var(--border); }
.seg button[aria-pressed="true"] { background: var(--panel); color: var(--text); font-weight: 600; }
.btn { border: 1px solid var(--border); border-radius: 7px; background: var(--panel-2); }
.btn:hover, .seg button:hover { color: var(--text); }
.btn:disabled { opacity: 0.4; cursor: default; }
.ctl-label { font-size: 12px; color: var(--muted); }
input.search { font: inherit; font-size: 13px; padding: 5px 10px; border: 1px solid var(--border); border-radius: 7px; background: var(--panel); color: var(--text); min-width: 220px; }
input.search:focus { outline: 2px solid color-mix(in srgb, var(--accent) 40%, transparent); border-color: var(--accent); }

/* legend */
.legend { display: flex; flex-wrap: wrap; gap: 6px 14px; padding: 10px 18px 0; font-size: 12px; color: var(--muted); }
.legend .item { display: inline-flex; align-items: center; gap: 6px; }
.swatch { width: 10px; height: 10px; border-radius: 3px; display: inline-block; background: var(--c, var(--accent)); }
.swatch.denied { background: repeating-linear-gradient(135deg, var(--bad) 0 3px, var(--bad-soft) 3px 6px); border: 1px solid var(--bad); }
.swatch.error { background: var(--bad); }
.swatch.ok { background: var(--ok); }
.swatch.turn { background: var(--turn); }
.swatch.phase { background: var(--phase); }
.legend-outcome { display: none; }
.tl-root[data-color="outcome"] .legend-tool { display: none; }
.tl-root[data-color="outcome"] .legend-outcome { display: flex; }

/* timeline */
.tl { display: grid; grid-template-columns: 128px 1fr; padding: 10px 18px 16px; }
.tl-labels { padding-top: 26px; }
.tl-label { display: flex; align-items: center; justify-content: space-between; gap: 6px; padding-right: 10px; font-size: 12px; font-weight: 600; border-top: 1px solid var(--grid); }
.tl-label .count { font-weight: 500; color: var(--faint); font-size: 11px; }
.tl-label .dot { width: 8px; height: 8px; border-radius: 50%; background: var(--c); display: inline-block; margin-right: 6px; }
.tl-scroll { overflow-x: auto; overflow-y: hidden; border-left: 1px solid var(--border); }
.tl-canvas { position: relative; min-width: 100%; }
.tl-axis { position: relative; height: 26px; border-bottom: 1px solid var(--border); }
.tl-tick { position: absolute; top: 6px; font-size: 10.5px; color: var(--faint); transform: translateX(-50%); white-space: nowrap; font-variant-numeric: tabular-nums; }
.tl-tick:first-child { transform: none; padding-left: 4px; }
.tl-gridline { position: absolute; top: 26px; bottom: 0; width: 1px; background: var(--grid); pointer-events: none; }
.tl-marks { position: absolute; top: 16px; left: 0; right: 0; height: 10px; pointer-events: none; }
.tl-mark { position: absolute; top: 0; width: 0; height: 0; transform: translateX(-5px); border-left: 5px solid transparent; border-right: 5px solid transparent; border-top: 7px solid var(--bad); }
.tl-mark.error { border-top-color: var(--warn); }
.tl-mark.compaction { border-top-color: var(--turn); }
.tl-mark.egress.allowed { border-top-color: var(--info); }
.tl-mark.egress.denied { border-top-color: var(--bad); }
.tl-lane { position: relative; border-top: 1px solid var(--grid); }
.tl-label.sub { padding-left: 12px; font-weight: 500; color: var(--muted); }
.tl-label.sub > span:first-child { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tl-label.sub .dot { display: none; }
.tl-lane.sub { border-top-style: dashed; }
.agent-span { position: absolute; top: 2px; bottom: 2px; min-width: 3px; border-radius: 4px; background: var(--grid); box-shadow: inset 2px 0 0 var(--turn); pointer-events: none; }
.agent-span[data-status="stopped"], .agent-span[data-status="failed"] { box-shadow: inset 2px 0 0 var(--turn), inset -2px 0 0 var(--warn); }
.call-bar, .turn-bar { position: absolute; height: 16px; min-width: 5px; border-radius: 4px; border: 0; padding: 0; margin: 0; cursor: pointer; font: inherit; }
.turn-bar { background: var(--turn); opacity: 0.75; }
.phase-bar { position: absolute; height: 16px; min-width: 5px; border-radius: 4px; background: var(--phase); color: var(--phase-text); font-size: 10.5px; line-height: 16px; padding: 0 4px; box-sizing: border-box; overflow: hidden; white-space: nowrap; text-overflow: clip; }
.turn-bar:hover { opacity: 1; }
.call-bar { background: var(--c); box-shadow: inset 0 0 0 1px rgba(0, 0, 0, 0.12); transition: filter 0.1s, opacity 0.15s; }
.call-bar:hover { filter: brightness(1.12); z-index: 2; }
.call-bar[data-status="error"] { box-shadow: inset 0 0 0 2px var(--bad); }
.call-bar[data-status="denied"] { background: repeating-linear-gradient(135deg, var(--bad) 0 3px, var(--bad-soft) 3px 6px); box-shadow: inset 0 0 0 1px var(--bad); }
.tl-root[data-color="outcome"] .call-bar[data-status="ok"] { background: var(--ok); }
.tl-root[data-color="outcome"] .call-bar[data-status="error"] { background: var(--bad); box-shadow: none; }
.call-bar.selected, .turn-bar.selected { outline: 2px solid var(--text); outline-offset: 1px; z-index: 3; }
.call-bar.dim { opacity: 0.18; }
.call-bar:focus-visible, .turn-bar:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.tl-foot { display: flex; justify-content: space-between; padding: 0 18px 12px; font-size: 12px; color: var(--faint); }

/* calls */
.calls-layout { display: grid; grid-template-columns: minmax(0, 1.15fr) minmax(0, 1fr); min-height: 420px; }
.call-list { border-right: 1px solid var(--border); max-height: 720px; overflow: auto; }
table { border-collapse: collapse; width: 100%; }
.grid-table th { position: sticky; top: 0; background: var(--panel-2); font-size: 11px; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted); text-align: left; font-weight: 600; padding: 7px 10px; border-bottom: 1px solid var(--border); z-index: 1; }
.grid-table td { padding: 6px 10px; border-bottom: 1px solid var(--border); vertical-align: top; font-size: 13px; }
.grid-table td.num, .grid-table th.num { text-align: right; font-variant-numeric: tabular-nums; }
.call-row { cursor: pointer; }
.call-row:hover td { background: var(--panel-2); }
.call-row.selected td { background: var(--accent-soft); }
.call-row.selected td:first-child { box-shadow: inset 3px 0 0 var(--accent); }
.call-row .summary { font-family: var(--mono); font-size: 12px; max-width: 0; width: 60%; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tool-tag { display: inline-flex; align-items: center; gap: 6px; font-weight: 600; font-size: 12.5px; white-space: nowrap; }
.call-row.sub td:nth-child(2) { padding-left: 24px; }
.agent-tag { display: block; font-size: 11px; color: var(--muted); white-space: nowrap; }
.agent-tag::before { content: "\\21b3  "; }
.tool-tag::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: var(--c); }
.badge { display: inline-block; font-size: 11px; font-weight: 600; padding: 1px 7px; border-radius: 999px; white-space: nowrap; border: 1px solid transparent; }
.badge.ok { background: var(--ok-soft); color: var(--ok); }
.badge.denied, .badge.error { background: var(--bad-soft); color: var(--bad); }
.badge.neutral { background: var(--panel-2); color: var(--muted); border-color: var(--border); }
.badge.warn { background: var(--warn-soft); color: var(--warn); }
.badge.accent { background: var(--accent-soft); color: var(--accent); }
.empty { padding: 28px; text-align: center; color: var(--muted); }

/* details panel */
.call-details { padding: 16px 18px 22px; min-width: 0; max-height: 720px; overflow: auto; }
.cd-head { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
.cd-head .spacer { flex: 1; }
.cd-summary { margin-top: 8px; font-family: var(--mono); font-size: 12.5px; background: var(--panel-2); border: 1px solid var(--border); border-radius: 7px; padding: 7px 10px; word-break: break-all; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; margin: 12px 0 0; font-size: 13px; }
dl.kv dt { color: var(--muted); }
dl.kv dd { margin: 0; min-width: 0; word-break: break-word; }
.decision { border: 1px solid var(--border); border-radius: 8px; padding: 10px 12px; background: var(--panel-2); font-size: 13px; }
.decision.deny { border-color: color-mix(in srgb, var(--bad) 45%, transparent); background: var(--bad-soft); }
.decision .row { display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; margin-top: 4px; }
.decision .row:first-child { margin-top: 0; }
pre.code { margin: 0; background: var(--panel-2); border: 1px solid var(--border); border-radius: 7px; padding: 10px 12px; overflow: auto; max-height: 360px; white-space: pre-wrap; word-break: break-word; line-height: 1.45; }
pre.code.error { border-color: color-mix(in srgb, var(--bad) 45%, transparent); }
.note { font-size: 12px; color: var(--muted); margin-top: 6px; }

/* diffs */
.diff-wrap { border: 1px solid var(--border); border-radius: 7px; overflow: auto; max-height: 640px; }
table.diff { font-family: var(--mono); font-size: 12px; line-height: 1.5; }
table.diff td { padding: 0 8px; white-space: pre-wrap; word-break: break-all; vertical-align: top; }
table.diff td.ln { width: 1%; min-width: 42px; text-align: right; color: var(--faint); user-select: none; white-space: nowrap; border-right: 1px solid var(--border); }
table.diff td.sign { width: 1%; padding: 0 2px 0 8px; user-select: none; color: var(--muted); }
table.diff tr.add td { background: var(--add-bg); } table.diff tr.add td.ln { background: var(--add-num); }
table.diff tr.del td { background: var(--del-bg); } table.diff tr.del td.ln { background: var(--del-num); }
table.diff tr.hunk td { background: var(--hunk-bg); color: var(--muted); padding: 3px 8px; }
table.diff tr.note td { color: var(--faint); font-style: italic; }
table.diff tr.secret td:last-child { box-shadow: inset 3px 0 0 var(--bad); }
.secret-flag { display: inline-block; margin-left: 8px; font-family: var(--sans); font-size: 10.5px; font-weight: 700; color: #fff; background: var(--bad); border-radius: 4px; padding: 0 5px; }
.file-list { display: grid; gap: 2px; }
.file-row { display: flex; align-items: center; gap: 10px; padding: 5px 8px; border-radius: 6px; text-decoration: none; color: var(--text); font-size: 13px; }
.file-row:hover { background: var(--panel-2); }
.file-row .path { font-family: var(--mono); font-size: 12.5px; flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.plus { color: var(--ok); font-weight: 600; font-variant-numeric: tabular-nums; }
.minus { color: var(--bad); font-weight: 600; font-variant-numeric: tabular-nums; }
.blocks { display: inline-flex; gap: 1px; }
.blocks i { width: 8px; height: 8px; border-radius: 1px; background: var(--border-strong); display: inline-block; }
.blocks i.a { background: var(--ok); } .blocks i.d { background: var(--bad); }
details.file { border: 1px solid var(--border); border-radius: 8px; margin-top: 12px; overflow: hidden; background: var(--panel); }
details.file > summary { display: flex; align-items: center; gap: 10px; padding: 8px 12px; cursor: pointer; background: var(--panel-2); border-bottom: 1px solid var(--border); list-style: none; }
details.file > summary::-webkit-details-marker { display: none; }
details.file > summary::before { content: "▸"; color: var(--faint); transition: transform 0.15s; }
details.file[open] > summary::before { transform: rotate(90deg); }
details.file > summary .path { font-family: var(--mono); font-size: 12.5px; font-weight: 600; flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
details.file .diff-wrap { border: 0; border-radius: 0; }
.binary { padding: 12px; color: var(--muted); font-size: 13px; }

/* usage */
.usage-grid { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.4fr); gap: 20px; }
.chart { display: flex; align-items: flex-end; gap: 3px; height: 150px; padding: 8px 4px 0; border-bottom: 1px solid var(--border); }
.chart .col { flex: 1; min-width: 3px; max-width: 28px; display: flex; flex-direction: column-reverse; border-radius: 3px 3px 0 0; overflow: hidden; cursor: default; }
.chart .seg-in { background: var(--accent); } .chart .seg-out { background: #f59e0b; }
.chart .seg-cr { background: color-mix(in srgb, var(--accent) 35%, transparent); } .chart .seg-cw { background: color-mix(in srgb, #0ea5e9 60%, transparent); }
.chart-legend { display: flex; gap: 14px; flex-wrap: wrap; font-size: 12px; color: var(--muted); margin-top: 8px; }
.chart-legend .swatch.in { background: var(--accent); } .chart-legend .swatch.out { background: #f59e0b; }
.chart-legend .swatch.cr { background: color-mix(in srgb, var(--accent) 35%, transparent); } .chart-legend .swatch.cw { background: color-mix(in srgb, #0ea5e9 60%, transparent); }
.usage-table { max-height: 320px; overflow: auto; border: 1px solid var(--border); border-radius: 7px; }

/* run details */
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 14px; }
.card { border: 1px solid var(--border); border-radius: 8px; padding: 12px 14px; background: var(--panel-2); min-width: 0; overflow-x: auto; }
.card h3 { font-size: 13px; margin-bottom: 8px; }
.checks { list-style: none; margin: 0; padding: 0; font-size: 13px; }
.checks li { display: flex; gap: 8px; align-items: baseline; padding: 2px 0; }
.checks .yes { color: var(--ok); font-weight: 700; } .checks .no { color: var(--bad); font-weight: 700; }
/* A rule, a source path or a reason of any length wraps inside its card: between words when it can, anywhere when one word is wider than the card. */
.rules td { font-size: 12.5px; overflow-wrap: anywhere; }
footer { margin-top: 26px; text-align: center; font-size: 12px; color: var(--faint); }
@media (max-width: 900px) {
  .stats { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .calls-layout, .usage-grid { grid-template-columns: 1fr; }
  .call-list { border-right: 0; border-bottom: 1px solid var(--border); max-height: 420px; }
  .tl { grid-template-columns: 96px 1fr; }
}
@media print {
  .call-list, .call-details, .diff-wrap { max-height: none; }
  .nav, .seg, .btn { display: none; }
}
`;
