// The first model turn is asked while the sandbox opens (docs/first-turn.md): on the real engine, the first
// request reaches the fake Messages API before the engine starts the run's container (an ordering of the
// engine's own events against the fake's), and every way the run can end around it ends cleanly — the
// sandbox failing or a cancel with the request in flight (the request aborted), the model failing while the
// sandbox opens, and a first turn that answers with text alone.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import Docker from "dockerode";
import { afterEach, describe, expect, it } from "vitest";
import { parseReport, type RunReport } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { runAgent, type RunOutcome } from "../../src/runner/run.js";
import { LABEL_PID, LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { fake, startFakeAnthropic, type FakeAnthropic, type FakeTurn } from "../support/fake-anthropic.js";
import { makeWorkspace } from "../support/workspace.js";

const docker = new Docker();
const FAKE_KEY = ["sk", "ant", "api03", "firstTurnFAKE", crypto.randomBytes(12).toString("hex")].join("-");

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fakeApi(turns: FakeTurn[]): Promise<FakeAnthropic> {
  const api = await startFakeAnthropic({ apiKey: FAKE_KEY, turns });
  servers.push(api);
  return api;
}

function run(
  api: FakeAnthropic,
  input: Partial<RunConfigInput> = {},
  cancel?: AbortSignal,
): Promise<RunOutcome> {
  const config = parseRunConfig({
    workspace: makeWorkspace({ "a.txt": "one\n" }),
    out: fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-first-turn-")),
    mode: "bypassPermissions",
    apiKey: FAKE_KEY,
    baseURL: api.url,
    prompt: "Read a.txt.",
    ...input,
  } as RunConfigInput);
  return runAgent(config, { stdout: () => {}, stderr: () => {}, progress: false }, cancel);
}

/** What every run leaves: the patch, a valid report, and no container of its own. */
async function expectRecord(outcome: RunOutcome): Promise<RunReport> {
  expect(fs.existsSync(outcome.patchPath)).toBe(true);
  const report = parseReport(fs.readFileSync(path.join(outcome.outDir, "report.json"), "utf8"));
  expect(report.exitReason).toBe(outcome.exitReason);
  const left = await docker.listContainers({
    all: true,
    filters: { label: [`${LABEL_RUN}=${outcome.runId}`] },
  });
  expect(left).toEqual([]);
  return report;
}

/** The engine's `start` events for this process's containers, as the engine stamps them (epoch ms by run). */
async function watchContainerStarts(): Promise<{ starts: Map<string, number>; stop: () => void }> {
  const stream = (await docker.getEvents({
    filters: { type: ["container"], event: ["start"], label: [`${LABEL_PID}=${process.pid}`] },
  })) as unknown as Readable;
  const starts = new Map<string, number>();
  let pending = "";
  stream.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines.filter(Boolean)) {
      const event = JSON.parse(line) as { timeNano: number; Actor?: { Attributes?: Record<string, string> } };
      const runId = event.Actor?.Attributes?.[LABEL_RUN];
      if (runId && !starts.has(runId)) starts.set(runId, event.timeNano / 1e6);
    }
  });
  return { starts, stop: () => stream.destroy() };
}

/**
 * Runs with the engine's events watched; `requestBeforeStart` is true when the first request reached the fake
 * before the engine started the run's container (by the engine's stamp and the fake's).
 */
async function runWatched(
  api: FakeAnthropic,
  input: Partial<RunConfigInput> = {},
  cancel?: AbortSignal,
): Promise<{ outcome: RunOutcome; requestBeforeStart: () => Promise<boolean> }> {
  const engine = await watchContainerStarts();
  const arrived = api.messagesArrival(0);
  const outcome = await run(api, input, cancel).finally(() => engine.stop());
  const requestBeforeStart = async () => {
    const started = engine.starts.get(outcome.runId);
    expect(started, "the engine reported the run's container starting").toBeDefined();
    return (await arrived).receivedAt < (started as number);
  };
  return { outcome, requestBeforeStart };
}

describe("the first model turn overlaps the sandbox's start", { timeout: 120_000 }, () => {
  it("sends the first request before the engine starts the run's container, and uses its answer", async () => {
    const api = await fakeApi([fake.toolUse("Read", { file_path: "/workspace/a.txt" }), fake.text("Done.")]);
    const { outcome, requestBeforeStart } = await runWatched(api);
    expect(outcome.exitReason, outcome.error).toBe("completed");
    const report = await expectRecord(outcome);
    expect(await requestBeforeStart()).toBe(true);
    // The early answer was the loop's first turn: two requests in all, the first call ran on it.
    expect(api.messagesRequests()).toHaveLength(2);
    expect(report.toolCalls.map((c) => [c.tool, c.turn])).toEqual([["Read", 0]]);
    expect(report.firstTurn).toEqual({ overlapped: true });
  });

  it("completes when the first turn answers with text alone", async () => {
    const api = await fakeApi([fake.text("Nothing to change.")]);
    const { outcome, requestBeforeStart } = await runWatched(api);
    expect(outcome.exitReason, outcome.error).toBe("completed");
    expect(outcome.finalMessage).toBe("Nothing to change.");
    const report = await expectRecord(outcome);
    expect(await requestBeforeStart()).toBe(true);
    expect(report.firstTurn).toEqual({ overlapped: true });
    expect(report.toolCalls).toEqual([]);
    expect(report.patch.empty).toBe(true);
    expect(api.messagesRequests()).toHaveLength(1);
  });

  it("ends with the sandbox's failure, the first request in flight aborted", async () => {
    // The answer waits until the run gives up on it.
    const api = await fakeApi([fake.text("never sent", { until: new Promise(() => {}) })]);
    // The engine answers, then the image cannot be pulled (this machine reaches no registry).
    const outcome = await run(api, { image: "agent-ci-first-turn-missing:never" });
    expect(outcome.exitReason).toBe("engine_error");
    const report = await expectRecord(outcome);
    expect(report.firstTurn).toEqual({
      overlapped: false,
      reason: "the run ended before its first turn",
    });
    // The request may not have left before the pull failed; one that reached the fake was abandoned.
    if (api.messagesRequests().length) await api.messagesAborted(0);
  });

  it("ends cancelled with the first request in flight: aborted, recorded, no container", async () => {
    const api = await fakeApi([fake.text("never sent", { until: new Promise(() => {}) })]);
    const cancel = new AbortController();
    void api.messagesArrival(0).then(() => cancel.abort(new Error("cancelled by the test")));
    const { outcome, requestBeforeStart } = await runWatched(api, {}, cancel.signal);
    expect(outcome.exitReason).toBe("cancelled");
    await expectRecord(outcome);
    await api.messagesAborted(0);
    // Cancelled while the container was still starting: the run waited for it, then removed it.
    expect(await requestBeforeStart()).toBe(true);
  });

  it("ends with api_error when the model fails while the sandbox opens", async () => {
    const api = await fakeApi([
      fake.httpError(400, { type: "invalid_request_error", message: "messages: something is wrong" }),
    ]);
    const { outcome, requestBeforeStart } = await runWatched(api);
    expect(outcome.exitReason).toBe("api_error");
    expect(outcome.error).toMatch(/something is wrong/);
    const report = await expectRecord(outcome);
    expect(await requestBeforeStart()).toBe(true);
    expect(report.toolCalls).toEqual([]);
    expect(api.messagesRequests()).toHaveLength(1);
  });
});
