// Every relative link in README.md, CONTRIBUTING.md and docs/*.md reaches a file that exists, and a
// `#fragment` reaches a heading of that file (GitHub's anchors), so moving a section never leaves a dead link.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const pages = [
  "README.md",
  "CONTRIBUTING.md",
  ...fs
    .readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** The text outside fenced code blocks and inline code, where a link is a link. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "``");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes, -1, -2 for repeats. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of prose(text.replace(/`([^`\n]*)`/g, "$1")).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = (heading ?? "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n ? `${slug}-${n}` : slug);
  }
  return out;
}

function links(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)]
    .map(([, target]) => target ?? "")
    .filter((t) => !/^[a-z]+:/i.test(t));
}

describe("documentation links", () => {
  it("lists every docs page in the README", () => {
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
    const linked = new Set(links(readme).map((t) => t.split("#")[0]));
    expect(pages.filter((p) => p.startsWith("docs/") && !linked.has(p))).toEqual([]);
  });

  it.each(pages)("every relative link in %s resolves", (page) => {
    const text = fs.readFileSync(path.join(root, page), "utf8");
    const dead: string[] = [];
    for (const target of links(text)) {
      const [file, fragment] = target.split("#");
      const resolved = file
        ? path.resolve(path.dirname(path.join(root, page)), decodeURI(file))
        : path.join(root, page);
      if (!fs.existsSync(resolved)) {
        dead.push(`${target} (no such file)`);
        continue;
      }
      if (fragment && resolved.endsWith(".md") && !anchors(fs.readFileSync(resolved, "utf8")).has(fragment))
        dead.push(`${target} (no such heading)`);
    }
    expect(dead).toEqual([]);
  });
});
