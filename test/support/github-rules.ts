// GitHub's own rules for text that acts, to check what agent-ci publishes against them rather than against its
// own picture. From GitHub's documentation: "Linking a pull request to an issue using a keyword" (close, closes,
// closed, fix, fixes, fixed, resolve, resolves, resolved, then `#N`, `OWNER/REPO#N` or the issue's URL: in a
// pull request's description, or a commit message merged into the default branch, it closes the issue) and
// "Mentioning people and teams" (@ and a login, letters and digits with single hyphens, or @ORG/TEAM: it
// notifies them). Neither acts inside code: a code span, a fenced block, a <code> element.
//
// `acting` renders the Markdown as GitHub does (micromark with GFM, raw HTML kept as GitHub keeps <code>), drops
// what is code, and lists what would act in the text left; `actingAnywhere` looks inside code too: text that
// is inert in every case, whatever a renderer takes for code, has nothing there either.
import { micromark } from "micromark";
import { gfm, gfmHtml } from "micromark-extension-gfm";

const CLOSING =
  /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:#\d+|[\w.-]+\/[\w.-]+#\d+|https?:\/\/\S+\/issues\/\d+)/gi;
const MENTION =
  /(?:^|[^A-Za-z0-9_])(@[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}(?:\/[A-Za-z0-9_.-]+)?)/g;

const ENTITIES: Readonly<Record<string, string>> = {
  lt: "<",
  gt: ">",
  amp: "&",
  quot: '"',
  "#39": "'",
  "#x27": "'",
};

function visibleText(markdown: string, withCode: boolean): string {
  const html = micromark(markdown, {
    allowDangerousHtml: true,
    extensions: [gfm()],
    htmlExtensions: [gfmHtml()],
  });
  const withoutCode = withCode ? html : html.replace(/<(pre|code)\b[^>]*>[\s\S]*?<\/\1>/g, " ");
  return withoutCode
    .replace(/<[^>]*>/g, " ")
    .replace(/&(lt|gt|amp|quot|#39|#x27);/g, (_, name: string) => ENTITIES[name] ?? "");
}

function find(text: string): string[] {
  return [
    ...[...text.matchAll(CLOSING)].map((m) => m[0]),
    ...[...text.matchAll(MENTION)].map((m) => m[1] ?? ""),
  ];
}

/** The text a reader sees, code included, zero-width spaces aside. */
export function shownText(markdown: string): string {
  return visibleText(markdown, true).replace(/\u200b/g, "");
}

/** What would close an issue or notify someone in this Markdown, by GitHub's rules (code excluded). */
export function acting(markdown: string): string[] {
  return find(visibleText(markdown, false));
}

/** The same, code included: empty only for text inert whatever is taken for code. */
export function actingAnywhere(markdown: string): string[] {
  return find(visibleText(markdown, true));
}
