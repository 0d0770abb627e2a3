// OpenTelemetry export as Claude Code does it (docs/telemetry.md): the CLI and the Action run the session the
// reference recorded (test/fixtures/claude-code-telemetry/: a Read, an Edit, an allowed and a denied Bash) with a
// scripted model on the real engine, and export to a loopback collector that decodes OTLP with the protocol's own
// definitions. The metric, event and span names, their attributes and nesting are checked against what Claude
// Code 2.1.328 sent, and agent-ci's own `agent_ci.` additions beside them (setup and verify phases, the verify
// event, a patch's secret finding, api_error from a Messages API that refuses the key); over http/json,
// http/protobuf and, from the CLI, gRPC; canary secrets are in no byte sent. A collector that refuses or never
// answers changes neither the outcome nor the exit code: the never-answering one took the export's requests and
// answered none, and the CLI process exited (the event waited for); the bound on that wait is the unit test's.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport, type RunReport, secretVariants } from "../../src/report/index.js";
import { EXIT_CODES } from "../../src/runner/options.js";
import { type AgentCiEvent, type ClaudeCodeEvent, METRICS, SPANS } from "../../src/telemetry/vocabulary.js";
import { runCli } from "../support/cli-process.js";
import { startFakeAnthropic } from "../support/fake-anthropic.js";
import { makeWorkspace } from "../support/workspace.js";
import { tempOut } from "../support/run-io.js";
import {
  type OtlpReceiver,
  type Received,
  referenceTelemetry,
  refusingEndpoint,
  startOtlpGrpcReceiver,
  startOtlpHttpReceiver,
} from "../support/otlp-receiver.js";
import { actionRunner, type ScriptCall, scriptFile } from "../support/action-harness.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";

/** The collectors and fake APIs a test started, closed after it. */
const receivers: Array<Pick<OtlpReceiver, "close">> = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const API_KEY = `sk-ant-api03-${randomBytes(30).toString("hex")}`;
const GITHUB_TOKEN = `ghp_${randomBytes(18).toString("hex")}`;
const COLLECTOR_KEY = `collector-${randomBytes(16).toString("hex")}`;
const INJECTED = `injected-${randomBytes(16).toString("hex")}`;
/** A secret the egress proxy puts into requests for api.test: the sandbox holds a placeholder, agent-ci the value. */
const INJECT_ARGS = [
  "--network",
  "allowlist",
  "--allow-domain",
  "api.test",
  "--inject-secret",
  "INJECTED_TOKEN=authorization:api.test",
];
const CALC = "exports.add = (a, b) => a - b;\n";
/** A token of GitHub's shape (none the run knows): the run's secret scan finds it in the patch. */
const LEAKED = ["ghp", randomBytes(18).toString("hex")].join("_");

/** The reference's session: Read, Edit, an allowed Bash (which also looks for telemetry's variables), a denied Bash. */
const SESSION: ScriptCall[][] = [
  [{ name: "Read", input: { file_path: "/workspace/calc.js" } }],
  [
    {
      name: "Edit",
      input: { file_path: "/workspace/calc.js", old_string: "a - b", new_string: "a + b" },
    },
  ],
  [
    {
      name: "Bash",
      input: {
        command: `node -e "console.log(Object.keys(process.env).filter((k) => /OTEL|CLAUDE_CODE/.test(k)).length, require('./calc').add(2, 3), '${API_KEY}'.length)"`,
        description: "check",
      },
    },
  ],
  [{ name: "Bash", input: { command: "rm -rf /tmp/nothing-here", description: "denied" } }],
];

function sessionScript(turns: ScriptCall[][] = SESSION): string {
  return scriptFile(turns, "Fixed add.");
}

