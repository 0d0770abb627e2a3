// The publish gate's findings: what in a patch a person must look at before it leaves the runner, because
// it runs or leaks on someone else's machine once merged or checked out. A secret (agent-ci's own formats and
// secretlint's recommended rule set), a new or changed lifecycle script (`postinstall` runs on every
// `npm install` of the branch) or setting or file that makes a package manager or build tool run a program
// (read on both sides of the patch as the tool reads it: manifests.ts), a committed git hook or hook manager's
// configuration, a new executable file, a binary over the size the user set. Each names its file and line.
// The gate is fail-closed: a finding refuses the patch unless `--allow-finding KIND` (input `allow_findings`)
// names its kind, and then the pull request says so.
import type * as SecretlintCore from "@secretlint/core";
import { parseGitDiff, scanForSecrets, type DiffFile, type RunReport } from "../report/index.js";
import { CODE_FILES, SETTINGS_FILES } from "./manifests.js";
import { DEFAULT_MAX_BINARY_BYTES, FINDING_KINDS, parseFindingKinds, type FindingKind } from "./options.js";
import type { PatchSides } from "./patch-sides.js";

export { DEFAULT_MAX_BINARY_BYTES, FINDING_KINDS, parseFindingKinds, type FindingKind };

export interface GateFinding {
  kind: FindingKind;
  file: string;
  /** The line in the new file, when the finding is on one. */
  line?: number;
  /** What was found, without the secret. */
  detail: string;
}

export interface FindingOptions {
  /** A binary file larger than this in the patch is a finding. */
  maxBinaryBytes: number;
  /** The files on both sides of the patch: settings are compared as their tools read them (manifests.ts). */
  sides: PatchSides;
}

// secretlint's recommended preset, each rule on its own, less the one that lets the scanned text switch
// rules off (`secretlint-disable` comments): the patch is the author of that text here. secretlint is loaded
// when a patch is scanned, not by every command that imports the gate.
async function secretlint(): Promise<{
  lintSource: typeof SecretlintCore.lintSource;
  config: Parameters<typeof SecretlintCore.lintSource>[0]["options"]["config"];
}> {
  const [{ lintSource }, { rules }] = await Promise.all([
    import("@secretlint/core"),
    import("@secretlint/secretlint-rule-preset-recommend"),
  ]);
  const config = {
    rules: rules
      .filter((rule) => rule.meta.id !== "@secretlint/secretlint-rule-filter-comments")
      .map((rule) => ({ id: rule.meta.id, rule })),
  };
  return { lintSource, config };
}

/** Committed git hooks and hook managers' configuration (husky, lefthook, pre-commit, simple-git-hooks, overcommit). */
const GIT_HOOK_PATHS =
  /(?:^|\/)(?:\.husky\/.+|\.githooks\/.+|\.git-hooks\/.+|\.lefthook(?:-local)?\/.+|\.?lefthook(?:-local)?\.(?:ya?ml|json|toml)|\.pre-commit-config\.ya?ml|\.pre-commit-hooks\.ya?ml|\.?simple-git-hooks\.(?:c?js|mjs|json)|\.huskyrc(?:\.\w+)?|\.overcommit\.ya?ml|\.lintstagedrc(?:\.\w+)?|lint-staged\.config\.\w+)$/;

function addedLines(file: DiffFile): Array<{ text: string; line: number }> {
  return file.hunks.flatMap((hunk) =>
    hunk.lines.flatMap((l) =>
      l.type === "add" && l.newLine !== undefined ? [{ text: l.text, line: l.newLine }] : [],
    ),
  );
}

function firstAddedLine(file: DiffFile): number | undefined {
  return addedLines(file)[0]?.line;
}

/** Files whose name a secretlint rule reads (package.json, .npmrc, JSON keys) are scanned on their own, up to this many. */
const NAMED_SCANS_MAX = 200;
const NAMED_BY_RULES = /(?:^|\/)(?:package\.json|\.npmrc)$|\.json$/;

interface ScanSource {
  /** A name for secretlint: the path with anything outside printable ASCII, `:` and `|` replaced (its profiler keys marks by it). */
  name: string;
  text: string[];
  /** Each text line's file and line in the new file. */
  at: Array<{ file: string; line: number }>;
}

/**
 * secretlint over the lines the patch adds. Files whose name matters to a rule are scanned one by one; the
 * rest as one text (secretlint's profiler keeps every mark of the process, so a scan per file would grow with
 * the square of the number of files). A blank line between files keeps a multi-line secret within one.
 */
