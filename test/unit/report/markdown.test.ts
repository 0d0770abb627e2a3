// report.md behaviour beyond the golden files: escaping of untrusted strings, size caps, collapsed sections.
import { describe, expect, it } from "vitest";
import {
  GITHUB_COMMENT_MAX_CHARS,
  MARKDOWN_DEFAULT_MAX_CHARS,
  escapeMarkdownInline,
  renderMarkdown,
} from "../../../src/report/markdown.js";
import type { RunReport, ToolCall } from "../../../src/report/schema.js";
import { deniedNoChangesReport, longRunReport, smallFixReport } from "./support/report-builders.js";

function balanced(markdown: string): boolean {
  return (markdown.match(/<details/g) ?? []).length === (markdown.match(/<\/details>/g) ?? []).length;
}

/** A long run with many calls whose inputs are long: far over any comment limit when rendered whole. */
function hugeReport(calls: number): RunReport {
  const base = longRunReport();
  const template = base.toolCalls[3]!;
  const toolCalls: ToolCall[] = Array.from({ length: calls }, (_, index) => ({
    ...template,
    id: `toolu_huge_${index}`,
    index,
    turn: Math.floor(index / 5),
    tool: "Bash",
    input: { command: `echo ${"x".repeat(200)} ${index}` },
    isError: index % 3 === 0,
    errorKind: index % 3 === 0 ? "command_failed" : undefined,
    resultPreview: `failure ${index}: ${"y".repeat(300)}`,
  }));
  const files = Array.from({ length: 400 }, (_, index) => ({
    path: `src/generated/very/long/path/to/module-${index}/index.ts`,
    added: index,
    removed: 1,
    binary: false,
    status: "modified" as const,
  }));
  return { ...base, toolCalls, patch: { ...base.patch, files }, denials: [] };
}

