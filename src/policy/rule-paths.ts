/**
 * Container paths for the policy: lexical canonicalisation, workspace containment, Read/Edit rule
 * patterns with Claude Code's gitignore-style semantics, and the protected paths of RELIABILITY P12.
 *
 * Decisions a reader will ask about:
 * - Paths are compared case-sensitively. The container file system is Linux (ext4/overlayfs), where
 *   `.ENV` and `.env` are different files; folding case would let a deny rule for one name be read
 *   as covering another file, and an allow rule over-match.
 * - Patterns follow gitignore, as Claude Code documents: `//p` is absolute, `~/p` is under the
 *   container home, `/p` is relative to the project root (not the file-system root), a pattern with
 *   a slash in the middle is anchored at the project root, and one without a slash (`.env`,
 *   `*.pem`) matches at any depth. `./p` is anchored at the project root: agent-ci always starts in
 *   /workspace, so "the current directory" of Claude Code is the root here. A pattern that matches a
 *   directory also matches everything below it (gitignore excludes a directory's contents).
 * - The pipeline hands canonical paths (symlinks resolved in the container); this module only
 *   normalises lexically, as a second check.
 */
import picomatch from "picomatch";

export { isInside, relativeToRoot } from "./inside-root.js";

export const WORKSPACE_ROOT = "/workspace";
export const DEFAULT_HOME_DIR = "/home/agent";

/** Writing to these is never a file change (`> /dev/null`, `2> /dev/stderr`). */
export const HARMLESS_WRITE_TARGETS: ReadonlySet<string> = new Set([
  "/dev/null",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/tty",
  "/dev/fd/1",
  "/dev/fd/2",
]);

/** Collapses `//`, `.` and `..` in an absolute path; `..` above `/` stays at `/`, as the kernel does. */
export function normalizeAbsolute(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      segments.pop();
      continue;
    }
    segments.push(segment);
  }
  return `/${segments.join("/")}`;
}

/**
 * Resolves a path as the container would see it, lexically. `undefined` for strings that are not a
 * usable path (empty, NUL byte).
 */
export function resolveContainerPath(path: string, cwd: string, homeDir: string): string | undefined {
  if (path === "" || path.includes("\u0000")) return undefined;
  if (path === "~" || path.startsWith("~/")) return normalizeAbsolute(homeDir + path.slice(1));
  if (path.startsWith("/")) return normalizeAbsolute(path);
  return normalizeAbsolute(`${cwd}/${path}`);
}

export interface PathPatternContext {
  readonly workspaceRoot: string;
  readonly homeDir: string;
}

export interface PathPattern {
  /** The specifier as written in the rule. */
  readonly spec: string;
  /** The absolute glob it was compiled to. */
  readonly glob: string;
  /** The absolute path when the pattern is anchored and has no glob characters. */
  readonly literal: string | undefined;
  /** The file name when the pattern matches a fixed name at any depth (`.env`). */
  readonly literalName: string | undefined;
  readonly anyDepth: boolean;
  matches(path: string): boolean;
}

const GLOB_CHARS = /[*?[\]{}!]/;

/** Why a path specifier cannot be used, or undefined when it is fine. */
export function pathSpecifierProblem(spec: string): string | undefined {
  if (spec.trim() === "") return "empty path pattern";
  if (spec !== spec.trim()) return "leading or trailing whitespace in a path pattern";
  if (spec.endsWith(":*")) return "`:*` is Bash prefix syntax; path rules use globs such as `src/**`";
  if (spec.startsWith("~") && spec !== "~" && !spec.startsWith("~/"))
    return "`~user` paths are not supported";
  if (spec.startsWith("!")) return "negated patterns are not supported in permission rules";
  return undefined;
}

