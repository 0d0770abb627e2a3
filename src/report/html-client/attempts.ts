// With --attempts: the attempts side by side (how each ended, verify, denied calls, patch size, turns, cost,
// its folder), the chosen one marked and why it was chosen; nothing for a run of one attempt.
import { formatInt, formatUsd } from "../format.js";
import { h } from "./dom.js";
import { badge, panel, report } from "./page.js";

const VERIFY_BADGES = { passed: "ok", failed: "error", not_run: "neutral" } as const;

export function renderAttempts(): HTMLElement | null {
  const attempts = report.attempts ?? [];
  const chosen = report.chosen;
  if (!chosen || attempts.length === 0) return null;
  const num = (text: string) => h("td", { class: "num", text });
  const rows = attempts.map((a) =>
    h("tr", { class: a.attempt === chosen.attempt ? "call-row selected" : "call-row" }, [
      h("td", null, [`${a.attempt}`, a.attempt === chosen.attempt ? [" ", badge("accent", "chosen")] : null]),
      h("td", { text: a.started ? a.exitReason : `not started (${a.exitReason})` }),
      h("td", null, badge(VERIFY_BADGES[a.verify], a.verify.replace("_", " "))),
      num(formatInt(a.deniedCalls)),
      num(formatInt(a.changedLines)),
      num(formatInt(a.turns)),
      num(formatUsd(a.costUsd)),
      h("td", { text: a.dir ? `${a.dir}/` : "\u2014" }),
    ]),
  );
  const head = ["Attempt", "Ended", "Verify", "Denied", "Changed lines", "Turns", "Cost", "Record"].map(
    (text, i) => h("th", { class: i >= 3 && i <= 6 ? "num" : null, text }),
  );
  return panel(
    "attempts",
    `Chosen from ${attempts.length} attempts`,
    `attempt ${chosen.attempt}: ${chosen.reason}${chosen.verified ? "" : " (not verified)"}`,
    h("table", { class: "grid-table" }, [h("thead", null, h("tr", null, head)), h("tbody", null, rows)]),
    null,
  );
}
