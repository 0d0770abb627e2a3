// Grep: ripgrep inside the container. files_with_matches (the default) lists files newest first;
// content and count are sorted by path. Hidden files are searched, VCS folders never, .gitignore is
// respected in a git repository (ripgrep's default). head_limit/offset paginate.
import { z } from "zod";
import { defineTool } from "./define-tool.js";
import {
  filesByMtime,
  isSearchRoot,
  rgFailure,
  searchExec,
  searchRoot,
  VCS_EXCLUDES,
} from "./search-common.js";

export const GrepInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe("The regular expression to search for in file contents (ripgrep syntax)"),
  path: z.string().optional().describe("File or directory to search in (default: the working directory)"),
  glob: z.string().optional().describe('Glob to filter files, e.g. "*.js" or "*.{ts,tsx}"'),
  type: z.string().optional().describe('File type to search (rg --type), e.g. "js", "py", "rust"'),
  output_mode: z
    .enum(["content", "files_with_matches", "count"])
    .optional()
    .describe(
      '"content" shows matching lines, "files_with_matches" (default) file paths, "count" matching lines per file',
    ),
  "-A": z.coerce
    .number()
    .int()
    .min(0)
    .max(1000)
    .optional()
    .describe("Lines to show after each match (content mode)"),
  "-B": z.coerce
    .number()
    .int()
    .min(0)
    .max(1000)
    .optional()
    .describe("Lines to show before each match (content mode)"),
  "-C": z.coerce
    .number()
    .int()
    .min(0)
    .max(1000)
    .optional()
    .describe("Lines to show before and after each match (content mode)"),
  context: z.coerce.number().int().min(0).max(1000).optional().describe("Same as -C"),
  "-o": z.boolean().optional().describe("Show only the matching part of each line (content mode)"),
  "-n": z.boolean().optional().describe("Show line numbers (content mode; default true)"),
  "-i": z.boolean().optional().describe("Case insensitive search"),
  head_limit: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Only the first N lines/entries of the output"),
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Skip the first N lines/entries before applying head_limit"),
  multiline: z
    .boolean()
    .optional()
    .describe("Let patterns span lines and . match newlines (rg -U --multiline-dotall)"),
});
export type GrepInput = z.infer<typeof GrepInput>;

const DESCRIPTION = `A search tool built on ripgrep.
- Full regex syntax (e.g. "log.*Error", "function\\s+\\w+"); literal braces need escaping
- Filter files with glob (e.g. "*.js") or type (e.g. "py")
- output_mode: "files_with_matches" (default, newest first), "content" (matching lines), "count" (matching lines per file)
- Use it instead of grep or rg through Bash; paginate with head_limit and offset`;

function paginate<T>(items: T[], offset: number, limit: number | undefined): T[] {
  const from = items.slice(offset);
  return limit ? from.slice(0, limit) : from;
}

/** A count line is `path:N` (the path may itself contain colons). */
function countOf(line: string): number {
  return Number(line.slice(line.lastIndexOf(":") + 1)) || 0;
}

function paginationNote(input: GrepInput): string {
  const parts: string[] = [];
  if (input.head_limit) parts.push(`limit: ${input.head_limit}`);
  if (input.offset) parts.push(`offset: ${input.offset}`);
  return parts.join(", ");
}

export const GrepTool = defineTool<GrepInput>({
  name: "Grep",
  description: DESCRIPTION,
  inputSchema: GrepInput,
  maxResultSizeChars: 20_000,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  targetPath: (input) => input.path,

  async call(input, ctx) {
    const where = await searchRoot(ctx, input.path);
    if (!isSearchRoot(where)) return where;
    const mode = input.output_mode ?? "files_with_matches";
    const argv = [
      "--hidden",
      "--no-follow",
      "--no-config",
      "--color",
      "never",
      "--max-columns",
      "500",
      ...VCS_EXCLUDES,
    ];
    if (input["-i"]) argv.push("-i");
    if (input.multiline) argv.push("-U", "--multiline-dotall");
    if (input.glob) argv.push("--glob", input.glob);
    if (input.type) argv.push("--type", input.type);
    if (mode === "files_with_matches") argv.push("--files-with-matches", "--null");
    // Matching lines per file, as ripgrep's --count (Claude Code's count mode), not matches.
    if (mode === "count") argv.push("--count", "--sort", "path", "--with-filename");
    if (mode === "content") {
      // One file searched: its lines without the file name, as ripgrep prints them.
      argv.push("--sort", "path", where.isFile ? "--no-filename" : "--with-filename", "--no-heading");
      if (input["-n"] !== false) argv.push("-n");
      if (input["-o"]) argv.push("--only-matching");
      const context = input["-C"] ?? input.context;
      if (context !== undefined) argv.push("-C", String(context));
      if (input["-A"] !== undefined) argv.push("-A", String(input["-A"]));
      if (input["-B"] !== undefined) argv.push("-B", String(input["-B"]));
    }
    argv.push("-e", input.pattern, "--", where.arg || ".");
    let lines: string[];
    if (mode === "files_with_matches") {
      // Newest first over the whole list (rg's own sort is per directory).
      const { res, files } = await filesByMtime(ctx, argv, "newest");
      if (res.exitCode !== 0 && res.exitCode !== 1) return rgFailure(res.stderr, res.timedOut);
      lines = files;
    } else {
      const res = await searchExec(ctx, ["rg", ...argv]);
      if (res.exitCode !== 0 && res.exitCode !== 1) return rgFailure(res.stderr, res.timedOut);
      lines = res.stdout
        .toString("utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => l.replace(/^\.\//, ""));
    }
    const offset = input.offset ?? 0;
    const page = paginate(lines, offset, input.head_limit);
    const note = paginationNote(input);
    // Paged past the last entry of a search that did match: not the same thing as no match.
    const pastEnd = !page.length && lines.length > 0;

    if (mode === "count") {
      // The totals are over every file, whatever the page shows.
      const total = lines.reduce((sum, line) => sum + countOf(line), 0);
      const files = lines.length;
      const pager = note ? ` with pagination = ${note}` : "";
      const body = page.length ? page.join("\n") : pastEnd ? "No entries at this offset" : "No matches found";
      return {
        output: `${body}\n\nFound ${total} total ${total === 1 ? "occurrence" : "occurrences"} across ${files} ${files === 1 ? "file" : "files"}.${pager}`,
        title: `/${input.pattern}/: ${total} matching lines in ${files} files`,
      };
    }
    if (pastEnd) {
      return {
        output: `No entries at this offset. [Showing results with pagination = ${note}]`,
        title: `/${input.pattern}/: offset ${offset} past the end (${lines.length})`,
      };
    }
    if (mode === "files_with_matches") {
      if (!page.length) return { output: "No files found", title: `/${input.pattern}/: no files` };
      const noun = page.length === 1 ? "file" : "files";
      return {
        output: `Found ${page.length} ${noun}${note ? ` ${note}` : ""}\n${page.join("\n")}`,
        title: `/${input.pattern}/: ${lines.length} files`,
      };
    }
    if (!page.length) return { output: "No matches found", title: `/${input.pattern}/: no matches` };
    const pager = note ? `\n\n[Showing results with pagination = ${note}]` : "";
    return { output: page.join("\n") + pager, title: `/${input.pattern}/: ${lines.length} lines` };
  },
});