export function compilePathPattern(spec: string, context: PathPatternContext): PathPattern {
  const trimmed = spec.length > 1 && spec.endsWith("/") ? spec.replace(/\/+$/, "") : spec;
  let anyDepth = false;
  let absolute: string;
  if (trimmed.startsWith("//")) absolute = trimmed.slice(1);
  else if (trimmed === "~" || trimmed.startsWith("~/")) absolute = context.homeDir + trimmed.slice(1);
  else if (trimmed.startsWith("/")) absolute = context.workspaceRoot + trimmed;
  else if (trimmed === "." || trimmed.startsWith("./"))
    absolute = `${context.workspaceRoot}/${trimmed.slice(2)}`;
  else if (trimmed.includes("/")) absolute = `${context.workspaceRoot}/${trimmed}`;
  else {
    anyDepth = true;
    absolute = `${context.workspaceRoot}/**/${trimmed}`;
  }
  const glob = normalizeAbsolute(absolute);
  const test = picomatch(glob, { dot: true });
  const literal = GLOB_CHARS.test(glob) ? undefined : glob;
  const literalName = anyDepth && !GLOB_CHARS.test(trimmed) ? trimmed : undefined;
  return {
    spec,
    glob,
    literal,
    literalName,
    anyDepth,
    matches: (path) => matchesWithAncestors(test, path),
  };
}

/** gitignore: a matched directory covers its contents, so try the path and each of its parents. */
function matchesWithAncestors(test: (path: string) => boolean, path: string): boolean {
  let current = path;
  while (current !== "/" && current !== "") {
    if (test(current)) return true;
    current = current.slice(0, current.lastIndexOf("/")) || "/";
  }
  return false;
}

/**
 * Paths whose change would reach beyond the patch: git hooks and config run code on the next git
 * command; workflow files, the local actions a workflow runs (`uses: ./…`) and the CI definitions of
 * other systems run in CI with that CI's secrets; a pre-commit configuration runs on the next commit and a
 * dev container's on the next checkout opened in it; and the agent-ci / Claude / MCP config decide what
 * the next run may do. Writes are denied in every mode, bypassPermissions included (R17: bypass skips
 * rule checks, not these), unless an allow rule names the path explicitly: `Edit(.github/workflows/**)`
 * names workflows, a broad `Edit(**)` or `Edit(.github/**)` does not.
 *
 * `.gitattributes` is protected at any depth: its `filter=`/`diff=` drivers run commands on the host
 * and can hide changes from review (U4); legitimate edits need an explicit `Edit(.gitattributes)`.
 *
 * A local action is protected where the policy can tell it is one without reading the workflows: all of
 * `.github/actions/`, and an `action.yml`/`action.yaml` at any depth (the file a workflow's `uses: ./dir`
 * runs). The scripts a local action outside `.github/actions/` runs (a root `action.yml`'s `main:`) are the
 * repository's code, which every CI job runs anyway. The other CI systems' definitions are protected where
 * each reads them by default, at the root.
 *
 * `containerPatterns` is the narrower list the sandbox mounts read-only: git itself must write
 * objects, refs and the index inside `.git`, so only hooks, config and info are frozen there.
 */
export interface ProtectedPath {
  readonly id: string;
  readonly description: string;
  readonly pattern: string;
  /** What the sandbox mounts read-only for it, where that is narrower than `pattern` (default: `pattern`). */
  readonly containerPatterns?: readonly string[];
  /** Does an allow rule's path specifier name this entry explicitly? */
  namedBy(spec: string): boolean;
}

const segmentsOf = (spec: string): string[] =>
  spec.split("/").filter((segment) => segment !== "" && segment !== ".");

const hasSequence = (segments: readonly string[], first: string, secondPrefix: string): boolean =>
  segments.some(
    (segment, index) => segment === first && (segments[index + 1] ?? "").startsWith(secondPrefix),
  );

