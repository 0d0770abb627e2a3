// Telemetry without an engine: the settings as Claude Code reads its variables, and a recorded run's record
// (test/fixtures/claude-code-telemetry/agent-ci-report.json, the CLI's run of the reference session) exported
// over OTLP/gRPC to a loopback collector (@grpc/grpc-js serving opentelemetry-proto's services), with a
// subagent's call, an egress connection and attempts added, and the opt-ins off; and the bound a collector that
// never answers puts on the run's end, on the clock the export's own timers run on.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseReport, type RunReport } from "../../src/report/index.js";
import { exportRunTelemetry } from "../../src/telemetry/index.js";
import {
  batchOptions,
  exporterOptions,
  readerOptions,
  SHUTDOWN_BUDGET_MS,
} from "../../src/telemetry/sdk-providers.js";
import { readTelemetrySettings } from "../../src/telemetry/settings.js";
import { type OtlpReceiver, startOtlpGrpcReceiver, startOtlpHttpReceiver } from "../support/otlp-receiver.js";

const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const recorded = (): RunReport =>
  parseReport(
    fs.readFileSync(path.resolve("test/fixtures/claude-code-telemetry/agent-ci-report.json"), "utf8"),
  );

describe("telemetry settings", () => {
  it("is off without CLAUDE_CODE_ENABLE_TELEMETRY=1, or with no exporter", () => {
    expect(readTelemetrySettings({ OTEL_METRICS_EXPORTER: "otlp" })).toBeUndefined();
    expect(readTelemetrySettings({ CLAUDE_CODE_ENABLE_TELEMETRY: "1" })).toBeUndefined();
  });

  it("reads per-signal protocols, endpoints and headers over the shared ones, as the specification says", () => {
    const settings = readTelemetrySettings({
      CLAUDE_CODE_ENABLE_TELEMETRY: "1",
      OTEL_METRICS_EXPORTER: "otlp",
      OTEL_LOGS_EXPORTER: "console",
      OTEL_TRACES_EXPORTER: "otlp,prometheus",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "grpc",
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example/",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/in",
      OTEL_EXPORTER_OTLP_HEADERS: "x-key=abc%3Ddef,bad",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-trace=1",
      OTEL_METRIC_EXPORT_INTERVAL: "soon",
      OTEL_RESOURCE_ATTRIBUTES: "team=demo,env=ci",
      OTEL_LOG_USER_PROMPTS: "1",
    });
    expect(settings?.signals.metrics).toMatchObject({
      kind: "otlp",
      protocol: "grpc",
      url: "https://collector.example/",
      intervalMs: 60_000,
    });
    expect(settings?.signals.logs).toMatchObject({ kind: "console", protocol: "http/json" });
    expect(settings?.signals.traces).toMatchObject({
      url: "https://traces.example/in",
      headers: { "x-key": "abc=def", "x-trace": "1" },
    });
    expect(settings?.resourceAttributes).toEqual({ team: "demo", env: "ci" });
    expect(settings?.logUserPrompts).toBe(true);
    expect(settings?.logToolDetails).toBe(false);
    expect(settings?.headerValues.sort()).toEqual(["1", "abc=def"]);
    expect(settings?.problems).toHaveLength(3);
  });
});

/** The recorded run with a Task call whose subagent made a Read, and one egress connection. */
function withSubagentAndEgress(report: RunReport): RunReport {
  const read = report.toolCalls[0]!;
  const task = { ...read, id: "toolu_task", tool: "Task", input: { subagent_type: "Explore" }, index: 4 };
  const child = { ...read, id: "toolu_child", index: 5, parentToolUseId: "toolu_task", agent: "Explore" };
  return {
    ...report,
    toolCalls: [...report.toolCalls, task, child],
    egress: {
      allowed: ["registry.npmjs.org"],
      allowedHosts: ["registry.npmjs.org"],
      privateHosts: [],
      connections: [
        {
          host: "evil.example",
          port: 443,
          kind: "connect",
          decision: "denied",
          reason: "not in the allowlist",
          bytesUp: 0,
          bytesDown: 0,
          startedAt: report.startedAt,
          durationMs: 1,
          caller: "toolu_script_2_0",
        },
      ],
    },
  };
}

