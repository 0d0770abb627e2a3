// --output-schema end to end on the real engine: a scripted agent returns a valid object, corrects an invalid
// one, or never returns one (schema_invalid); the real SDK against the fake Messages API sees the
// StructuredOutput tool with the user's schema and gets the validator's messages back.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import type { RunConfigInput } from "../../src/runner/config.js";
import type { RunOutcome } from "../../src/runner/run.js";
import { fake, startFakeAnthropic, type FakeAnthropic } from "../support/fake-anthropic.js";
import { labelled, runScripted } from "../engines/support.js";

const docker = new Docker();
const SCHEMA = {
  type: "object",
  properties: { verdict: { enum: ["pass", "fail"] }, note: { type: "string" } },
  required: ["verdict", "note"],
  additionalProperties: false,
};

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function tmpFile(name: string, text: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-so-")), name);
  fs.writeFileSync(file, text);
  return file;
}

const schemaFile = () => tmpFile("verdict.schema.json", JSON.stringify(SCHEMA));
const output = (input: unknown) => ({ name: "StructuredOutput", input });

/** A scripted run of the example in plan mode with the verdict schema; it leaves no container. */
async function run(input: Partial<RunConfigInput>) {
  const result = await runScripted({ mode: "plan", outputSchema: schemaFile(), ...input });
  expect(await labelled(docker, result.outcome.runId)).toEqual([]);
  return result;
}

const reportOf = (outcome: RunOutcome) =>
  parseReport(fs.readFileSync(path.join(outcome.outDir, "report.json"), "utf8"));
const lastEvent = (outcome: RunOutcome) =>
  JSON.parse(
    fs.readFileSync(path.join(outcome.outDir, "events.jsonl"), "utf8").trim().split("\n").at(-1) ?? "{}",
  ) as Record<string, unknown>;
const script = (turns: unknown[]) => tmpFile("script.json", JSON.stringify({ turns }));

