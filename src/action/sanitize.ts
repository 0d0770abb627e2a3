// Untrusted GitHub text (issue bodies, comments, PR titles, branch names) made safe to show a model:
// hidden Markdown/HTML comments, invisible and bidi characters, image alt text and link titles are removed
// (RELIABILITY U2), and what was removed is counted so the report can say so. The raw text is kept by the
// caller; this function never decides anything, it only cleans.

/** What `sanitizeUntrusted` removed, by kind (counts of occurrences). */
export interface Removed {
  htmlComments: number;
  invisible: number;
  bidi: number;
  control: number;
  altText: number;
  linkTitles: number;
  hiddenAttributes: number;
}

export interface Sanitized {
  text: string;
  removed: Removed;
}

/** Zero-width and filler characters; U+034F (combining grapheme joiner) apart, as it combines. */
const ZERO_WIDTH = /(?:[\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff\u115f\u1160\u3164\uffa0]|\u034f)/gu;
/** Unicode "tag" characters (U+E0000–U+E007F): invisible ASCII smuggling. */
const TAG_CHARS = /[\u{e0000}-\u{e007f}]/gu;
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/gu;
/** `<!-- … -->`, and an unterminated `<!--` hides everything after it when rendered. */
const HTML_COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
/** Numeric character references that encode an invisible or bidi character (`&#8203;`, `&#x200B;`). */
const HIDDEN_ENTITY = /&#(?:x([0-9a-f]{1,6})|(\d{1,7}));?/gi;
/** `![alt](url)` and `![alt][ref]`: the alt text is not shown but a model reads it. */
const IMAGE_ALT = /!\[([^\]\n]*)\](?=[([])/g;
/** `[text](url "title")` / `(url 'title')` / `(url (title))`: link titles show only on hover. */
const LINK_TITLE = /(\]\(\s*<?[^\s)>]*>?)\s+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\))\s*\)/g;
/** `alt=`, `title=`, `aria-label=` and `data-*` attributes inside HTML tags carry text nobody sees. */
const HIDDEN_ATTRIBUTE =
  /(<[a-z][^<>]*?)\s(?:alt|title|aria-label|aria-description|data-[\w-]+)\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+)/gi;

const ONE_HIDDEN = new RegExp(`^(?:${ZERO_WIDTH.source}|${TAG_CHARS.source}|${BIDI.source})$`, "u");

function isHiddenCodePoint(codePoint: number): boolean {
  return ONE_HIDDEN.test(String.fromCodePoint(codePoint));
}

type Replacer = (match: string, ...args: unknown[]) => string;

/** Capture group `index` of a replace callback's arguments ("" when it did not participate). */
function group(args: unknown[], index: number): string {
  const value = args[index];
  return typeof value === "string" ? value : "";
}

function countAndReplace(
  text: string,
  pattern: RegExp,
  replace: string | Replacer,
): { text: string; count: number } {
  let count = 0;
  const out = text.replace(pattern, (match: string, ...args: unknown[]) => {
    count += 1;
    return typeof replace === "string" ? replace : replace(match, ...args);
  });
  return { text: out, count };
}

/**
 * Cleans one piece of untrusted text. Idempotent: sanitizing the result again removes nothing more.
 * Newlines and tabs are kept; CRLF becomes LF.
 */
export function sanitizeUntrusted(raw: string): Sanitized {
  const removed: Removed = {
    htmlComments: 0,
    invisible: 0,
    bidi: 0,
    control: 0,
    altText: 0,
    linkTitles: 0,
    hiddenAttributes: 0,
  };
  let text = raw.replace(/\r\n?/g, "\n");

  let step = countAndReplace(text, HIDDEN_ENTITY, (match, ...args) => {
    const hex = group(args, 0);
    const codePoint = hex ? Number.parseInt(hex, 16) : Number.parseInt(group(args, 1), 10);
    if (!Number.isFinite(codePoint) || codePoint > 0x10ffff || !isHiddenCodePoint(codePoint)) return match;
    removed.invisible += 1;
    return "";
  });
  text = step.text;

  // Repeat until stable: removing one hidden thing must not reveal another (`<!<!---->--`).
  for (let round = 0; round < 5; round += 1) {
    const before = text;
    step = countAndReplace(text, ZERO_WIDTH, "");
    removed.invisible += step.count;
    step = countAndReplace(step.text, TAG_CHARS, "");
    removed.invisible += step.count;
    step = countAndReplace(step.text, BIDI, "");
    removed.bidi += step.count;
    step = countAndReplace(step.text, CONTROL, "");
    removed.control += step.count;
    step = countAndReplace(step.text, HTML_COMMENT, "");
    removed.htmlComments += step.count;
    text = step.text;
    if (text === before) break;
  }

  step = countAndReplace(text, IMAGE_ALT, (match, ...args) => {
    if (!group(args, 0)) return match;
    removed.altText += 1;
    return "![]";
  });
  step = countAndReplace(step.text, LINK_TITLE, (_match, ...args) => {
    removed.linkTitles += 1;
    return `${group(args, 0)})`;
  });
  text = step.text;
  for (let round = 0; round < 20; round += 1) {
    step = countAndReplace(text, HIDDEN_ATTRIBUTE, (_match, ...args) => group(args, 0));
    removed.hiddenAttributes += step.count;
    if (step.count === 0) break;
    text = step.text;
  }
  return { text, removed };
}

/** Total number of things removed. */
export function removedCount(removed: Removed): number {
  return Object.values(removed).reduce((sum, n) => sum + n, 0);
}

/** One line for a log or a summary: "2 HTML comments, 5 invisible characters". Empty when nothing was removed. */
export function describeRemoved(removed: Removed): string {
  const labels: Array<[keyof Removed, string]> = [
    ["htmlComments", "HTML comment"],
    ["invisible", "invisible character"],
    ["bidi", "bidi control"],
    ["control", "control character"],
    ["altText", "image alt text"],
    ["linkTitles", "link title"],
    ["hiddenAttributes", "hidden HTML attribute"],
  ];
  return labels
    .filter(([key]) => removed[key] > 0)
    .map(
      ([key, label]) => `${removed[key]} ${label}${removed[key] === 1 || label.endsWith("text") ? "" : "s"}`,
    )
    .join(", ");
}
