// Glob: file names matching a pattern, oldest first by modification time, at most 100 with a notice.
// ripgrep's glob engine does the matching inside the container (hidden and ignored files included).
import { z } from "zod";
import { defineTool, toolError } from "./define-tool.js";
import { filesByMtime, isSearchRoot, rgFailure, searchRoot, VCS_EXCLUDES } from "./search-common.js";

export const MAX_GLOB_RESULTS = 100;

export const GlobInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe('The glob pattern to match files against, e.g. "**/*.ts" or "src/**/*.test.js"'),
  path: z
    .string()
    .optional()
    .describe(
      "The directory to search in (default: the working directory). Omit it for the default; do not pass null",
    ),
});
export type GlobInput = z.infer<typeof GlobInput>;

const DESCRIPTION = `Fast file pattern matching over the repository.
- Supports glob patterns like "**/*.js" or "src/**/*.ts"; an absolute pattern ("/workspace/src/**/*.ts") is matched as such
- Returns matching file paths, oldest modification first, at most ${MAX_GLOB_RESULTS}
- Hidden files are listed. The sandbox holds the repository's tracked and untracked files; files git ignores (build output, node_modules, .env) are there only when the run included them or a command created them
- Use it to find files by name; use Grep to search their contents`;

const GLOB_MAGIC = /[*?[\]{}]/;

// An absolute pattern is split at its first path segment with a glob character: the directory before it
// is searched and the rest is the pattern ("/workspace/src/" and "**" + "/*.ts"), as Claude Code does.
export function splitAbsolutePattern(pattern: string): { dir: string; pattern: string } {
  const parts = pattern.split("/");
  const firstMagic = parts.findIndex((part) => GLOB_MAGIC.test(part));
  const cut = firstMagic === -1 ? parts.length - 1 : firstMagic;
  return { dir: parts.slice(0, cut).join("/") || "/", pattern: parts.slice(cut).join("/") };
}

export const GlobTool = defineTool<GlobInput>({
  name: "Glob",
  description: DESCRIPTION,
  inputSchema: GlobInput,
  maxResultSizeChars: 100_000,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  targetPath: (input) =>
    input.pattern.startsWith("/") ? splitAbsolutePattern(input.pattern).dir : input.path,

  async call(input, ctx) {
    const absolute = input.pattern.startsWith("/") ? splitAbsolutePattern(input.pattern) : undefined;
    const given = absolute?.dir ?? input.path;
    const where = await searchRoot(ctx, given);
    if (!isSearchRoot(where)) return where;
    if (where.isFile) return toolError("invalid_input", `Path is not a directory: ${given}`);
    const pattern = absolute?.pattern ?? input.pattern;
    const rgArgs = [
      "--files",
      "--null",
      "--hidden",
      "--no-ignore",
      "--no-follow",
      "--glob",
      pattern,
      ...VCS_EXCLUDES,
      "--",
      where.arg || ".",
    ];
    const { res, files } = await filesByMtime(ctx, rgArgs, "oldest");
    // rg exits 1 when nothing matched (pipefail keeps that exit code); so does find for a file gone since.
    if (res.exitCode !== 0 && res.exitCode !== 1) return rgFailure(res.stderr, res.timedOut);
    if (!files.length) return { output: "No files found", title: `${input.pattern}: no files` };
    const shown = files.slice(0, MAX_GLOB_RESULTS);
    let output = shown.join("\n");
    if (files.length > shown.length) {
      output += `\n(Showing ${shown.length} of ${files.length} matching files; ${files.length - shown.length} more are not listed. Narrow the pattern or path to see the rest.)`;
    }
    return { output, title: `${input.pattern}: ${files.length} files` };
  },
});
