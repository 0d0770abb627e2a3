// Which of several attempts at one task is the answer (`--attempts N`), without a person. Pure: the facts of
// each attempt in, the chosen one and a sentence saying why out. The Action's choose step applies the same rule.
//
// With --verify: verify passed with a patch that leaves what verify runs alone → passed with a patch that changes
// it (its package.json script, its test runner's configuration…: verify-inputs.ts) → failed; then fewer denied
// calls → smaller patch (changed lines) → fewer turns; a tie keeps the earlier attempt. An attempt that rewrote
// `"test"` to `exit 0` is never preferred to one that passed the project's own test. Without --verify: the
// smallest non-empty patch, and the choice says it was not verified.
import { oneLine, stripControl } from "../../../report/format.js";

export interface AttemptFacts {
  attempt: number;
  /** False when it never started (it has no patch to choose). */
  started: boolean;
  verify: "passed" | "failed" | "not_run";
  /** What verify runs that its patch changed (verify.changedInputs); empty when nothing. */
  verifyInputsChanged: readonly string[];
  deniedCalls: number;
  changedLines: number;
  turns: number;
}

export interface AttemptChoice {
  attempt: number;
  reason: string;
  verified: boolean;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * " with a patch that changes what verify runs (…)", or "" when it changed none of it. The names are the
 * patch's paths, on one line here: the reason is printed as a log line.
 */
const changesVerify = (a: AttemptFacts) =>
  a.verifyInputsChanged.length
    ? ` with a patch that changes what verify runs (${a.verifyInputsChanged.map((i) => oneLine(stripControl(i))).join(", ")})`
    : "";

/** The criteria in order: the key (smaller wins) and how a difference reads in the reason. */
const CRITERIA: ReadonlyArray<{ key: (a: AttemptFacts) => number; name: string; unit: string }> = [
  {
    key: (a) => (a.verify !== "passed" ? 2 : a.verifyInputsChanged.length ? 1 : 0),
    name: "passed verify",
    unit: "",
  },
  { key: (a) => a.deniedCalls, name: "fewest denied calls", unit: "denied call" },
  { key: (a) => a.changedLines, name: "smallest patch", unit: "changed line" },
  { key: (a) => a.turns, name: "fewest turns", unit: "turn" },
];

function compare(a: AttemptFacts, b: AttemptFacts): number {
  for (const criterion of CRITERIA) {
    const d = criterion.key(a) - criterion.key(b);
    if (d !== 0) return d;
  }
  return a.attempt - b.attempt;
}

export function chooseAttempt(attempts: readonly AttemptFacts[], verified: boolean): AttemptChoice {
  const started = attempts.filter((a) => a.started);
  const first = started[0] ?? attempts[0];
  if (!first) throw new Error("chooseAttempt: no attempts");
  if (!verified) {
    const changed = started.filter((a) => a.changedLines > 0);
    const best = changed.reduce<AttemptFacts | undefined>(
      (acc, a) => (acc === undefined || a.changedLines < acc.changedLines ? a : acc),
      undefined,
    );
    if (!best)
      return { attempt: first.attempt, reason: "no attempt changed anything; not verified", verified };
    return {
      attempt: best.attempt,
      reason: `the smallest non-empty patch (${plural(best.changedLines, "changed line")}) of ${plural(changed.length, "attempt")} that changed something; not verified (no --verify)`,
      verified,
    };
  }
  const ranked = [...started].sort(compare);
  const best = ranked[0] ?? first;
  const runnerUp = ranked[1];
  const head =
    best.verify === "passed"
      ? `attempt ${best.attempt} passed verify${changesVerify(best)}`
      : `no attempt passed verify; attempt ${best.attempt} came closest`;
  if (!runnerUp) return { attempt: best.attempt, reason: head, verified };
  // The first criterion that told the chosen one from the next best.
  const decided = CRITERIA.findIndex((c) => c.key(best) !== c.key(runnerUp));
  const criterion = CRITERIA[decided];
  let why: string;
  if (decided === 0 && runnerUp.verify === "passed")
    why = `attempt ${runnerUp.attempt} passed only${changesVerify(runnerUp)}`;
  else if (decided === 0) why = "the only one that did";
  else if (criterion)
    why = `${criterion.name} (${plural(criterion.key(best), criterion.unit)}, attempt ${runnerUp.attempt} had ${criterion.key(runnerUp)})`;
  else why = `tied with attempt ${runnerUp.attempt}, the earlier kept`;
  return { attempt: best.attempt, reason: why ? `${head}: ${why}` : head, verified };
}
