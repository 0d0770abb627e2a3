// Redaction: known values and their encodings, token formats next to ANSI and JSON escapes, the patch scan,
// and the end-to-end check that a secret planted in every string field of a record reaches no output (S3, S4).
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { summarizePatch } from "../../../src/report/patch.js";
import {
  MIN_SECRET_LENGTH,
  createRedactor,
  scanForSecrets,
  secretVariants,
} from "../../../src/report/redact.js";
import { RunReport } from "../../../src/report/schema.js";
import { writeReportFiles } from "../../../src/report/write-files.js";
import {
  FORMAT_SECRETS,
  KNOWN_SECRETS,
  forbiddenStrings,
  pemBlock,
  plantings,
} from "./support/fake-secrets.js";
import {
  deniedNoChangesReport,
  longRunReport,
  smallFixReport,
  verifyFailedReport,
} from "./support/report-builders.js";

const known = Object.values(KNOWN_SECRETS);

describe("createRedactor", () => {
  const redactor = createRedactor({ secrets: known });

  it.each(
    Object.entries(FORMAT_SECRETS).filter(
      ([name]) => !["bearer", "basic", "awsSecret", "pemBody"].includes(name),
    ),
  )("redacts the %s token format without knowing the value", (_name, token) => {
    const text = `before ${token} after`;
    expect(createRedactor().redact(text)).toBe("before *** after");
  });

  it("redacts known values, raw and next to ANSI codes", () => {
    for (const secret of known) {
      expect(redactor.redact(`x\u001b[31m${secret}\u001b[0my`)).toBe("x\u001b[31m***\u001b[0my");
    }
  });

  it("redacts base64, URL-encoded, hex, JSON-escaped and reversed forms of known values", () => {
    const secret = KNOWN_SECRETS.userSecret;
    const forms = [
      Buffer.from(secret).toString("base64"),
      Buffer.from(secret).toString("base64url"),
      encodeURIComponent(secret),
      Buffer.from(secret).toString("hex"),
      Buffer.from(secret).toString("hex").toUpperCase(),
      JSON.stringify(secret).slice(1, -1),
      [...secret].reverse().join(""),
    ];
    for (const form of forms) expect(redactor.redact(`<${form}>`)).not.toContain(form);
  });

  it("redacts base64 of a known value inside a longer base64 stream, at every alignment", () => {
    for (const prefix of ["", "a", "ab", "abc", "x-access-token:"]) {
      const encoded = Buffer.from(`${prefix}${KNOWN_SECRETS.githubToken}\n`).toString("base64");
      const out = redactor.redact(encoded);
      expect(out).toContain("***");
      expect(Buffer.from(out.replace(/\*\*\*/g, ""), "base64").toString("latin1")).not.toContain(
        KNOWN_SECRETS.githubToken.slice(4, 20),
      );
    }
  });

  it("redacts tokens inside JSON escapes and double-encoded JSON", () => {
    const token = FORMAT_SECRETS.ghp ?? "";
    const text = JSON.stringify(JSON.stringify({ auth: token, next: "\n" }));
    expect(createRedactor().redact(text)).not.toContain(token);
    expect(createRedactor().redact(`"\\u001b[0m${token}\\n"`)).toBe('"\\u001b[0m***\\n"');
  });

  it("keeps header names and redacts only their values", () => {
    const plain = createRedactor();
    expect(plain.redact(`Authorization: Bearer ${FORMAT_SECRETS.bearer}`)).toBe("Authorization: Bearer ***");
    expect(plain.redact(`-H 'Authorization: Basic ${FORMAT_SECRETS.basic}'`)).toBe(
      "-H 'Authorization: Basic ***'",
    );
    expect(plain.redact(`{"authorization":"token abcdef123456"}`)).toBe('{"authorization":"token ***"}');
    expect(plain.redact(`x-api-key: ${FORMAT_SECRETS.bearer}`)).toBe("x-api-key: ***");
    expect(plain.redact("https://x-access-token:s3cretvalue@github.com/o/r.git")).toBe(
      "https://x-access-token:***@github.com/o/r.git",
    );
    expect(plain.redact(`AWS_SECRET_ACCESS_KEY=${FORMAT_SECRETS.awsSecret}`)).toBe(
      "AWS_SECRET_ACCESS_KEY=***",
    );
  });

  it("redacts a cloud credential as STS, the AWS SDK and the clouds' headers spell it", () => {
    const plain = createRedactor();
    const secret = FORMAT_SECRETS.awsSecret;
    const opaque = Buffer.from("session-of-a-role").toString("base64");
    expect(plain.redact(`<SecretAccessKey>${secret}</SecretAccessKey>`)).toBe(
      "<SecretAccessKey>***</SecretAccessKey>",
    );
    expect(plain.redact(`{"SecretAccessKey":"${secret}"}`)).toBe('{"SecretAccessKey":"***"}');
    expect(plain.redact(`awsSecretKey: '${secret}'`)).toBe("awsSecretKey: '***'");
    expect(plain.redact(`<SessionToken>${opaque}</SessionToken>`)).toBe("<SessionToken>***</SessionToken>");
    expect(plain.redact(`AWS_SESSION_TOKEN=${opaque}`)).toBe("AWS_SESSION_TOKEN=***");
    expect(plain.redact(`x-amz-security-token: ${opaque}`)).toBe("x-amz-security-token: ***");
    expect(plain.redact(`token ${FORMAT_SECRETS.awsSessionToken} end`)).toBe("token *** end");
    expect(plain.redact(`"access_token":"${FORMAT_SECRETS.googleAccessToken}"`)).toBe('"access_token":"***"');
    // A 40-character value after a name that is not AWS's is left alone (it would block posting a patch).
    expect(plain.redact(`secret_key = "${secret}"`)).toBe(`secret_key = "${secret}"`);
  });

  it("redacts a whole private-key block, and a cut one to the end of the text", () => {
    const block = pemBlock();
    expect(createRedactor().redact(`key:\n${block}\ndone`)).toBe("key:\n***\ndone");
    const cut = block.slice(0, 60);
    expect(createRedactor().redact(`key:\n${cut}`)).toBe("key:\n***");
  });

  it("leaves ordinary text alone", () => {
    const plain = createRedactor({ secrets: known });
    const texts = [
      "Bearer tokens are described in RFC 6750.",
      "commit 4f2a9c1e0b7d3a5f6e8c9b0a1d2e3f4a5b6c7d8e",
      "sk-learn and ghp are just words; AKIA alone is not a key",
      "npm test -- --grep 'add' | tail -n 20",
      "export function add(a, b) { return a + b; }",
    ];
    for (const text of texts) expect(plain.redact(text)).toBe(text);
  });

  it(`does not use known values shorter than ${MIN_SECRET_LENGTH} characters as patterns`, () => {
    const short = createRedactor({ secrets: ["abc", "", "   ", null, undefined, "s3cret-value"] });
    expect(short.ignoredShortSecrets).toBe(1);
    expect(short.redact("abc s3cret-value")).toBe("abc ***");
    expect(secretVariants("abcdef").every((variant) => variant.length >= MIN_SECRET_LENGTH)).toBe(true);
  });

  it("redactDeep returns a redacted copy (keys too) and leaves the input unchanged", () => {
    const secret = KNOWN_SECRETS.githubToken;
    const input = { a: [secret, 1, true, null], [secret]: { nested: `x ${secret}` } };
    const out = redactor.redactDeep(input);
    expect(JSON.stringify(out)).not.toContain(secret);
    expect(out.a).toEqual(["***", 1, true, null]);
    expect(input.a[0]).toBe(secret);
  });

  it("redactDeep survives cycles", () => {
    const node: { self?: unknown; token: string } = { token: KNOWN_SECRETS.githubToken };
    node.self = node;
    const out = redactor.redactDeep(node);
    expect(out.token).toBe("***");
    expect(out.self).toBe(out);
  });

  it("redactLines keeps the line count when a secret spans lines", () => {
    const lines = ["const a = 1;", ...pemBlock().split("\n"), "const b = 2;"];
    const out = createRedactor().redactLines(lines);
    expect(out).toHaveLength(lines.length);
    expect(out[0]).toBe("const a = 1;");
    expect(out.at(-1)).toBe("const b = 2;");
    expect(out.slice(1, -1).every((line) => line === "***")).toBe(true);
  });

  // 2 MB of base64: a quadratic pattern would need ~10^12 steps and cannot finish within the test's timeout,
  // where a linear pass takes a fraction of a second. No clock is read: the timeout is the bound.
  it("finishes on a large base64 blob (no quadratic patterns)", { timeout: 30_000 }, () => {
    const blob = Buffer.alloc(1_500_000, 7).toString("base64");
    expect(redactor.redact(blob)).toBe(blob);
  });
});