describe("telemetry export over OTLP/gRPC", () => {
  it("is the CLI's alone: without the grpc exporters (the Action's bundle) it warns once, naming OTLP/HTTP", async () => {
    const warnings: string[] = [];
    await exportRunTelemetry({
      report: recorded(),
      outDir: fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-telemetry-")),
      origin: {},
      env: {
        CLAUDE_CODE_ENABLE_TELEMETRY: "1",
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
      },
      secrets: [],
      warn: (line) => warnings.push(line),
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("OTEL_EXPORTER_OTLP_PROTOCOL to http/protobuf");
  });

  it("nests a subagent's call under its Task call, tells egress, and sends no input or prompt unasked", async () => {
    const collector = await startOtlpGrpcReceiver();
    receivers.push(collector);
    const warnings: string[] = [];
    const report = withSubagentAndEgress(recorded());
    const prompt = "fix add; the password is hunter2-canary";
    await exportRunTelemetry({
      report,
      outDir: fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-telemetry-")),
      origin: { prompt, repository: "octo/calc", event: "pull_request", pullRequest: 7 },
      env: {
        CLAUDE_CODE_ENABLE_TELEMETRY: "1",
        OTEL_METRICS_EXPORTER: "otlp",
        OTEL_LOGS_EXPORTER: "otlp",
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      },
      secrets: ["hunter2-canary"],
      warn: (line) => warnings.push(line),
      grpc: () => import("../../src/telemetry/otlp-grpc.js"),
    });
    await collector.waitFor(["traces", "logs", "metrics"]);
    const { spans, logs, points, raw } = collector.received;
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const child = spans.find(
      (s) => s.name === "claude_code.tool" && s.attributes.tool_use_id === "toolu_child",
    );
    const parent = byId.get(child?.parentSpanId ?? "");
    expect(parent?.name).toBe("claude_code.tool.execution");
    expect(byId.get(parent?.parentSpanId ?? "")?.attributes["gen_ai.tool.name"]).toBe("Task");
    expect(child?.attributes["agent_ci.agent"]).toBe("Explore");
    const egress = logs.find((l) => l.attributes["event.name"] === "agent_ci.egress_connection");
    expect(egress?.attributes).toMatchObject({
      "agent_ci.egress.host": "evil.example",
      "agent_ci.egress.decision": "denied",
      "agent_ci.pull_request.number": 7,
    });
    expect(points.some((p) => p.metric === "agent_ci.egress.bytes")).toBe(true);
    // Not opted in: no prompt, no tool input, no file path or command.
    const sent = Buffer.concat(raw.map((r) => r.body)).toString("latin1");
    expect(sent).not.toContain("hunter2");
    expect(sent).not.toContain("fix add");
    expect(sent).not.toContain("/workspace/calc.js");
    expect(sent).not.toContain("rm -rf");
    expect(logs.find((l) => l.attributes["event.name"] === "user_prompt")?.attributes.prompt).toBeUndefined();
    // At most the one line a loaded machine may cause (the collector past the end's budget).
    expect(warnings.length).toBeLessThanOrEqual(1);
  });

  it("puts each attempt's conversation under one run span", async () => {
    const collector = await startOtlpGrpcReceiver();
    receivers.push(collector);
    const base = recorded();
    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-telemetry-"));
    for (const k of [1, 2]) {
      fs.mkdirSync(path.join(outDir, `attempt-${k}`));
      fs.writeFileSync(
        path.join(outDir, `attempt-${k}`, "report.json"),
        JSON.stringify({ ...base, runId: `${base.runId}-a${k}` }),
      );
    }
    const attempt = (k: number) => ({
      attempt: k,
      dir: `attempt-${k}`,
      runId: `${base.runId}-a${k}`,
      started: true,
      exitReason: "completed" as const,
      outcome: "changes" as const,
      verify: "not_run" as const,
      deniedCalls: 1,
      changedLines: 2,
      turns: 5,
      costUsd: 0,
    });
    await exportRunTelemetry({
      report: {
        ...base,
        attempts: [attempt(1), attempt(2)],
        chosen: { attempt: 2, reason: "r", verified: false },
      },
      outDir,
      origin: {},
      env: {
        CLAUDE_CODE_ENABLE_TELEMETRY: "1",
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      },
      secrets: [],
      warn: () => undefined,
      grpc: () => import("../../src/telemetry/otlp-grpc.js"),
    });
    await collector.waitFor(["traces"]);
    const { spans } = collector.received;
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const runs = spans.filter((s) => s.name === "agent_ci.run");
    expect(runs).toHaveLength(1);
    const interactions = spans.filter((s) => s.name === "claude_code.interaction");
    expect(interactions.map((s) => s.attributes["gen_ai.conversation.id"]).sort()).toEqual([
      `${base.runId}-a1`,
      `${base.runId}-a2`,
    ]);
    for (const i of interactions) {
      const attemptSpan = byId.get(i.parentSpanId);
      expect(attemptSpan?.name).toBe("agent_ci.attempt");
      expect(attemptSpan?.parentSpanId).toBe(runs[0]?.spanId);
    }
  });
});

/** Every signal over OTLP to `endpoint`, each as often as the SDK allows: nothing waits on an interval. */
const allSignals = (endpoint: string, protocol: string) => ({
  CLAUDE_CODE_ENABLE_TELEMETRY: "1",
  OTEL_METRICS_EXPORTER: "otlp",
  OTEL_LOGS_EXPORTER: "otlp",
  OTEL_TRACES_EXPORTER: "otlp",
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
});

describe("a collector that never answers", () => {
  it("costs the run's end at most SHUTDOWN_BUDGET_MS, within a second: every timeout the SDK is given is within it", () => {
    expect(SHUTDOWN_BUDGET_MS).toBeLessThanOrEqual(1000);
    const settings = readTelemetrySettings(allSignals("http://127.0.0.1:9", "http/protobuf"));
    for (const signal of Object.values(settings?.signals ?? {})) {
      expect(exporterOptions(signal).timeoutMillis).toBeLessThanOrEqual(SHUTDOWN_BUDGET_MS);
      expect(batchOptions(signal).exportTimeoutMillis).toBeLessThanOrEqual(SHUTDOWN_BUDGET_MS);
      expect(readerOptions(signal).exportTimeoutMillis).toBeLessThanOrEqual(SHUTDOWN_BUDGET_MS);
    }
    expect(Object.keys(settings?.signals ?? {}).sort()).toEqual(["logs", "metrics", "traces"]);
  });

  it("holds the export open, and the export ends with one warning once the clock moves SHUTDOWN_BUDGET_MS", async () => {
    const collector = await startOtlpHttpReceiver("never");
    receivers.push(collector);
    // The export's own timers (the end's race, the SDK's export timeouts) on a clock the test moves; the
    // sockets' I/O stays real.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const warnings: string[] = [];
    let ended = false;
    const exported = exportRunTelemetry({
      report: recorded(),
      outDir: fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-telemetry-")),
      origin: {},
      env: allSignals(collector.url, "http/protobuf"),
      secrets: [],
      warn: (line) => warnings.push(line),
    }).then(() => (ended = true));
    // The end's wait has begun once a request reached the collector (it is sent by the flush at the end).
    await collector.waitForAny();
    expect(collector.held.length).toBeGreaterThan(0);
    await vi.advanceTimersByTimeAsync(SHUTDOWN_BUDGET_MS);
    // Once what the timers started has run (microtasks only), the export has ended.
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toBe(true);
    await exported;
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^agent-ci: telemetry: /);
  });
});
