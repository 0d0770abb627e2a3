// Where review findings go: inline only on head-side lines the diff shows (a range inside one hunk), the rest
// into the summary with why; the findings schema as the model gets it; and linear time on large inputs.
import { describe, expect, it } from "vitest";
import {
  commentBody,
  placeFindings,
  reviewBody,
  reviewJsonSchema,
  type Finding,
} from "../../../src/review/findings.js";
import { reviewPrompt, REVIEW_DIFF_IN_PROMPT_MAX_CHARS } from "../../../src/review/review-task.js";

const DIFF = [
  "diff --git a/src/a.js b/src/a.js",
  "index 1111111..2222222 100644",
  "--- a/src/a.js",
  "+++ b/src/a.js",
  "@@ -10,7 +10,8 @@ function f() {",
  " ctx10",
  " ctx11",
  " ctx12",
  "-old13",
  "+new13",
  "+new14",
  " ctx15",
  " ctx16",
  " ctx17",
  "@@ -40,3 +41,3 @@",
  " ctx41",
  "-old",
  "+new42",
  " ctx43",
  "diff --git a/gone.js b/gone.js",
  "deleted file mode 100644",
  "index 3333333..0000000",
  "--- a/gone.js",
  "+++ /dev/null",
  "@@ -1,2 +0,0 @@",
  "-x",
  "-y",
  "diff --git a/new.txt b/new.txt",
  "new file mode 100644",
  "index 0000000..4444444",
  "--- /dev/null",
  "+++ b/new.txt",
  "@@ -0,0 +1,2 @@",
  "+one",
  "+two",
  "",
].join("\n");

const f = (path: string, line: number, start_line?: number): Finding => ({
  path,
  line,
  start_line,
  severity: "minor",
  body: `at ${line}`,
});

describe("placeFindings", () => {
  it("keeps a finding inline on an added or a context line of a hunk, and a range inside one hunk", () => {
    const placed = placeFindings(
      [f("src/a.js", 13), f("src/a.js", 10), f("src/a.js", 17, 12), f("new.txt", 2, 1)],
      DIFF,
    );
    expect(placed.outside).toEqual([]);
    expect(placed.inline.map((x) => [x.path, x.start_line, x.line])).toEqual([
      ["src/a.js", undefined, 13],
      ["src/a.js", undefined, 10],
      ["src/a.js", 12, 17],
      ["new.txt", 1, 2],
    ]);
  });

  it("sends the rest to the summary, each with why", () => {
    const placed = placeFindings(
      [f("src/a.js", 30), f("src/a.js", 42, 15), f("src/a.js", 12, 14), f("gone.js", 1), f("README.md", 1)],
      DIFF,
    );
    expect(placed.inline).toEqual([]);
    expect(placed.outside.map((o) => o.why)).toEqual([
      "line 30 is not in the diff",
      "lines 15-42 are not within one hunk of the diff",
      "lines 14-12 are not within one hunk of the diff",
      "the file is not changed by the pull request",
      "the file is not changed by the pull request",
    ]);
  });

  it("reads the paths a model may give: ./x and /workspace/x", () => {
    const placed = placeFindings([f("./src/a.js", 13), f("/workspace/new.txt", 1)], DIFF);
    expect(placed.inline.map((x) => x.path)).toEqual(["src/a.js", "new.txt"]);
  });

  it("a start_line equal to line is one line", () => {
    expect(placeFindings([f("src/a.js", 13, 13)], DIFF).inline[0]).not.toHaveProperty("start_line");
  });

  it("is linear in the diff and the findings", () => {
    const hunks = Array.from(
      { length: 50_000 },
      (_, i) => `@@ -${i * 10 + 1},1 +${i * 10 + 1},1 @@\n-a\n+b`,
    ).join("\n");
    const big = `diff --git a/big.js b/big.js\n--- a/big.js\n+++ b/big.js\n${hunks}\n`;
    const many = Array.from({ length: 2_000 }, (_, i) => f("big.js", i * 10 + 1));
    const placed = placeFindings(many, big);
    expect(placed.inline).toHaveLength(2_000);
    const oneLine = placeFindings(
      [f("x", 1)],
      `diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n+${"y".repeat(8_000_000)}`,
    );
    expect(oneLine.inline).toHaveLength(1);
  });
});