function telemetryEnv(endpoint: string, protocol: string): Record<string, string> {
  return {
    CLAUDE_CODE_ENABLE_TELEMETRY: "1",
    OTEL_METRICS_EXPORTER: "otlp",
    OTEL_LOGS_EXPORTER: "otlp",
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${COLLECTOR_KEY}`,
    OTEL_METRIC_EXPORT_INTERVAL: "1000",
    OTEL_LOGS_EXPORT_INTERVAL: "500",
    OTEL_TRACES_EXPORT_INTERVAL: "500",
    OTEL_LOG_TOOL_DETAILS: "1",
    OTEL_LOG_USER_PROMPTS: "1",
    OTEL_RESOURCE_ATTRIBUTES: "team=demo",
  };
}

const PROMPT = `fix add (the token ${GITHUB_TOKEN} is not for you)`;

/** A CLI run of the session (`script`), or against a Messages API (`null`: ANTHROPIC_BASE_URL in `env`). */
async function cliRun(
  env: Record<string, string>,
  args: string[] = [],
  script: string | null = sessionScript(),
) {
  const workspace = makeWorkspace({ "calc.js": CALC }, { git: true });
  const out = tempOut();
  const run = await runCli(
    [
      "run",
      "--workspace",
      workspace,
      "--prompt",
      PROMPT,
      ...(script === null ? [] : ["--script", script]),
      "--permission-mode",
      "acceptEdits",
      "--allowedTools",
      "Bash(node:*)",
      "--disallowedTools",
      "Bash(rm:*)",
      "--out",
      out,
      "--output-format",
      "json",
      ...args,
    ],
    {
      ANTHROPIC_API_KEY: API_KEY,
      GITHUB_TOKEN,
      INJECTED_TOKEN: INJECTED,
      GITHUB_REPOSITORY: "octo/calc",
      GITHUB_EVENT_NAME: "",
      ...env,
    },
  );
  const file = path.join(out, "report.json");
  if (!fs.existsSync(file)) throw new Error(`no report.json (exit ${run.code}): ${run.stderr.slice(-2000)}`);
  const report = parseReport(fs.readFileSync(file, "utf8"));
  return { run, report, out };
}

/** Claude Code's names for what agent-ci also does: its start-up events and the blocked_on_user span are not. */
const NOT_AGENT_CI = new Set([
  "managed_settings_resolved",
  "plugin_loaded",
  "claude_code.tool.blocked_on_user",
]);
/**
 * Attributes of Claude Code's that agent-ci does not send, each for a reason (docs/telemetry.md): user.id and
 * the terminal (a CI run has neither), the provider's sign-in facts, facts of Claude Code's own client (speed,
 * effort, query_source_safe, its request ids and streaming timings, the Bash command's classifier), and the
 * blocked_on_user span it has no counterpart for.
 */
const NOT_SENT = new Set([
  "user.id",
  "terminal.type",
  "anthropic.provider",
  "anthropic.custom_base_url",
  "speed",
  "effort",
  "query_source_safe",
  "request_id",
  "gen_ai.response.id",
  "ttft_ms",
  "first_content_ms",
  "message.uuid",
  "prompt_text",
  "parent.source",
  "queued_sends",
  "bash_command_class",
  "cache_creation_5m_tokens",
  "cache_creation_1h_tokens",
]);

const eventName = (l: { attributes: Record<string, unknown> }) => String(l.attributes["event.name"]);

/** Each name the reference has (of what agent-ci does), with the union of its attribute keys. */
function keysByName(received: Received): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (name: string, keys: string[]) => {
    if (NOT_AGENT_CI.has(name.slice(name.indexOf(" ") + 1))) return;
    const set = out.get(name) ?? new Set<string>();
    for (const k of keys) set.add(k);
    out.set(name, set);
  };
  for (const s of received.spans) add(`span ${s.name}`, Object.keys(s.attributes));
  for (const l of received.logs) add(`event ${eventName(l)}`, Object.keys(l.attributes));
  for (const p of received.points) add(`metric ${p.metric}`, Object.keys(p.attributes));
  return out;
}

function expectLikeReference(received: Received): void {
  const reference = keysByName(referenceTelemetry());
  const ours = keysByName(received);
  for (const [name, keys] of reference) {
    expect(ours.has(name), `${name} is exported`).toBe(true);
    const missing = [...keys].filter((k) => !NOT_SENT.has(k) && !ours.get(name)?.has(k));
    expect(missing, `${name}: attributes`).toEqual([]);
  }
  // The metrics' units and descriptions are Claude Code's.
  const refPoints = new Map(referenceTelemetry().points.map((p) => [p.metric, p]));
  for (const p of received.points.filter((p) => refPoints.has(p.metric))) {
    expect(p.unit, p.metric).toBe(refPoints.get(p.metric)?.unit);
    expect(p.description, p.metric).toBe(refPoints.get(p.metric)?.description);
  }
}

/** A span's name for a sandbox phase. */
const phaseSpan = (phase: string) => `${SPANS.phasePrefix}${phase}`;
/** An agent-ci event's `event.name` (its body too). */
const ownEvent = (name: AgentCiEvent) => `agent_ci.${name}`;
/** A Claude Code event's `event.name` (its body is `claude_code.<name>`); typed, so only the vocabulary's. */
const claudeEvent = (name: ClaudeCodeEvent) => name;

function expectNesting(received: Received, report: RunReport): void {
  const byId = new Map(received.spans.map((s) => [s.spanId, s]));
  const parentName = (name: string) =>
    received.spans.filter((s) => s.name === name).map((s) => byId.get(s.parentSpanId)?.name);
  const run = received.spans.find((s) => s.name === SPANS.run);
  expect(run?.parentSpanId).toBe("");
  expect(new Set(received.spans.map((s) => s.traceId))).toEqual(new Set([run?.traceId]));
  expect(parentName(SPANS.interaction)).toEqual([SPANS.run]);
  expect(new Set(parentName(SPANS.llmRequest))).toEqual(new Set([SPANS.interaction]));
  expect(new Set(parentName(SPANS.tool))).toEqual(new Set([SPANS.interaction]));
  expect(new Set(parentName(SPANS.toolExecution))).toEqual(new Set([SPANS.tool]));
  for (const phase of ["copy-in", "calls", "patch", "teardown"])
    expect(parentName(phaseSpan(phase)), phase).toEqual([SPANS.run]);
  // A span per turn and per call, in the record's order; a denied call has no execution.
  expect(received.spans.filter((s) => s.name === SPANS.llmRequest)).toHaveLength(report.turns.length);
  const tools = received.spans.filter((s) => s.name === SPANS.tool);
  expect(tools.map((s) => s.attributes["gen_ai.tool.name"])).toEqual(report.toolCalls.map((c) => c.tool));
  expect(received.spans.filter((s) => s.name === SPANS.toolExecution)).toHaveLength(
    report.toolCalls.filter((c) => c.decision?.behavior === "allow").length,
  );
  const interaction = received.spans.find((s) => s.name === SPANS.interaction);
  expect(interaction?.attributes["gen_ai.conversation.id"]).toBe(report.runId);
  // Events sit on the spans Claude Code ties them to: a decision on its tool, the rest on the interaction.
  for (const log of received.logs) {
    const name = eventName(log);
    if (name === claudeEvent("tool_decision")) expect(byId.get(log.spanId)?.name).toBe(SPANS.tool);
    else if (name.startsWith("agent_ci.")) expect(byId.get(log.spanId)?.name).toBe(SPANS.run);
    else expect(byId.get(log.spanId)?.name, name).toBe(SPANS.interaction);
  }
}

function expectAgentCiAdditions(received: Received, report: RunReport): void {
  const run = received.spans.find((s) => s.name === SPANS.run);
  expect(run?.attributes).toMatchObject({
    "agent_ci.run_id": report.runId,
    "agent_ci.repository": "octo/calc",
    "agent_ci.outcome": "changes",
    "agent_ci.exit_reason": "completed",
  });
  expect(run?.resource).toMatchObject({ "service.name": "agent-ci", team: "demo" });
  const decisions = received.logs.filter((l) => eventName(l) === claudeEvent("tool_decision"));
  expect(decisions.map((d) => d.attributes.decision)).toEqual(
    report.toolCalls.map((c) => (c.decision?.behavior === "allow" ? "accept" : "reject")),
  );
  // agent-ci's decision source: the rule and the settings it came from.
  const denied = decisions.find((d) => d.attributes.decision === "reject");
  expect(denied?.attributes).toMatchObject({
    source: "config",
    "agent_ci.decision.rule": "Bash(rm:*)",
    "agent_ci.decision.decided_by": "rule",
  });
  expect(String(denied?.attributes["agent_ci.decision.rule_source"])).not.toBe("");
  expect(received.logs.find((l) => eventName(l) === ownEvent("run_end"))?.attributes).toMatchObject({
    "agent_ci.outcome": "changes",
    "agent_ci.exit_reason": "completed",
  });
  const runs = received.points.filter((p) => p.metric === METRICS.runs.name);
  expect(runs.map((p) => p.attributes["agent_ci.repository"])).toEqual(["octo/calc"]);
  const cost = received.points.find((p) => p.metric === METRICS.cost.name);
  expect(cost?.attributes["agent_ci.repository"]).toBe("octo/calc");
}

/** No canary, in any of the forms the redactor knows, in any byte the collector received. */
function expectNoCanary(received: Received, canaries: string[]): void {
  expect(received.raw.length).toBeGreaterThan(0);
  const bytes = Buffer.concat(received.raw.map((r) => r.body));
  for (const canary of canaries)
    for (const form of secretVariants(canary)) expect(bytes.includes(Buffer.from(form)), canary).toBe(false);
}

describe("telemetry from the CLI", { timeout: 240_000 }, () => {
  it("exports Claude Code's metrics, events and spans (http/json) with agent-ci's additions, and no secret", async () => {
    const collector = await startOtlpHttpReceiver();
    receivers.push(collector);
    const { run, report } = await cliRun(telemetryEnv(collector.url, "http/json"), INJECT_ARGS);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    await collector.waitFor(["traces", "logs", "metrics"]);
    const received = collector.received;
    expect(received.raw.every((r) => r.contentType.startsWith("application/json"))).toBe(true);
    expectLikeReference(received);
    expectNesting(received, report);
    expectAgentCiAdditions(received, report);
    expect(report.egress?.injectSecrets).toEqual(["INJECTED_TOKEN=authorization:api.test"]);
    expectNoCanary(received, [API_KEY, GITHUB_TOKEN, COLLECTOR_KEY, INJECTED]);
    // Opted in: the prompt (redacted) and the tool inputs are sent.
    const prompt = received.logs.find((l) => eventName(l) === "user_prompt");
    expect(String(prompt?.attributes.prompt)).toContain("fix add");
    // The endpoint and its headers are not in the sandbox: the Bash call saw no OTEL_* or CLAUDE_CODE_* variable.
    const bash = report.toolCalls.find((c) => c.tool === "Bash" && c.decision?.behavior === "allow");
    expect(bash?.resultPreview.trim()).toMatch(/^0 5 /);
    expect((run.stderr.match(/telemetry: /g) ?? []).length).toBeLessThanOrEqual(1);
  });

  it("a collector that refuses connections changes neither the outcome nor the exit code, and warns once", async () => {
    const { run, report } = await cliRun(telemetryEnv(await refusingEndpoint(), "http/protobuf"));
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(report.outcome).toBe("changes");
    expect(run.stderr.match(/telemetry: /g)).toHaveLength(1);
    expect(run.stderr).not.toContain(COLLECTOR_KEY);
  });

  it("a collector that never answers changes neither the outcome nor the exit code, and the CLI exits", async () => {
    const collector = await startOtlpHttpReceiver("never");
    receivers.push(collector);
    const { run, report } = await cliRun(telemetryEnv(collector.url, "http/protobuf"));
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(report.outcome).toBe("changes");
    expect(run.stderr.match(/telemetry: /g)).toHaveLength(1);
    // The process has exited (cliRun waited for that), while the collector holds the export's requests it took
    // whole and never answered: the end did not wait for the collector's answer.
    await collector.waitForAny();
    expect(collector.held.length).toBeGreaterThan(0);
    expect(collector.held.every((p) => /^\/v1\/(traces|logs|metrics)$/.test(p))).toBe(true);
  });

  it("exports over OTLP/gRPC: the same names, the setup and verify phases, the verify event and a patch's secret finding", async () => {
    const collector = await startOtlpGrpcReceiver();
    receivers.push(collector);
    const leak: ScriptCall[] = [
      {
        name: "Write",
        input: { file_path: "/workspace/config.js", content: `exports.token = "${LEAKED}";\n` },
      },
    ];
    const { run, report } = await cliRun(
      telemetryEnv(collector.url, "grpc"),
      [
        "--network",
        "setup",
        "--setup",
        "node --version",
        "--no-setup-cache",
        "--verify",
        `node -e "process.exit(require('./calc').add(2, 3) === 5 ? 0 : 1)"`,
      ],
      sessionScript([...SESSION, leak]),
    );
    expect(run.code, run.stderr.slice(-2000)).toBe(EXIT_CODES.completed);
    expect(report.verify).toMatchObject({ applied: true, exitCode: 0 });
    expect(report.patch.secretFindings.map((f) => f.file)).toContain("config.js");
    await collector.waitFor(["traces", "logs", "metrics"]);
    const received = collector.received;
    expect(received.raw.every((r) => r.contentType === "application/grpc")).toBe(true);
    expectLikeReference(received);
    expectNesting(received, report);
    expectAgentCiAdditions(received, report);
    expectNoCanary(received, [API_KEY, GITHUB_TOKEN, COLLECTOR_KEY, LEAKED]);

    // Each phase the record has is a span under the run's, setup and verify among them.
    const byId = new Map(received.spans.map((s) => [s.spanId, s]));
    const phases = received.spans.filter((s) => s.name.startsWith(SPANS.phasePrefix));
    expect(phases.map((s) => s.name).sort()).toEqual(
      (report.phases ?? []).map((p) => phaseSpan(p.name)).sort(),
    );
    for (const phase of ["setup", "verify"]) {
      const span = phases.find((s) => s.name === phaseSpan(phase));
      expect(byId.get(span?.parentSpanId ?? "")?.name, phase).toBe(SPANS.run);
      expect(span?.attributes, phase).toMatchObject({
        "agent_ci.phase": phase,
        "agent_ci.run_id": report.runId,
      });
    }

    // agent_ci.verify: the result (docs/telemetry.md: passed, failed, not_applied), applied, the exit code.
    const verify = received.logs.filter((l) => eventName(l) === ownEvent("verify"));
    expect(verify).toHaveLength(1);
    expect(verify[0]?.body).toBe(ownEvent("verify"));
    expect(verify[0]?.attributes).toMatchObject({
      "agent_ci.run_id": report.runId,
      "agent_ci.verify.result": "passed",
      "agent_ci.verify.applied": true,
      "agent_ci.verify.exit_code": 0,
      duration_ms: Math.round(report.verify?.durationMs ?? -1),
    });
    // The same result on the run's span, its end event and the run counter.
    const runSpan = received.spans.find((s) => s.name === SPANS.run);
    expect(runSpan?.attributes["agent_ci.verify.result"]).toBe("passed");
    const end = received.logs.find((l) => eventName(l) === ownEvent("run_end"));
    expect(end?.attributes["agent_ci.verify.result"]).toBe("passed");
    const counted = received.points.filter((p) => p.metric === METRICS.runs.name);
    expect(counted.map((p) => p.attributes["agent_ci.verify.result"])).toEqual(["passed"]);

    // agent_ci.patch_finding: one per finding of the run's secret scan, its kind, file and line (never the value).
    const findings = received.logs.filter((l) => eventName(l) === ownEvent("patch_finding"));
    expect(findings.every((f) => f.body === ownEvent("patch_finding"))).toBe(true);
    expect(
      findings.map((f) => ({
        kind: f.attributes["agent_ci.finding.kind"],
        file: f.attributes["agent_ci.finding.file"],
        line: f.attributes["agent_ci.finding.line"],
      })),
    ).toEqual(report.patch.secretFindings.map(({ kind, file, line }) => ({ kind, file, line })));
  });

  it("a Messages API that refuses the key: api_error on the interaction, the run's exit reason, exit code 4", async () => {
    const api = await startFakeAnthropic({
      apiKey: `sk-ant-api03-${randomBytes(30).toString("hex")}`,
    });
    const collector = await startOtlpHttpReceiver();
    receivers.push(collector, api);
    const { run, report } = await cliRun(
      { ...telemetryEnv(collector.url, "http/json"), ANTHROPIC_BASE_URL: api.url },
      [],
      null,
    );
    expect(run.code, run.stderr.slice(-2000)).toBe(EXIT_CODES.api_error);
    expect(report.exitReason).toBe("api_error");
    expect(report.error?.message).toBeTruthy();
    await collector.waitFor(["traces", "logs", "metrics"]);
    const received = collector.received;
    const byId = new Map(received.spans.map((s) => [s.spanId, s]));
    // docs/telemetry.md: api_error's body claude_code.api_error, with model, error and agent_ci.error.kind.
    const errors = received.logs.filter((l) => eventName(l) === claudeEvent("api_error"));
    expect(errors).toHaveLength(1);
    expect(errors[0]?.body).toBe(`claude_code.${claudeEvent("api_error")}`);
    expect(errors[0]?.attributes).toMatchObject({
      "agent_ci.run_id": report.runId,
      model: report.model.name,
      error: report.error?.message,
      "agent_ci.error.kind": report.error?.kind,
    });
    expect(byId.get(errors[0]?.spanId ?? "")?.name).toBe(SPANS.interaction);
    const runSpan = received.spans.find((s) => s.name === SPANS.run);
    expect(runSpan?.attributes).toMatchObject({
      "agent_ci.exit_reason": "api_error",
      "agent_ci.outcome": report.outcome,
      "agent_ci.error.kind": report.error?.kind,
    });
    expect(received.logs.find((l) => eventName(l) === ownEvent("run_end"))?.attributes).toMatchObject({
      "agent_ci.exit_reason": "api_error",
    });
    const counted = received.points.filter((p) => p.metric === METRICS.runs.name);
    expect(counted.map((p) => p.attributes["agent_ci.exit_reason"])).toEqual(["api_error"]);
    expectNoCanary(received, [API_KEY, GITHUB_TOKEN, COLLECTOR_KEY]);
  });
});

describe("telemetry from the Action", { timeout: 240_000 }, () => {
  let github: FakeGitHub | undefined;
  afterEach(async () => {
    await github?.close();
  });

  /** The Action on an opened issue, running the session, with telemetry to `endpoint` over http/protobuf. */
  async function actionRun(endpoint: string) {
    github = await startFakeGitHub({
      token: GITHUB_TOKEN,
      permissions: { octocat: "write" },
      issues: [{ number: 12, title: "add() returns the wrong sum", body: "b", user: { login: "octocat" } }],
    });
    const workspace = makeWorkspace({ "calc.js": CALC }, { git: true });
    const action = actionRunner(() => ({
      fixture: "issues-opened",
      apiUrl: github!.url,
      workspace,
      inputs: {
        github_token: GITHUB_TOKEN,
        script: sessionScript(),
        permission_mode: "acceptEdits",
        allowed_tools: "Bash(node:*)",
        disallowed_tools: "Bash(rm:*)",
        prompt: PROMPT,
      },
      env: { ...telemetryEnv(endpoint, "http/protobuf"), ANTHROPIC_API_KEY: API_KEY },
    }));
    return action();
  }

  it("exports the same names over http/protobuf, with the repository, the event and the issue", async () => {
    const collector = await startOtlpHttpReceiver();
    receivers.push(collector);
    const result = await actionRun(collector.url);
    expect(result.failed).toBeUndefined();
    expect(result.outputs.outcome).toBe("changes");
    await collector.waitFor(["traces", "logs", "metrics"]);
    const received = collector.received;
    expect(received.raw.every((r) => r.contentType === "application/x-protobuf")).toBe(true);
    expectLikeReference(received);
    const run = received.spans.find((s) => s.name === "agent_ci.run");
    expect(run?.attributes).toMatchObject({
      "agent_ci.repository": expect.stringContaining("/"),
      "agent_ci.event": "issues",
      "agent_ci.issue.number": 12,
    });
    expectNoCanary(received, [API_KEY, GITHUB_TOKEN, COLLECTOR_KEY]);
    // At most one line about telemetry (a loaded machine may take the collector past the end's budget).
    expect((result.stdout.match(/telemetry: /g) ?? []).length).toBeLessThanOrEqual(1);
  });

  it("a collector that refuses connections leaves the step's outcome as it was, with one warning", async () => {
    const result = await actionRun(await refusingEndpoint());
    expect(result.failed).toBeUndefined();
    expect(result.exitCode).toBe(0);
    expect(result.outputs.outcome).toBe("changes");
    expect(result.log.match(/telemetry: /g)).toHaveLength(1);
    expect(result.log).toMatch(/^::warning::agent-ci: telemetry: /m);
    expect(result.log).not.toContain(COLLECTOR_KEY);
  });
});

// The temp folders the runs made are the OS's to clean; nothing here is left running.
void os;