describe("scanForSecrets", () => {
  const patch = [
    "diff --git a/src/config.js b/src/config.js",
    "index 1..2 100644",
    "--- a/src/config.js",
    "+++ b/src/config.js",
    "@@ -1,3 +1,8 @@",
    ` const removedLater = "${FORMAT_SECRETS.gho}";`,
    `-const old = "${FORMAT_SECRETS.ghu}";`,
    `+const token = "${FORMAT_SECRETS.ghp}";`,
    "+const ok = 1;",
    ...pemBlock()
      .split("\n")
      .map((line) => `+${line}`),
    ` const user = "${KNOWN_SECRETS.userSecret}";`,
    "diff --git a/.env.example b/.env.example",
    "new file mode 100644",
    "--- /dev/null",
    "+++ b/.env.example",
    "@@ -0,0 +1,2 @@",
    `+GITHUB_TOKEN=${KNOWN_SECRETS.githubToken}`,
    `+AWS_KEY=${FORMAT_SECRETS.awsAkia}`,
    "",
  ].join("\n");

  it("reports secrets in added lines with file, new line number and kind", () => {
    const findings = scanForSecrets(patch, { secrets: known });
    expect(findings).toEqual([
      { file: "src/config.js", line: 2, kind: "github_token" },
      { file: "src/config.js", line: 4, kind: "private_key" },
      { file: ".env.example", line: 1, kind: "known_secret" },
      { file: ".env.example", line: 1, kind: "github_token" },
      { file: ".env.example", line: 2, kind: "aws_access_key_id" },
    ]);
  });

  it("never puts the secret itself into a finding", () => {
    const text = JSON.stringify(scanForSecrets(patch, { secrets: known }));
    for (const forbidden of forbiddenStrings()) expect(text).not.toContain(forbidden);
  });

  it("is part of the patch summary, and the patch text is not changed", () => {
    const summary = summarizePatch(patch, { secrets: known });
    expect(summary.secretFindings).toHaveLength(5);
    expect(summary.files.map((file) => file.path)).toEqual(["src/config.js", ".env.example"]);
  });
});

