// report.html's script: reads the JSON data block renderHtml wrote (ReportPageData, see page.ts) and draws the
// page: summary, timeline, tool calls with their details, the patch, usage and run details. No imports at run
// time and no network: scripts/embedded.mjs bundles this folder (and what it uses from ../format.ts) into
// one script that renderHtml inlines into the page. Checked in a real browser by test/browser/report-html.test.ts.
import { renderAttempts } from "./attempts.js";
import { renderCalls, selectCall, selectTurn, step } from "./calls.js";
import { renderChanges } from "./changes.js";
import { add, byId, h } from "./dom.js";
import { renderHeader } from "./header.js";
import { report } from "./page.js";
import { renderRun } from "./run-details.js";
import { renderTicks, renderTimeline } from "./timeline.js";
import { renderUsage } from "./usage.js";

const app = byId("app");
app.textContent = "";
add(app, [
  renderHeader(),
  renderAttempts(),
  renderTimeline({ call: (id) => selectCall(id, true), turn: selectTurn }),
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
