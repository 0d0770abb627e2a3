// OpenTelemetry export as Claude Code does it (docs/telemetry.md): the CLI and the Action run the session the
// reference recorded (test/fixtures/claude-code-telemetry/: a Read, an Edit, an allowed and a denied Bash) with a
// scripted model on the real engine, and export to a loopback collector that decodes OTLP with the protocol's own
// definitions. The metric, event and span names, their attributes and nesting are checked against what Claude
// Code 2.1.328 sent, and agent-ci's own `agent_ci.` additions beside them; canary secrets are in no byte sent;
// a collector that refuses or never answers changes neither the outcome nor the exit code, and the CLI still
// exits (the test waits for the process to end).
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport, secretVariants } from "../../src/report/index.js";
import { runCli } from "../support/cli-process.js";
import { makeWorkspace } from "../support/workspace.js";
import { tempOut } from "../support/run-io.js";
import {
  type OtlpReceiver,
  type Received,
  referenceTelemetry,
  refusingEndpoint,
  startOtlpHttpReceiver,
} from "../support/otlp-receiver.js";
import { actionRunner, scriptFile } from "../support/action-harness.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";

const receivers: OtlpReceiver[] = [];
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

/** The reference's session: Read, Edit, an allowed Bash (which also looks for telemetry's variables), a denied Bash. */
function sessionScript(): string {
  return scriptFile(
    [
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
    ],
    "Fixed add.",
  );
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

async function cliRun(env: Record<string, string>, args: string[] = []) {
  const workspace = makeWorkspace({ "calc.js": CALC }, { git: true });
  const out = tempOut();
  const run = await runCli(
    [
      "run",
      "--workspace",
      workspace,
      "--prompt",
      PROMPT,
      "--script",
      sessionScript(),
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
  const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
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

function expectNesting(received: Received, runId: string): void {
  const byId = new Map(received.spans.map((s) => [s.spanId, s]));
  const parentName = (name: string) =>
    received.spans.filter((s) => s.name === name).map((s) => byId.get(s.parentSpanId)?.name);
  const run = received.spans.find((s) => s.name === "agent_ci.run");
  expect(run?.parentSpanId).toBe("");
  expect(new Set(received.spans.map((s) => s.traceId))).toEqual(new Set([run?.traceId]));
  expect(parentName("claude_code.interaction")).toEqual(["agent_ci.run"]);
  expect(new Set(parentName("claude_code.llm_request"))).toEqual(new Set(["claude_code.interaction"]));
  expect(new Set(parentName("claude_code.tool"))).toEqual(new Set(["claude_code.interaction"]));
  expect(new Set(parentName("claude_code.tool.execution"))).toEqual(new Set(["claude_code.tool"]));
  for (const phase of ["copy-in", "calls", "patch", "teardown"])
    expect(parentName(`agent_ci.phase.${phase}`), phase).toEqual(["agent_ci.run"]);
  // Five turns, four calls; the denied one has no execution.
  expect(received.spans.filter((s) => s.name === "claude_code.llm_request")).toHaveLength(5);
  const tools = received.spans.filter((s) => s.name === "claude_code.tool");
  expect(tools.map((s) => s.attributes["gen_ai.tool.name"])).toEqual(["Read", "Edit", "Bash", "Bash"]);
  expect(received.spans.filter((s) => s.name === "claude_code.tool.execution")).toHaveLength(3);
  const interaction = received.spans.find((s) => s.name === "claude_code.interaction");
  expect(interaction?.attributes["gen_ai.conversation.id"]).toBe(runId);
  // Events sit on the spans Claude Code ties them to: a decision on its tool, the rest on the interaction.
  for (const log of received.logs) {
    const name = eventName(log);
    if (name === "tool_decision") expect(byId.get(log.spanId)?.name).toBe("claude_code.tool");
    else if (name.startsWith("agent_ci.")) expect(byId.get(log.spanId)?.name).toBe("agent_ci.run");
    else expect(byId.get(log.spanId)?.name, name).toBe("claude_code.interaction");
  }
}

function expectAgentCiAdditions(received: Received, runId: string): void {
  const run = received.spans.find((s) => s.name === "agent_ci.run");
  expect(run?.attributes).toMatchObject({
    "agent_ci.run_id": runId,
    "agent_ci.repository": "octo/calc",
    "agent_ci.outcome": "changes",
    "agent_ci.exit_reason": "completed",
  });
  expect(run?.resource).toMatchObject({ "service.name": "agent-ci", team: "demo" });
  const decisions = received.logs.filter((l) => eventName(l) === "tool_decision");
  expect(decisions.map((d) => d.attributes.decision)).toEqual(["accept", "accept", "accept", "reject"]);
  // agent-ci's decision source: the rule and the settings it came from.
  expect(decisions[3]?.attributes).toMatchObject({
    source: "config",
    "agent_ci.decision.rule": "Bash(rm:*)",
    "agent_ci.decision.decided_by": "rule",
  });
  expect(String(decisions[3]?.attributes["agent_ci.decision.rule_source"])).not.toBe("");
  expect(received.logs.find((l) => eventName(l) === "agent_ci.run_end")?.attributes).toMatchObject({
    "agent_ci.outcome": "changes",
    "agent_ci.exit_reason": "completed",
  });
  const runs = received.points.filter((p) => p.metric === "agent_ci.run.count");
  expect(runs.map((p) => p.attributes["agent_ci.repository"])).toEqual(["octo/calc"]);
  const cost = received.points.find((p) => p.metric === "claude_code.cost.usage");
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
    expectNesting(received, report.runId);
    expectAgentCiAdditions(received, report.runId);
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
  });
});

describe("telemetry from the Action", { timeout: 240_000 }, () => {
  let github: FakeGitHub | undefined;
  afterEach(async () => {
    await github?.close();
  });

  it("exports the same names over http/protobuf, with the repository, the event and the issue", async () => {
    github = await startFakeGitHub({
      token: GITHUB_TOKEN,
      permissions: { octocat: "write" },
      issues: [{ number: 12, title: "add() returns the wrong sum", body: "b", user: { login: "octocat" } }],
    });
    const collector = await startOtlpHttpReceiver();
    receivers.push(collector);
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
      env: { ...telemetryEnv(collector.url, "http/protobuf"), ANTHROPIC_API_KEY: API_KEY },
    }));
    const result = await action();
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
});

// The temp folders the runs made are the OS's to clean; nothing here is left running.
void os;
