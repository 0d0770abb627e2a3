// What `agent-ci publish` checks before a patch leaves the runner: the run ended with changes, the patch
// is the one the report describes, it is under the size limit, it holds no secret finding, and it touches
// no protected path unless an allow rule names it, in the policy's own rule syntax (Edit(.github/workflows/**)).
// Pure: the flow in pull-request.ts reads the files and acts on the problems listed here.
import crypto from "node:crypto";
import { parseRule, ruleGovernsTool } from "../policy/rules.js";
import { compilePathPattern, PROTECTED_PATHS, WORKSPACE_ROOT } from "../policy/rule-paths.js";
import { parseGitDiff, scanForSecrets, type RunReport, type SecretFinding } from "../report/index.js";
import {
  DEFAULT_MAX_BINARY_BYTES,
  describeFinding,
  gateFindings,
  type FindingKind,
  type GateFinding,
} from "./gate-findings.js";
import { DEFAULT_MAX_PATCH_BYTES, PublishRefusedError } from "./options.js";
import type { PatchSides } from "./patch-sides.js";

export { DEFAULT_MAX_PATCH_BYTES };

export interface PatchCheckOptions {
  /** Allow rules (`Edit(.github/workflows/**)`) that let the patch change protected paths they name. */
  allow: readonly string[];
  maxPatchBytes: number;
  /** Values the patch must not contain (the publishing token). */
  secrets: readonly string[];
  /** Finding kinds the user let through (`--allow-finding`, `allow_findings`); the pull request says so. */
  allowFindings?: readonly FindingKind[];
  /** A binary file larger than this is a finding (default DEFAULT_MAX_BINARY_BYTES). */
  maxBinaryBytes?: number;
}

const PATH_CONTEXT = { workspaceRoot: WORKSPACE_ROOT, homeDir: "/home/agent" } as const;

function describeFindings(findings: readonly SecretFinding[]): string {
  return findings
    .slice(0, 10)
    .map((f) => `${f.file}${f.line ? `:${f.line}` : ""} (${f.kind})`)
    .join(", ");
}

/** Paths the patch changes (both sides of a rename) that are protected and not named by an allow rule. */
export function protectedChanges(patchText: string, allow: readonly string[]): string[] {
  // parseRule throws a PolicyConfigError naming the bad rule: bad input gets a clear error.
  const rules = allow
    .map((text) => parseRule(text, "allow", { kind: "cli", label: "publish allow", trusted: true }))
    .filter((rule) => rule.specifier !== undefined && ruleGovernsTool(rule, "Edit"))
    .map((rule) => ({ rule, pattern: compilePathPattern(rule.specifier ?? "", PATH_CONTEXT) }));
  const protectedPatterns = PROTECTED_PATHS.map((entry) => ({
    entry,
    pattern: compilePathPattern(entry.pattern, PATH_CONTEXT),
  }));
  const refused: string[] = [];
  for (const file of parseGitDiff(patchText).files) {
    for (const relative of new Set([file.path, file.oldPath ?? file.path])) {
      const absolute = `${WORKSPACE_ROOT}/${relative}`;
      const hit = protectedPatterns.find((p) => p.pattern.matches(absolute));
      if (!hit) continue;
      const allowed = rules.some(
        (r) => r.pattern.matches(absolute) && hit.entry.namedBy(r.rule.specifier ?? ""),
      );
      if (!allowed)
        refused.push(
          `${relative} is a protected path (${hit.entry.description}); allow it with Edit(/${relative}) or a pattern that names it`,
        );
    }
  }
  return refused;
}

