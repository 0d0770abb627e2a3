// The pull request's line about a run made of several attempts (`--attempts N`): which one it is, and how the
// others ended, with where their records are.
import { escapeMarkdownInline, markdownCode, type Attempt, type RunReport } from "../report/index.js";

/** " with a patch that changes what verify runs (<code>package.json scripts.test</code>, …)", as the choice says it. */
const changesVerify = (inputs: readonly string[]) =>
  ` with a patch that changes what verify runs (${inputs.map((input) => markdownCode(input, 300)).join(", ")})`;

/** "Chosen from 4 attempts: attempt 4 passed verify (…); 1 other passed verify; 2 failed verify; …", or "". */
export function attemptsLine(report: RunReport): string {
  const { attempts, chosen } = report;
  if (!attempts?.length || !chosen) return "";
  const mine = attempts.find((a) => a.attempt === chosen.attempt);
  const others = attempts.filter((a) => a.attempt !== chosen.attempt);
  const count = (test: (a: Attempt) => boolean, said: (n: number) => string) => {
    const n = others.filter(test).length;
    return n ? said(n) : "";
  };
  const how =
    mine?.verify === "passed"
      ? `passed verify${mine.verifyInputsChanged?.length ? changesVerify(mine.verifyInputsChanged) : ""}`
      : chosen.verified
        ? "did not pass verify"
        : "was not verified";
  // The choice's reason starts with what this line says itself ("attempt k passed verify: …").
  const why = chosen.reason.replace(
    new RegExp(
      `^attempt ${chosen.attempt} passed verify(?: with a patch that changes what verify runs \\(.*\\))?(: |$)`,
    ),
    "",
  );
  const parts = [
    `attempt ${chosen.attempt} ${how}${why ? ` (${escapeMarkdownInline(why)})` : ""}`,
    count(
      (a) => a.verify === "passed" && !a.verifyInputsChanged?.length,
      (n) => `${n} other${n === 1 ? "" : "s"} passed verify`,
    ),
    count(
      (a) => a.verify === "passed" && Boolean(a.verifyInputsChanged?.length),
      (n) => `${n} passed verify only with a patch that changes what verify runs`,
    ),
    count(
      (a) => a.verify === "failed",
      (n) => `${n} failed verify`,
    ),
    count(
      (a) => a.deniedCalls > 0,
      (n) => `${n} ${n === 1 ? "was" : "were"} denied a call`,
    ),
    count(
      (a) => !a.started,
      (n) => `${n} did not start`,
    ),
  ].filter(Boolean);
  const records = others.flatMap((a) => (a.dir ? [markdownCode(`${a.dir}/`, 40)] : []));
  return `**Chosen from ${attempts.length} attempts**: ${parts.join("; ")}.${records.length ? ` The others' records are in the run's output: ${records.join(", ")}.` : ""}`;
}