describe("--output-schema", () => {
  it("writes a valid object to output.json, redacted, and records it in report.json and the result event", async () => {
    const secret = ["ghp", "_", "A".repeat(36)].join("");
    const { outcome } = await run({
      script: script([
        [{ name: "Read", input: { file_path: "/workspace/src/calc.js" } }],
        [output({ verdict: "fail", note: `average divides by n-1; token ${secret}` })],
      ]),
    });
    expect(outcome.exitReason).toBe("completed");
    expect(outcome.exitCode).toBe(0);
    const written = JSON.parse(fs.readFileSync(path.join(outcome.outDir, "output.json"), "utf8")) as {
      verdict: string;
      note: string;
    };
    expect(written.verdict).toBe("fail");
    expect(written.note).toContain("average divides by n-1; token ***");
    expect(written.note).not.toContain(secret);
    const report = reportOf(outcome);
    expect(report.structuredOutput).toEqual({
      schema: "verdict.schema.json",
      valid: true,
      attempts: 1,
      errors: [],
      path: "output.json",
    });
    expect(report.toolCalls.map((c) => [c.tool, c.isError])).toEqual([
      ["Read", false],
      ["StructuredOutput", false],
    ]);
    expect(lastEvent(outcome)).toMatchObject({ subtype: "success", structured_output: { verdict: "fail" } });
  });

  it("gives one correction round: an invalid object is answered with the validator's messages, the corrected one is kept", async () => {
    const { outcome } = await run({
      script: script([[output({ verdict: "maybe" })], [output({ verdict: "pass", note: "ok" })]]),
    });
    expect(outcome.exitReason).toBe("completed");
    const report = reportOf(outcome);
    expect(report.structuredOutput).toMatchObject({ valid: true, attempts: 2, errors: [] });
    const first = report.toolCalls[0];
    expect(first?.isError).toBe(true);
    expect(first?.resultPreview).toMatch(/\/verdict: must be equal to one of the allowed values/);
    expect(first?.resultPreview).toMatch(/must have required property 'note'/);
    expect(JSON.parse(fs.readFileSync(path.join(outcome.outDir, "output.json"), "utf8"))).toEqual({
      verdict: "pass",
      note: "ok",
    });
  });

  it("ends with schema_invalid (exit 7) when the corrected object is still invalid: no output.json, the report says why", async () => {
    const { outcome } = await run({
      script: script([
        [output({ verdict: "maybe" })],
        [output({ verdict: "pass" })],
        [output({ verdict: "pass", note: "too late" })],
      ]),
    });
    expect(outcome.exitReason).toBe("schema_invalid");
    expect(outcome.exitCode).toBe(7);
    expect(outcome.error).toMatch(
      /without a valid StructuredOutput object: \(root\): must have required property 'note'/,
    );
    expect(fs.existsSync(path.join(outcome.outDir, "output.json"))).toBe(false);
    const report = reportOf(outcome);
    expect(report.outcome).toBe("stopped");
    expect(report.error?.message).toContain("must have required property 'note'");
    expect(report.structuredOutput).toEqual({
      schema: "verdict.schema.json",
      valid: false,
      attempts: 2,
      errors: ["(root): must have required property 'note'"],
    });
    expect(report.toolCalls).toHaveLength(2); // the third turn was never asked for
    expect(lastEvent(outcome)).toMatchObject({
      subtype: "error_max_structured_output_retries",
      is_error: true,
      exit_reason: "schema_invalid",
    });
  });

  it("reminds an agent that stops without calling StructuredOutput once, then ends with schema_invalid", async () => {
    const { outcome } = await run({ script: script([]) });
    expect(outcome.exitReason).toBe("schema_invalid");
    expect(reportOf(outcome).structuredOutput).toMatchObject({
      valid: false,
      attempts: 0,
      errors: ["the agent stopped without calling StructuredOutput"],
    });
    expect(reportOf(outcome).turns).toHaveLength(2);
  });

  it("says in the report that no object came when a limit ended the run first", async () => {
    const { outcome } = await run({
      script: script([
        [{ name: "Read", input: { file_path: "/workspace/src/calc.js" } }],
        [output({ verdict: "pass", note: "late" })],
      ]),
      maxTurns: 1,
    });
    expect(outcome.exitReason).toBe("max_turns");
    expect(reportOf(outcome).structuredOutput).toMatchObject({
      valid: false,
      attempts: 0,
      errors: ["the run ended (max_turns) before the agent returned an object"],
    });
    expect(fs.existsSync(path.join(outcome.outDir, "output.json"))).toBe(false);
  });

  it("refuses a schema that is not an object schema before any container starts", async () => {
    const { outcome } = await run({
      script: script([]),
      outputSchema: tmpFile("list.json", JSON.stringify({ type: "array" })),
    });
    expect(outcome.exitReason).toBe("config_error");
    expect(outcome.error).toMatch(/must describe an object/);
    expect(reportOf(outcome).image).toBeUndefined();
  });

  it("runs the real SDK against the fake Messages API: the tool carries the schema, the validator's errors go back, the corrected object ends the run", async () => {
    const key = ["sk-ant-api03", "FAKEfake".repeat(5)].join("-");
    const api = await startFakeAnthropic({
      apiKey: key,
      turns: [
        fake.toolUse("Read", { file_path: "/workspace/src/calc.js" }),
        fake.toolUse("StructuredOutput", { verdict: "fail" }),
        fake.toolUse("StructuredOutput", { verdict: "fail", note: "average divides by n-1" }),
      ],
    });
    servers.push(api);
    const { outcome } = await run({
      apiKey: key,
      baseURL: api.url,
      prompt: "Is calc.js right? Answer with a verdict.",
    });
    expect(outcome.exitReason).toBe("completed");
    const requests = api.messagesRequests();
    expect(requests).toHaveLength(3);
    const tool = requests[0]?.body.tools?.find((t) => "name" in t && t.name === "StructuredOutput");
    expect(tool).toMatchObject({ input_schema: SCHEMA });
    expect(requests[0]?.body.system).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ text: expect.stringContaining("call the StructuredOutput tool once") }),
      ]),
    );
    const correction = JSON.stringify(requests[2]?.body.messages.at(-1));
    expect(correction).toContain('"is_error":true');
    expect(correction).toContain("must have required property 'note'");
    expect(JSON.parse(fs.readFileSync(path.join(outcome.outDir, "output.json"), "utf8"))).toEqual({
      verdict: "fail",
      note: "average divides by n-1",
    });
  });
});