async function secretlintFindings(files: readonly DiffFile[]): Promise<GateFinding[]> {
  const sources: ScanSource[] = [];
  const rest: ScanSource = { name: "patch.txt", text: [], at: [] };
  for (const file of files) {
    const lines = addedLines(file);
    if (!lines.length) continue;
    const named = NAMED_BY_RULES.test(file.path) && sources.length < NAMED_SCANS_MAX;
    const into: ScanSource = named
      ? { name: file.path.replace(/[^\x20-\x7e]|[:|]/g, "_"), text: [], at: [] }
      : rest;
    if (named) sources.push(into);
    else if (into.text.length) {
      into.text.push("");
      into.at.push({ file: file.path, line: 0 });
    }
    for (const { text, line } of lines) {
      into.text.push(text);
      into.at.push({ file: file.path, line });
    }
  }
  if (rest.text.length) sources.push(rest);
  const findings: GateFinding[] = [];
  if (!sources.length) return findings;
  const { lintSource, config } = await secretlint();
  for (const source of sources) {
    const result = await lintSource({
      source: {
        filePath: source.name,
        content: `${source.text.join("\n")}\n`,
        // `.p12` makes a rule read the file from disk: the patch's text is all there is to scan.
        ext: (/\.[^./]*$/.exec(source.name)?.[0] ?? "").replace(/^\.p12$/i, ""),
        contentType: "text",
      },
      options: { config, maskSecrets: true },
    });
    for (const message of result.messages) {
      const where = source.at[message.loc.start.line - 1];
      findings.push({
        kind: "secret",
        file: where?.file ?? source.name,
        line: where?.line || undefined,
        detail: `${message.ruleId.replace(/^@secretlint\/secretlint-rule-/, "secretlint ")}: ${message.message}`,
      });
    }
  }
  return findings;
}

/** The first added line that mentions `name`'s last part, else the file's first added line. */
function lineOf(file: DiffFile, name: string): number | undefined {
  const leaf = name.slice(name.lastIndexOf(".") + 1);
  return addedLines(file).find((l) => l.text.includes(leaf))?.line ?? firstAddedLine(file);
}

/**
 * A settings file (manifests.ts) read on both sides of the patch, as its tool reads it: each setting of interest
 * the patch adds or changes is a finding; one it removes or leaves as it was is not. A file the tool could not
 * read as the patch leaves it is a finding too: what it would run cannot be checked.
 */
async function settingsFindings(file: DiffFile, sides: PatchSides): Promise<GateFinding[]> {
  const reader = SETTINGS_FILES.find((settings) => settings.path.test(file.path));
  if (!reader) return [];
  const name = file.path.slice(file.path.lastIndexOf("/") + 1);
  const unreadable = (why: string): GateFinding[] => [
    { kind: "lifecycle_script", file: file.path, line: firstAddedLine(file), detail: `${name} ${why}` },
  ];
  const after = await sides.patched(file.path);
  if (after === undefined) return unreadable("is not a regular file the gate can read");
  const now = reader.read(after);
  if (now === undefined)
    return unreadable(`does not parse (${reader.readAs}), so what it runs cannot be checked`);
  const beforeText = await sides.base(file.path);
  const before = new Map(
    ((beforeText === undefined ? [] : reader.read(beforeText)) ?? []).map((s) => [s.name, s.value]),
  );
  return now
    .filter((setting) => before.get(setting.name) !== setting.value)
    .map((setting) => ({
      kind: setting.kind,
      file: file.path,
      line: lineOf(file, setting.name),
      detail: reader.describe(setting),
    }));
}

function fileFindings(file: DiffFile, options: FindingOptions): GateFinding[] {
  const findings: GateFinding[] = [];
  const at = (kind: FindingKind, detail: string, line = firstAddedLine(file)) =>
    findings.push({ kind, file: file.path, line, detail });
  const name = file.path;
  for (const code of CODE_FILES) if (code.path.test(name)) at("lifecycle_script", code.detail);
  if (GIT_HOOK_PATHS.test(name)) at("git_hook", "a committed git hook or hook manager configuration");
  if (file.mode === "100755") at("executable", "a new executable file (mode 100755)");
  if (file.binary && (file.binaryBytes ?? 0) > options.maxBinaryBytes)
    at(
      "large_binary",
      `a binary file of ${file.binaryBytes} bytes, over the limit of ${options.maxBinaryBytes} (max_binary_bytes)`,
      undefined,
    );
  return findings;
}

/** Everything the gate finds in the patch, in the patch's order. */
export async function gateFindings(
  report: RunReport,
  patchText: string,
  options: FindingOptions,
): Promise<GateFinding[]> {
  const findings: GateFinding[] = [];
  const seen = new Set<string>();
  const add = (finding: GateFinding) => {
    const key = `${finding.kind}\0${finding.file}\0${finding.line ?? ""}\0${finding.detail}`;
    if (seen.has(key)) return;
    seen.add(key);
    findings.push(finding);
  };
  // agent-ci's own formats: what the run recorded, and a scan of the patch itself (a report can be forged).
  const own = [
    ...report.patch.secretFindings.filter((f) => f.kind !== "known_secret"),
    ...scanForSecrets(patchText),
  ];
  for (const f of own) add({ kind: "secret", file: f.file, line: f.line, detail: f.kind });
  const files = parseGitDiff(patchText).files.filter((file) => file.status !== "deleted");
  for (const file of files) {
    for (const finding of await settingsFindings(file, options.sides)) add(finding);
    for (const finding of fileFindings(file, options)) add(finding);
  }
  for (const finding of await secretlintFindings(files)) add(finding);
  return findings;
}

export function describeFinding(finding: GateFinding): string {
  return `${finding.file}${finding.line ? `:${finding.line}` : ""} ${finding.kind} (${finding.detail})`;
}
