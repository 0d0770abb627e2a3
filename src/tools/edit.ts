// Edit: exact string replacement, with Claude Code's refusals (not read, changed since read, not found,
// not unique, no change) and its quote normalisation. CRLF files take LF strings and stay CRLF; every
// byte outside the replaced region is kept.
import { z } from "zod";
import { defineTool, toolError } from "./define-tool.js";
import {
  checkFreshness,
  isToolResult,
  loadTarget,
  MAX_EDIT_INPUT_CHARS,
  patchOf,
  readBackNote,
  refuseNonText,
  writeAndRecord,
} from "./file-edit-common.js";

export const EditInput = z.strictObject({
  file_path: z.string().describe("The absolute path to the file to modify (under /workspace)"),
  old_string: z.string().max(MAX_EDIT_INPUT_CHARS).describe("The text to replace"),
  new_string: z
    .string()
    .max(MAX_EDIT_INPUT_CHARS)
    .describe("The text to replace it with (must be different from old_string)"),
  replace_all: z.boolean().default(false).describe("Replace all occurrences of old_string (default false)"),
});
export type EditInput = z.infer<typeof EditInput>;

const DESCRIPTION = `Performs exact string replacements in files.

Usage:
- You must Read the file in this run before editing it; an edit of a file that changed since you read it is refused.
- Keep the exact indentation of the text as Read shows it after the line number and tab; never include the line-number prefix in old_string or new_string.
- The edit fails if old_string is not unique in the file: give more surrounding context to make it unique, or set replace_all to change every instance.
- An empty old_string creates a new file with new_string as its content.`;

function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length))
    found.push(at);
  return found;
}

const QUOTES: Record<string, string> = { "\u2018": "'", "\u2019": "'", "\u201C": '"', "\u201D": '"' };
const straighten = (s: string) => s.replace(/[\u2018\u2019\u201C\u201D]/g, (c) => QUOTES[c] ?? c);