/** Every reason not to publish this run's patch; empty when it may go out. */
export function patchProblems(
  report: RunReport,
  patchText: string | undefined,
  options: PatchCheckOptions,
): string[] {
  if (patchText === undefined)
    return [
      "patch.diff is missing next to report.json (the Action withholds it from the artifact when it contains a known secret)",
    ];
  const problems: string[] = [];
  if (report.outcome !== "changes")
    problems.push(`the run's outcome is ${report.outcome}; only a run that ended with changes is published`);
  if (report.patch.empty || patchText.length === 0) problems.push("the patch is empty: nothing to publish");
  const sha = crypto.createHash("sha256").update(patchText).digest("hex");
  if (sha !== report.patch.sha256)
    problems.push(
      "patch.diff is not the patch report.json describes (its sha256 differs): it was changed after the run",
    );
  const bytes = Buffer.byteLength(patchText);
  if (bytes > options.maxPatchBytes)
    problems.push(
      `the patch is ${bytes} bytes, over the limit of ${options.maxPatchBytes} (max_patch_bytes)`,
    );
  // A value this run or the publish step holds is never published; pattern findings are the gate's (below).
  const known = [
    ...report.patch.secretFindings,
    ...scanForSecrets(patchText, { secrets: options.secrets }),
  ].filter((f) => f.kind === "known_secret");
  if (known.length)
    problems.push(
      `the patch contains the publishing token or another known secret: ${describeFindings(known)}`,
    );
  problems.push(...protectedChanges(patchText, options.allow));
  if (!report.workspace.baseCommit)
    problems.push(
      "report.json records no base commit (the run's workspace was not a git checkout), so there is nothing to apply the patch to",
    );
  return problems;
}

export interface PatchCheck {
  /** Every reason not to publish; empty when the patch may go out. */
  problems: string[];
  /** The findings the user's `--allow-finding` let through: the pull request names them. */
  allowed: GateFinding[];
}

/**
 * The whole gate: patchProblems, then the findings (gate-findings.ts) over both sides of the patch, which `sides`
 * reads (the base commit fetched, the patch applied to it: patch-sides.ts) once the patch is the run's own and
 * has a base. A finding refuses the patch unless its kind is allowed; fail-closed, so a scan that throws
 * refuses too. A patch that does not apply is refused; a git step that fails throws.
 */
export async function checkPatch(
  report: RunReport,
  patchText: string | undefined,
  options: PatchCheckOptions,
  sides: () => Promise<PatchSides>,
): Promise<PatchCheck> {
  const problems = patchProblems(report, patchText, options);
  if (patchText === undefined) return { problems, allowed: [] };
  const sha = crypto.createHash("sha256").update(patchText).digest("hex");
  // Findings are about the run's own patch, applied to its base: a patch that is not (the problems say why) is
  // refused as it is.
  if (sha !== report.patch.sha256 || !report.workspace.baseCommit || patchText.length === 0)
    return { problems, allowed: [] };
  let read: PatchSides;
  try {
    read = await sides();
  } catch (error) {
    if (!(error instanceof PublishRefusedError)) throw error;
    return { problems: [...problems, error.message], allowed: [] };
  }
  let findings: GateFinding[];
  try {
    findings = await gateFindings(report, patchText, {
      maxBinaryBytes: options.maxBinaryBytes ?? DEFAULT_MAX_BINARY_BYTES,
      sides: read,
    });
  } catch (error) {
    return {
      problems: [...problems, `the patch could not be scanned: ${(error as Error).message}`],
      allowed: [],
    };
  }
  const allow = new Set(options.allowFindings ?? []);
  const refused = findings.filter((f) => !allow.has(f.kind));
  for (const kind of new Set(refused.map((f) => f.kind))) {
    const ofKind = refused.filter((f) => f.kind === kind);
    problems.push(
      `${ofKind.length} ${kind} finding(s): ${ofKind
        .slice(0, 10)
        .map(describeFinding)
        .join(
          "; ",
        )}${ofKind.length > 10 ? "; …" : ""}. Look at them; to publish anyway, pass --allow-finding ${kind} (publish input allow_findings: ${kind})`,
    );
  }
  return { problems, allowed: findings.filter((f) => allow.has(f.kind)) };
}