describe("escapeMarkdownInline", () => {
  it("keeps tables, code and HTML from being broken or injected", () => {
    const out = escapeMarkdownInline(
      "a | b `c` <script>alert(1)</script> *x* _y_ [l](javascript:z) ~~s~~ \\ !",
    );
    expect(out).not.toMatch(/(?<!\\)\|/);
    expect(out).not.toMatch(/(?<!\\)`/);
    expect(out).not.toContain("<script>");
    expect(out).toContain("&lt;script&gt;");
    expect(out).toContain("\\[l\\]");
    expect(out).toContain("\\*x\\*");
  });

  it("defuses @mentions and #references, and joins lines", () => {
    expect(escapeMarkdownInline("ping @octocat about #12\nnow")).toBe(
      "ping @\u200boctocat about \\#\u200b12 now",
    );
  });
});

describe("renderMarkdown", () => {
  it("puts outcome and exit reason first, then the numbers", () => {
    const markdown = renderMarkdown(smallFixReport());
    const lines = markdown.split("\n");
    expect(lines[0]).toBe("### ✅ agent-ci: Changes ready");
    expect(lines[2]).toContain("`completed`");
    expect(markdown.indexOf("| Cost |")).toBeLessThan(markdown.indexOf("#### Changed files"));
    expect(markdown.indexOf("#### Changed files")).toBeLessThan(markdown.indexOf("#### Denied calls"));
    expect(markdown.indexOf("#### Denied calls")).toBeLessThan(markdown.indexOf("All tool calls"));
  });

  it("escapes hostile tool inputs in every table", () => {
    const markdown = renderMarkdown(deniedNoChangesReport());
    expect(markdown).not.toContain("<script>");
    expect(markdown).not.toMatch(/(?<!\\)\]\(javascript:/);
    expect(markdown).not.toMatch(/@octocat/);
    const denied = markdown.split("\n").filter((line) => line.startsWith("| 1 | Bash"));
    expect(denied[0]?.replace(/\\\|/g, "").split("|")).toHaveLength(7);
  });

  it("collapses the call table and long lists so 200 calls stay readable", () => {
    const markdown = renderMarkdown(longRunReport());
    expect(markdown).toContain("<details><summary><b>All tool calls (200)</b></summary>");
    expect(markdown).toContain("<details><summary><b>Changed files (30)</b></summary>");
    expect(markdown.length).toBeLessThan(MARKDOWN_DEFAULT_MAX_CHARS);
    expect(balanced(markdown)).toBe(true);
  });

  it("stays under GitHub's comment limit for a huge run, with a note pointing to the artifact", () => {
    const markdown = renderMarkdown(hugeReport(2_000), {
      artifactUrl: "https://github.com/o/r/actions/runs/1/artifacts/2",
    });
    expect(markdown.length).toBeLessThanOrEqual(MARKDOWN_DEFAULT_MAX_CHARS);
    expect(markdown.length).toBeLessThan(GITHUB_COMMENT_MAX_CHARS);
    expect(markdown).toContain("This summary was shortened");
    expect(markdown).toContain("(https://github.com/o/r/actions/runs/1/artifacts/2)");
    expect(markdown.startsWith("### ⚠️ agent-ci: Stopped early")).toBe(true);
    expect(balanced(markdown)).toBe(true);
  });

  it.each([20_000, 8_000, 3_000, 1_200])(
    "fits a cap of %i characters and still leads with the outcome",
    (maxChars) => {
      const markdown = renderMarkdown(hugeReport(500), { maxChars });
      expect(markdown.length).toBeLessThanOrEqual(maxChars);
      expect(markdown).toContain("Stopped early");
      expect(markdown).toContain("shortened");
      expect(balanced(markdown)).toBe(true);
    },
  );

  it("fits a byte cap for the job summary", () => {
    const markdown = renderMarkdown(hugeReport(3_000), { maxChars: Infinity, maxBytes: 200_000 });
    expect(Buffer.byteLength(markdown)).toBeLessThanOrEqual(200_000);
  });

  it("keeps the whole report when it fits", () => {
    expect(renderMarkdown(smallFixReport())).not.toContain("shortened");
  });

  it("quotes command output in a fence that the output cannot close", () => {
    const report = smallFixReport();
    const markdown = renderMarkdown({
      ...report,
      verify: { command: "x", applied: true, exitCode: 1, outputTail: "````\n</details>\n", durationMs: 1 },
    });
    expect(markdown).toContain("`````text\n````\n</details>\n`````");
  });
});

describe("renderMarkdown with control characters", () => {
  it("drops ANSI codes from cells and output", () => {
    const report = deniedNoChangesReport();
    report.toolCalls[2]!.resultPreview = "\u001b[31mred\u001b[0m failure\u0007";
    const markdown = renderMarkdown(report);
    expect(markdown).toContain("| red failure |");
    expect(markdown).not.toContain("\u001b");
  });
});

describe("renderMarkdown: structured output", () => {
  it("says whether the object was valid and, when not, why", () => {
    const valid = renderMarkdown({
      ...smallFixReport(),
      structuredOutput: { schema: "verdict.json", valid: true, attempts: 1, errors: [], path: "output.json" },
    });
    expect(valid).toContain(
      "#### Structured output\n\n✅ valid against <code>verdict.json</code>, in <code>output.json</code> (1 attempt(s))",
    );
    const invalid = renderMarkdown({
      ...smallFixReport(),
      exitReason: "schema_invalid",
      structuredOutput: {
        schema: "review",
        valid: false,
        attempts: 2,
        errors: ["/findings/0/line: must be > 0"],
      },
    });
    expect(invalid).toContain(
      "❌ no object valid against the review's findings schema (2 attempt(s))\n\n- /findings/0/line: must be &gt; 0",
    );
    expect(renderMarkdown(smallFixReport())).not.toContain("Structured output");
  });
});

describe("the network section (--network allowlist)", () => {
  const connection = (host: string, decision: "allowed" | "denied", caller?: string) => ({
    host,
    port: 443,
    kind: "connect" as const,
    decision,
    reason: decision === "denied" ? "not on the allowlist" : undefined,
    address: decision === "allowed" ? "104.16.0.1" : undefined,
    bytesUp: 512,
    bytesDown: 2048,
    startedAt: "2026-01-01T00:00:01.000Z",
    durationMs: 120,
    caller,
  });

  it("lists every connection collapsed, refused ones first, with the calling call's number", () => {
    const base = smallFixReport();
    const report: RunReport = {
      ...base,
      egress: {
        allowed: ["npm"],
        allowedHosts: ["registry.npmjs.org", "registry.yarnpkg.com"],
        privateHosts: [],
        connections: [
          connection("registry.npmjs.org", "allowed", base.toolCalls[0]!.id),
          connection("evil.example", "denied"),
        ],
      },
    };
    const md = renderMarkdown(report);
    const section = md.slice(md.indexOf("<b>Network:"));
    expect(section).toMatch(/^<b>Network: 2 connections through the allowlist proxy, 1 denied<\/b>/);
    expect(section.indexOf("evil.example:443")).toBeLessThan(section.indexOf("registry.npmjs.org:443"));
    expect(section).toContain(
      "| ⛔ denied | <code>evil.example:443</code> | connect | — | 512 B | 2.0 KiB | 120 ms | not on the allowlist |",
    );
    expect(section).toContain("| allowed | <code>registry.npmjs.org:443</code> | connect | 1 |");
    expect(md.slice(0, md.indexOf("<b>Network:"))).toMatch(/<details><summary>$/);
    expect(balanced(md)).toBe(true);
  });

  it("names the secrets the proxy injects, and the connections it put them in, by variable only", () => {
    const base = smallFixReport();
    const report: RunReport = {
      ...base,
      egress: {
        allowed: ["npm.corp.example"],
        allowedHosts: ["npm.corp.example"],
        privateHosts: [],
        injectSecrets: ["NPM_TOKEN=authorization:npm.corp.example"],
        connections: [{ ...connection("npm.corp.example", "allowed"), injected: ["NPM_TOKEN"] }],
      },
    };
    const section = renderMarkdown(report).slice(renderMarkdown(report).indexOf("<b>Network:"));
    expect(section).toContain(
      "Secrets the proxy injects: <code>NPM\\_TOKEN=authorization:npm.corp.example</code>",
    );
    expect(section).toMatch(/\| <code>npm\.corp\.example:443<\/code> \|.*\| injected NPM\\_TOKEN \|/);
  });

  it("is absent without an allowlist", () => {
    expect(renderMarkdown(smallFixReport())).not.toContain("<b>Network:");
  });
});

describe("the hooks section", () => {
  it("lists each hook run with its call, open when one blocked, the command escaped", () => {
    const base = smallFixReport();
    const toolCalls = base.toolCalls.map((call, i) =>
      i === 1
        ? {
            ...call,
            hooks: [
              {
                event: "PreToolUse" as const,
                command: "guard.sh | tee `x`",
                source: "settings:settings.json",
                outcome: "block" as const,
                exitCode: 2,
                signal: null,
                durationMs: 40,
                reason: "no rm here",
              },
              {
                event: "PostToolUse" as const,
                command: '"$CLAUDE_PROJECT_DIR"/fmt.sh',
                source: "settings:settings.json",
                outcome: "ok" as const,
                exitCode: 0,
                signal: null,
                durationMs: 120,
                scripts: ["fmt.sh"],
              },
            ],
          }
        : call,
    );
    const md = renderMarkdown({ ...base, toolCalls });
    expect(md).toContain("<b>Hooks: 2 runs in the sandbox, 1 blocked or failed</b>");
    expect(md.slice(0, md.indexOf("<b>Hooks:"))).toMatch(/<details open><summary>$/);
    expect(md).toContain(
      "| 2 | Glob | PreToolUse | <code>guard.sh \\| tee \\`x\\`</code> | ⛔ block | 2 | 40 ms | no rm here |",
    );
    expect(balanced(md)).toBe(true);
    expect(renderMarkdown(base)).not.toContain("<b>Hooks:");
  });
});

describe("the attempts table's line", () => {
  const chosenFrom = (reason: string): RunReport => ({
    ...smallFixReport(),
    attempts: [1, 2].map((attempt) => ({
      attempt,
      dir: `attempt-${attempt}`,
      started: true,
      exitReason: "completed" as const,
      outcome: "changes" as const,
      verify: "passed" as const,
      deniedCalls: 0,
      changedLines: attempt + 1,
      turns: 3,
      costUsd: 0.01,
    })),
    chosen: { attempt: 1, reason, verified: true },
  });

  it("says the choice's reason once, naming the attempt first only when the reason does not", () => {
    expect(
      renderMarkdown(
        chosenFrom("attempt 1 passed verify: smallest patch (2 changed lines, attempt 2 had 3)"),
      ),
    ).toContain(
      "**Chosen from 2 attempts**: attempt 1 passed verify: smallest patch (2 changed lines, attempt 2 had 3).",
    );
    expect(renderMarkdown(chosenFrom("the smallest non-empty patch"))).toContain(
      "**Chosen from 2 attempts**: attempt 1, the smallest non-empty patch.",
    );
  });
});

describe("the workspace's credential files", () => {
  it("B12 names a file held back with its reason, and one copied without its credentials with what went", () => {
    const base = smallFixReport();
    const report: RunReport = {
      ...base,
      workspace: {
        ...base.workspace,
        credentialFilesHeldBack: [
          { path: "deploy/.netrc", reason: "a .netrc (logins and passwords for hosts): never copied in" },
          {
            path: ".git/modules/libs/lib/config",
            reason: "copied without its credentials",
            removed: ["http.https://github.com/.extraheader", "url.https://***@github.com/.insteadof"],
          },
        ],
      },
    };
    const md = renderMarkdown(report);
    expect(md).toContain(
      "  - held back <code>deploy/.netrc</code>: a .netrc (logins and passwords for hosts): never copied in",
    );
    // Each removed key in code, escaped as any text (no autolink, no @mention).
    expect(md).toMatch(
      /^ {2}- credentials removed from <code>\.git\/modules\/libs\/lib\/config<\/code>: <code>http\.https:\u200b\/\/github\.com\/\.extraheader<\/code>, <code>url\.https:\u200b\/\/\\\*\\\*\\\*@\u200bgithub\.com\/\.insteadof<\/code>$/m,
    );
  });
});