/** A quote here opens (rather than closes) when it starts the text or follows a space or an opening bracket. */
function opensAt(chars: string[], i: number): boolean {
  return i === 0 || /[\s([{\u2013\u2014]/.test(chars[i - 1]!);
}

/**
 * When old_string only matched with its quotes straightened, the file uses curly quotes there: new_string
 * gets them too (Claude Code's preserveQuoteStyle), so an edit does not change the file's typography.
 * An apostrophe between two letters is always a right single quote.
 */
function curlLike(matched: string, newString: string): string {
  const doubles = /[\u201C\u201D]/.test(matched);
  const singles = /[\u2018\u2019]/.test(matched);
  const chars = [...newString];
  return chars
    .map((c, i) => {
      if (c === '"' && doubles) return opensAt(chars, i) ? "\u201C" : "\u201D";
      if (c !== "'" || !singles) return c;
      const letter = (s: string | undefined) => s !== undefined && /\p{L}/u.test(s);
      if (letter(chars[i - 1]) && letter(chars[i + 1])) return "\u2019";
      return opensAt(chars, i) ? "\u2018" : "\u2019";
    })
    .join("");
}

/**
 * The text in the file that old_string means: itself, its LF→CRLF form in a CRLF file, or (as Claude
 * Code does) the same text with curly quotes where the model typed straight ones.
 */
function actualOldString(
  content: string,
  oldString: string,
): { old: string; crlf: boolean; curly: boolean } | undefined {
  if (content.includes(oldString)) return { old: oldString, crlf: false, curly: false };
  if (content.includes("\r\n") && oldString.includes("\n") && !oldString.includes("\r\n")) {
    const crlf = oldString.replace(/\n/g, "\r\n");
    if (content.includes(crlf)) return { old: crlf, crlf: true, curly: false };
  }
  const at = straighten(content).indexOf(straighten(oldString));
  if (at !== -1) return { old: content.slice(at, at + oldString.length), crlf: false, curly: true };
  return undefined;
}

/** What String.prototype.trimEnd removes (ECMAScript WhiteSpace and LineTerminator), by code unit. */
function isWhitespace(code: number): boolean {
  if (code === 32 || (code >= 9 && code <= 13) || code === 160) return true;
  if (code < 0x1680) return false;
  return (
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * Claude Code strips whitespace at the end of new_string's lines, except in Markdown, where two trailing
 * spaces are a line break. Line endings are kept. Linear: one pass, copying only around what is cut.
 */
export function stripTrailingWhitespace(filePath: string, text: string): string {
  if (/\.(md|mdx|markdown)$/i.test(filePath)) return text;
  let kept = "";
  let copiedTo = 0;
  for (let start = 0; start <= text.length;) {
    const newline = text.indexOf("\n", start);
    const lineEnd = newline === -1 ? text.length : newline;
    const contentEnd = lineEnd > start && text.charCodeAt(lineEnd - 1) === 13 ? lineEnd - 1 : lineEnd;
    let cut = contentEnd;
    while (cut > start && isWhitespace(text.charCodeAt(cut - 1))) cut -= 1;
    if (cut < contentEnd) {
      kept += text.slice(copiedTo, cut);
      copiedTo = contentEnd;
    }
    start = lineEnd + 1;
  }
  return kept + text.slice(copiedTo);
}

function lineOf(content: string, index: number): number {
  let line = 1;
  for (let i = content.indexOf("\n"); i !== -1 && i < index; i = content.indexOf("\n", i + 1)) line += 1;
  return line;
}

export const EditTool = defineTool<EditInput>({
  name: "Edit",
  description: DESCRIPTION,
  inputSchema: EditInput,
  maxResultSizeChars: 100_000,
  targetPath: (input) => input.file_path,

  async validateInput(input) {
    if (input.old_string === input.new_string) {
      return toolError("no_change", "No changes to make: old_string and new_string are exactly the same.");
    }
    return undefined;
  },

  async call(input, ctx) {
    const loaded = await loadTarget(ctx, input.file_path);
    if (isToolResult(loaded)) return loaded;
    // The result names the file as the model did (a relative path stays relative), as Claude Code does.
    const shown = input.file_path;
    const newInput = stripTrailingWhitespace(input.file_path, input.new_string);

    if (!loaded.exists) {
      if (input.old_string !== "") {
        return toolError(
          "not_found",
          `File does not exist. Note: your current working directory is ${ctx.state.cwd}. To create a file, use an empty old_string or Write.`,
        );
      }
      await writeAndRecord(ctx, loaded.path, newInput);
      return {
        output: `The file ${shown} has been updated successfully.${readBackNote(ctx, loaded.path)}`,
        title: `created ${loaded.path}`,
        metadata: { patch: patchOf(loaded.path, "", newInput) },
      };
    }

    // Binary and non-UTF-8 files first: Read refuses to show a binary file, so "read it first" would loop.
    const stale = refuseNonText(loaded, input.file_path) ?? checkFreshness(ctx, loaded);
    if (stale) return stale;
    const content = loaded.text;
    if (input.old_string === "") {
      if (content.length)
        return toolError(
          "already_exists",
          "Cannot create new file - file already exists. Give a non-empty old_string to edit it.",
        );
      await writeAndRecord(ctx, loaded.path, newInput);
      return {
        output: `The file ${shown} has been updated successfully.${readBackNote(ctx, loaded.path)}`,
        title: `wrote ${loaded.path}`,
        metadata: { patch: patchOf(loaded.path, "", newInput) },
      };
    }

    const match = actualOldString(content, input.old_string);
    if (!match) {
      return toolError("no_match", `String to replace not found in file.\nString: ${input.old_string}`);
    }
    const quoted = match.curly ? curlLike(match.old, newInput) : newInput;
    const newString = match.crlf ? quoted.replace(/\r?\n/g, "\r\n") : quoted;
    // Deleting a whole line takes its line ending too, so no blank line is left (Claude Code).
    if (newString === "" && !match.old.endsWith("\n")) {
      const eol = [match.crlf || content.includes("\r\n") ? "\r\n" : "\n", "\n"].find((e) =>
        content.includes(match.old + e),
      );
      if (eol) match.old += eol;
    }
    const found = occurrences(content, match.old);
    if (found.length > 1 && !input.replace_all) {
      const lines = found
        .slice(0, 10)
        .map((i) => lineOf(content, i))
        .join(", ");
      return toolError(
        "not_unique",
        `Found ${found.length} matches of the string to replace, but replace_all is false (lines ${lines}). To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: ${input.old_string}`,
      );
    }
    const updated = input.replace_all
      ? content.split(match.old).join(newString)
      : content.slice(0, found[0]) + newString + content.slice((found[0] ?? 0) + match.old.length);
    await writeAndRecord(ctx, loaded.path, updated, { keepPartial: true });
    const note = readBackNote(ctx, loaded.path);
    const output = input.replace_all
      ? `The file ${shown} has been updated. All occurrences were successfully replaced.${note}`
      : `The file ${shown} has been updated successfully.${note}`;
    return {
      output,
      title: `edited ${loaded.path} (${input.replace_all ? `${found.length} replacements` : "1 replacement"})`,
      metadata: { patch: patchOf(loaded.path, content, updated) },
    };
  },
});