export const PROTECTED_PATHS: readonly ProtectedPath[] = [
  {
    id: "git",
    description: "git internals (.git: hooks, config, refs)",
    pattern: ".git",
    containerPatterns: ["**/.git/hooks", "**/.git/config", "**/.git/info"],
    namedBy: (spec) => segmentsOf(spec).includes(".git"),
  },
  {
    id: "gitattributes",
    description: ".gitattributes (git filter and diff drivers)",
    pattern: ".gitattributes",
    namedBy: (spec) => segmentsOf(spec).includes(".gitattributes"),
  },
  {
    id: "workflows",
    description: "GitHub workflow files (.github/workflows)",
    pattern: "/.github/workflows",
    namedBy: (spec) => hasSequence(segmentsOf(spec), ".github", "workflows"),
  },
  {
    id: "local-actions",
    description: "GitHub Actions local actions (.github/actions)",
    pattern: "/.github/actions",
    namedBy: (spec) => hasSequence(segmentsOf(spec), ".github", "actions"),
  },
  {
    id: "action-definitions",
    description:
      "a GitHub Action's definition (action.yml, action.yaml), which a workflow runs with uses: ./",
    pattern: "action.{yml,yaml}",
    namedBy: (spec) => segmentsOf(spec).some((segment) => segment.startsWith("action.y")),
  },
  {
    id: "gitlab-ci",
    description: "GitLab CI definition (.gitlab-ci.yml)",
    pattern: "/.gitlab-ci.yml",
    namedBy: (spec) => segmentsOf(spec).some((segment) => segment.startsWith(".gitlab-ci")),
  },
  {
    id: "circleci",
    description: "CircleCI configuration (.circleci)",
    pattern: "/.circleci",
    namedBy: (spec) => segmentsOf(spec).includes(".circleci"),
  },
  {
    id: "jenkinsfile",
    description: "Jenkins pipeline (Jenkinsfile)",
    pattern: "/Jenkinsfile",
    namedBy: (spec) => segmentsOf(spec).some((segment) => segment.startsWith("Jenkinsfile")),
  },
  {
    id: "buildkite",
    description: "Buildkite pipelines (.buildkite)",
    pattern: "/.buildkite",
    namedBy: (spec) => segmentsOf(spec).includes(".buildkite"),
  },
  {
    id: "azure-pipelines",
    description: "Azure Pipelines definition (azure-pipelines.yml)",
    pattern: "/azure-pipelines.{yml,yaml}",
    namedBy: (spec) => segmentsOf(spec).some((segment) => segment.startsWith("azure-pipelines")),
  },
  {
    id: "pre-commit",
    description: "pre-commit configuration (.pre-commit-config.yaml), run by git commit",
    pattern: "/.pre-commit-config.{yaml,yml}",
    namedBy: (spec) => segmentsOf(spec).some((segment) => segment.startsWith(".pre-commit-config")),
  },
  {
    id: "devcontainer",
    description: "dev container configuration (.devcontainer, .devcontainer.json)",
    pattern: "/.devcontainer{,.json}",
    namedBy: (spec) => segmentsOf(spec).some((segment) => segment.startsWith(".devcontainer")),
  },
  {
    id: "agent-ci-config",
    description: "agent-ci configuration (.agent-ci.json)",
    pattern: "/.agent-ci.json",
    namedBy: (spec) => segmentsOf(spec).includes(".agent-ci.json"),
  },
  {
    id: "claude-settings",
    description: "Claude Code settings (.claude/settings*.json)",
    pattern: "/.claude/settings*.json",
    namedBy: (spec) => hasSequence(segmentsOf(spec), ".claude", "settings"),
  },
  {
    id: "mcp-config",
    description: "MCP server configuration (.mcp.json)",
    pattern: "/.mcp.json",
    namedBy: (spec) => segmentsOf(spec).includes(".mcp.json"),
  },
];

export interface CompiledProtectedPath {
  readonly entry: ProtectedPath;
  readonly tool: PathPattern;
  readonly container: readonly PathPattern[];
}

export function compileProtectedPaths(context: PathPatternContext): readonly CompiledProtectedPath[] {
  return PROTECTED_PATHS.map((entry) => ({
    entry,
    tool: compilePathPattern(entry.pattern, context),
    container: (entry.containerPatterns ?? [entry.pattern]).map((pattern) =>
      compilePathPattern(pattern, context),
    ),
  }));
}
