/**
 * `agent-ci policy test --replay report.json`: decide every recorded call again under a changed
 * policy and list the calls whose decision flips, so a policy change can be tried on a real run.
 */
import type { PolicyEngine } from "./evaluate.js";
import type { Decision } from "./schema.js";

export interface RecordedCall {
  readonly id: string;
  readonly tool: string;
  readonly input: Readonly<Record<string, unknown>>;
  readonly paths?: readonly string[] | undefined;
  readonly cwd?: string | undefined;
  readonly readOnly: boolean;
  readonly decision: Pick<Decision, "behavior">;
}

export interface DecisionFlip {
  readonly id: string;
  readonly tool: string;
  readonly input: Readonly<Record<string, unknown>>;
  readonly before: "allow" | "deny";
  readonly after: Decision;
}

export function replayDecisions(
  calls: readonly RecordedCall[],
  engine: Pick<PolicyEngine, "decide">,
): DecisionFlip[] {
  const flips: DecisionFlip[] = [];
  for (const call of calls) {
    const after = engine.decide({
      tool: call.tool,
      input: call.input,
      paths: call.paths,
      cwd: call.cwd,
      readOnly: call.readOnly,
    });
    if (after.behavior === call.decision.behavior) continue;
    flips.push({ id: call.id, tool: call.tool, input: call.input, before: call.decision.behavior, after });
  }
  return flips;
}
