// Web pages as Markdown, with Turndown in the style WebFetch's reading model gets in Claude Code: setext
// headings, `*   ` bullets, indented code blocks, tables as pipe rows (header rows apart from the body),
// scripts and styles dropped.
// Turndown (and the DOM it parses with) is loaded by the first page that needs it, not by every run.
import type TurndownService from "turndown";

function converter(Turndown: typeof TurndownService): TurndownService {
  const service = new Turndown();
  service.remove(["script", "style", "noscript", "template"]);
  service.addRule("tableCell", {
    filter: ["th", "td"],
    replacement: (content, node) => {
      const first = !(node as unknown as { previousElementSibling: unknown }).previousElementSibling;
      return `${first ? "| " : ""}${content.trim().replace(/\s*\n+\s*/g, " ")} | `;
    },
  });
  service.addRule("tableRow", {
    filter: "tr",
    replacement: (content) => `${content.trimEnd()}\n`,
  });
  return service;
}

let shared: TurndownService | undefined;

/** The page's Markdown. Turndown's parser is a maintained library's (no hand-written HTML parsing here). */
export async function htmlToMarkdown(html: string): Promise<string> {
  shared ??= converter((await import("turndown")).default);
  return shared.turndown(html);
}