/** Puts a planted secret into every string (and into input keys); fields the schema constrains are put back. */
function plantEverywhere(report: RunReport): { planted: RunReport; count: number } {
  const payloads = plantings();
  let count = 0;
  const plant = (value: unknown): unknown => {
    if (typeof value === "string") return `${value} ${payloads[count++ % payloads.length]}`;
    if (Array.isArray(value)) return value.map(plant);
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plant(item)]));
    }
    return value;
  };
  const candidate = plant(report) as Record<string, unknown>;
  for (const call of candidate.toolCalls as { input: Record<string, unknown> }[]) {
    if (typeof call.input === "object" && call.input !== null)
      call.input[payloads[count++ % payloads.length] ?? ""] = "key";
  }
  const first = RunReport.safeParse(candidate);
  if (first.success) return { planted: first.data, count };
  for (const issue of first.error.issues) {
    const original = issue.path.reduce<unknown>(
      (node, key) => (node as Record<PropertyKey, unknown>)[key],
      report,
    );
    const parent = issue.path
      .slice(0, -1)
      .reduce<unknown>((node, key) => (node as Record<PropertyKey, unknown>)[key], candidate);
    const last = issue.path.at(-1);
    if (last !== undefined) (parent as Record<PropertyKey, unknown>)[last] = original;
    count--;
  }
  return { planted: RunReport.parse(candidate), count };
}

describe("a secret planted in every string field of a record", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it.each([
    ["small fix", smallFixReport],
    ["denials and errors", deniedNoChangesReport],
    ["verify failed", verifyFailedReport],
    ["200 calls", longRunReport],
  ])("appears in no output: %s", async (_name, build) => {
    const { planted, count } = plantEverywhere(build());
    expect(count).toBeGreaterThan(50);
    const outDir = await mkdtemp(join(tmpdir(), "agent-ci-report-"));
    dirs.push(outDir);
    const patchText = [
      "diff --git a/leak.txt b/leak.txt",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/leak.txt",
      "@@ -0,0 +1,9 @@",
      ...[...known, FORMAT_SECRETS.ghp, FORMAT_SECRETS.jwt, ...pemBlock().split("\n")].map(
        (line) => `+${line}`,
      ),
      "",
    ].join("\n");
    const redactor = createRedactor({ secrets: known });
    await writeReportFiles(outDir, planted, { redactor, patchText });
    const json = await readFile(join(outDir, "report.json"), "utf8");
    const markdown = await readFile(join(outDir, "report.md"), "utf8");
    const html = await readFile(join(outDir, "report.html"), "utf8");
    const embedded =
      /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? "";
    const decoded = JSON.stringify(JSON.parse(embedded));
    const outputs = { json, markdown, html, decoded, decodedUnescaped: JSON.parse(embedded) as unknown };
    for (const forbidden of forbiddenStrings()) {
      expect(json, "report.json").not.toContain(forbidden);
      expect(markdown, "report.md").not.toContain(forbidden);
      expect(html, "report.html").not.toContain(forbidden);
      expect(decoded, "report.html data").not.toContain(forbidden);
    }
    for (const secret of known) {
      for (const variant of secretVariants(secret)) {
        expect(json).not.toContain(variant);
        expect(markdown).not.toContain(variant);
        expect(decoded).not.toContain(variant);
      }
    }
    expect(JSON.stringify(outputs.decodedUnescaped)).toContain("***");
    expect(JSON.parse(json)).toMatchObject({ schemaVersion: 1 });
  });
});

describe("secrets split by ANSI codes", () => {
  it("are found in the text without the codes and redacted with the codes inside them", () => {
    const token = FORMAT_SECRETS.ghp ?? "";
    const split = `ok \u001b[32m${token.slice(0, 12)}\u001b[0m${token.slice(12)} done`;
    expect(createRedactor().redact(split)).toBe("ok \u001b[32m*** done");
    const known = KNOWN_SECRETS.userSecret;
    const colored = `${known.slice(0, 5)}\u001b[1m${known.slice(5)}`;
    expect(createRedactor({ secrets: [known] }).redact(colored)).toBe("***");
  });
});