describe("review text", () => {
  it("the body starts with the marker, carries the summary, and lists the findings outside the diff", () => {
    const placed = placeFindings([f("src/a.js", 13), f("README.md", 3)], DIFF);
    const body = reviewBody({ marker: "<!-- m -->", summary: "Looks fine.", placed, runUrl: "https://run" });
    expect(body.startsWith("<!-- m -->\n")).toBe(true);
    expect(body).toContain("Looks fine.");
    expect(body).toContain("1 inline comment(s), 1 finding(s) outside the diff.");
    expect(body).toMatch(
      /<code>README.md:3<\/code> \*\*🟡 minor\*\*: at 3 _\(the file is not changed by the pull request\)_/,
    );
    expect(commentBody(f("a", 1))).toBe("**🟡 minor**: at 1");
  });

  it("keeps the model's mentions and issue references inert in the review body and its comments", () => {
    const acting = "cc @acme/security-team. Closes #42; fixes https://github.com/acme/w/issues/43";
    const placed = placeFindings(
      [
        { ...f("src/a.js", 13), body: acting },
        { ...f("README.md", 3), body: acting },
      ],
      DIFF,
    );
    const body = reviewBody({ marker: "<!-- m -->", summary: acting, placed });
    const comment = commentBody({ ...f("src/a.js", 13), body: acting });
    for (const text of [body, comment]) {
      expect(text).not.toMatch(/@acme|#42|fixes https/);
      expect(text.replace(/\u200b/g, "")).toContain(acting);
    }
  });

  it("stays under GitHub's body limit with many long findings and a huge summary", () => {
    const many = Array.from({ length: 5_000 }, (_, i) => ({
      ...f("README.md", i + 1),
      body: "x".repeat(10_000),
    }));
    const placed = placeFindings(many, DIFF);
    const body = reviewBody({
      marker: "<!-- m -->",
      summary: "s".repeat(1_000_000),
      placed,
      runUrl: "https://run",
    });
    expect(body.length).toBeLessThanOrEqual(60_000);
    expect(body).toMatch(/- … \d+ more in output.json/);
    expect(body.endsWith("[Workflow run](https://run)")).toBe(true);
    expect(commentBody({ ...f("a", 1), body: "y".repeat(100_000) }).length).toBeLessThanOrEqual(8_000);
  });

  it("the schema the model gets requires path, line, severity and body", () => {
    const schema = reviewJsonSchema() as {
      type: string;
      required: string[];
      properties: { findings: { items: { required: string[] } } };
    };
    expect(schema.type).toBe("object");
    expect(schema.required).toEqual(["summary", "findings"]);
    expect(schema.properties.findings.items.required).toEqual(["path", "line", "severity", "body"]);
  });

  it("the prompt carries the diff as data and cuts a huge one with a way to read the rest", () => {
    const target = { base: "a".repeat(40), head: "b".repeat(40), diff: DIFF };
    const prompt = reviewPrompt(target, undefined);
    expect(prompt).toContain("Review this pull request");
    expect(prompt).toContain(`<diff>\n${DIFF}`);
    const huge = reviewPrompt(
      { ...target, diff: "+x".repeat(REVIEW_DIFF_IN_PROMPT_MAX_CHARS) },
      "Check security only.",
    );
    expect(huge.startsWith("Check security only.")).toBe(true);
    expect(huge.length).toBeLessThan(REVIEW_DIFF_IN_PROMPT_MAX_CHARS + 2_000);
    expect(huge).toContain(`git diff ${"a".repeat(40)}...${"b".repeat(40)} -- <path>`);
  });
});
