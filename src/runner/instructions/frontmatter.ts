// YAML frontmatter, the one way agent-ci reads it: `---` lines around a YAML mapping at the top of a
// Markdown file (an agent definition, a skill, a slash command), the rest being the body.
import { parse as parseYaml } from "yaml";

export interface Frontmatter {
  /** The file opens with a closed `---` block (else `frontmatter` is empty and `body` the whole text). */
  found: boolean;
  frontmatter: Record<string, unknown>;
  body: string;
}

/**
 * Splits `---\nyaml\n---\n` off the top of a Markdown file (after a byte-order mark). Throws when the YAML does
 * not parse or is not a mapping. Linear: the closing line is searched for line by line.
 */
export function parseFrontmatter(text: string): Frontmatter {
  const start = text.startsWith("\uFEFF") ? 1 : 0;
  const openingLine = /---[ \t]*\r?\n/y;
  openingLine.lastIndex = start;
  const opening = openingLine.exec(text);
  if (!opening) return { found: false, frontmatter: {}, body: text };
  const from = start + opening[0].length;
  for (let at = from; ;) {
    const end = text.indexOf("\n", at);
    const line = (end === -1 ? text.slice(at) : text.slice(at, end)).replace(/\r$/, "");
    if (line.trimEnd() === "---") {
      const yamlText = text.slice(from, at);
      const body = end === -1 ? "" : text.slice(end + 1);
      const data: unknown = yamlText.trim() ? parseYaml(yamlText) : {};
      if (data !== null && typeof data === "object" && !Array.isArray(data))
        return { found: true, frontmatter: data as Record<string, unknown>, body };
      throw new Error("the frontmatter is not a YAML mapping");
    }
    if (end === -1) return { found: false, frontmatter: {}, body: text };
    at = end + 1;
  }
}
