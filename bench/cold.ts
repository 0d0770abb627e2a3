// Cold and warm starts, as a fresh CI runner meets them: from an engine that has only the base image to
// the first tool call's answer. The cold builds run with the build cache off, under tags and a volume of
// their own (removed afterwards), so nothing another run on this engine uses is removed or rebuilt.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { DockerSandbox, newRunId } from "../src/sandbox/docker-sandbox.js";
import { createDockerClient } from "../src/sandbox/engine/docker-client.js";
import { DEFAULT_BASE_IMAGE, ensureBuilt, sandboxRecipe } from "../src/sandbox/image/image.js";
import { readPrebuiltRecord } from "../src/sandbox/image/prebuilt.js";
import { ensureToolbelt } from "../src/sandbox/image/toolbelt.js";
import { hasRegistryProgram, LocalRegistry } from "../test/support/local-registry.js";
import { hasCommand } from "../test/support/host-command.js";
import { canRunSecondEngine, SecondEngine } from "../test/support/second-engine.js";
import { fake, startFakeAnthropic, type FakeAnthropic } from "../test/support/fake-anthropic.js";
import { CLI_NODE, summarize, type Row } from "./stats.js";
import { parseReport, type RunReport } from "../src/report/index.js";

const COLD_TAG = "agent-ci-bench-cold";
/** Milliseconds as seconds, for the log and the notes (`6.59`). */
const seconds = (ms: number): string => (ms / 1000).toFixed(2);
const CLI = path.resolve("bin/agent-ci.js");
/** The fake Messages API's key, assembled at run time. */
const BENCH_KEY = ["sk", "ant", "api03", "bench", String(process.pid)].join("-");

/** One start to the first tool call's answer (`true` through the helper), the container removed after. */
async function firstCall(
  workspaceDir: string,
  image: string | undefined,
  toolbeltVolume?: string,
): Promise<number> {
  const t0 = performance.now();
  const sandbox = await DockerSandbox.start({ runId: newRunId(), workspaceDir, image, toolbeltVolume });
  try {
    const res = await sandbox.exec({ argv: ["true"] });
    if (res.exitCode !== 0) throw new Error("the first call failed");
    return performance.now() - t0;
  } finally {
    await sandbox.dispose();
  }
}

export async function benchColdStarts(workspaceDir: string, log: (line: string) => void): Promise<Row[]> {
  const docker = createDockerClient();
  const section = "Cold start (to the first tool call)";
  const coldVolume = `${COLD_TAG}-toolbelt-${newRunId().slice(-6)}`;
  const rows: Row[] = [];
  try {
    log("cold start: the default image and the toolbelt built from the base image, build cache off");
    let t0 = performance.now();
    const image = await ensureBuilt(docker, sandboxRecipe(), undefined, {
      tag: `${COLD_TAG}:sandbox`,
      noCache: true,
    });
    const volume = await ensureToolbelt(docker, undefined, {
      tag: `${COLD_TAG}:toolbelt`,
      noCache: true,
      volume: coldVolume,
    });
    const coldDefault = performance.now() - t0 + (await firstCall(workspaceDir, image, volume));
    log("cold start: a user image (the base image itself), toolbelt not yet built");
    await docker.getVolume(coldVolume).remove();
    await docker.getImage(`${COLD_TAG}:toolbelt`).remove();
    t0 = performance.now();
    const volume2 = await ensureToolbelt(docker, undefined, {
      tag: `${COLD_TAG}:toolbelt`,
      noCache: true,
      volume: coldVolume,
    });
    const coldUser = performance.now() - t0 + (await firstCall(workspaceDir, DEFAULT_BASE_IMAGE, volume2));
    log("warm starts: the user image with the toolbelt built, and the default image");
    const userWarm = await firstCall(workspaceDir, DEFAULT_BASE_IMAGE);
    await firstCall(workspaceDir, undefined);
    const warm = await firstCall(workspaceDir, undefined);
    rows.push(
      {
        section,
        measurement: "default image, cold: base image only → images built, container up, first call answered",
        unit: "ms",
        agentCi: coldDefault,
        native: warm,
        note: "native column: the warm start (everything built)",
      },
      {
        section,
        measurement: "user image (`debian:bookworm-slim`), toolbelt not yet built",
        unit: "ms",
        agentCi: coldUser,
        native: warm,
        note: "native column: the warm start",
      },
      {
        section,
        measurement: "user image, toolbelt already built (its volume filled)",
        unit: "ms",
        agentCi: userWarm,
        native: warm,
        note: "native column: the warm start with the default image",
      },
    );
  } finally {
    await docker
      .getVolume(coldVolume)
      .remove()
      .catch(() => {});
    for (const tag of ["sandbox", "toolbelt"])
      await docker
        .getImage(`${COLD_TAG}:${tag}`)
        .remove()
        .catch(() => {});
  }
  return rows;
}

/** The CLI's stream of events on stdout: the first tool result is the first tool call answered. */
const FIRST_RESULT = /"type":"tool_result"/;

/** A CLI run's first call: from the process's start to its answer, and the run's own record. */
interface FirstCall {
  ms: number;
  report: RunReport;
}

/** The run phases that come after the sandbox is ready. */
const AFTER_START = new Set(["calls", "patch", "verify", "teardown"]);

/**
 * When the run's first tool call waited for, from its own record (ms from its startedAt): the sandbox ready
 * (the end of its start's last phase), the first model turn answered (a turn asked ahead), and the call's start.
 */
function firstCallTimes({ report }: FirstCall): {
  ready: number;
  answered: number | undefined;
  callStart: number;
} {
  const start = (report.phases ?? []).filter((p) => !AFTER_START.has(p.name));
  const turn = report.firstTurn?.overlapped ? report.turns[0] : undefined;
  return {
    ready: Math.max(...start.map((p) => p.startOffsetMs + p.durationMs)),
    answered: turn && turn.startOffsetMs + turn.durationMs,
    callStart: report.toolCalls[0]!.startOffsetMs,
  };
}

/**
 * `agent-ci run` on an engine, from the process's start to the first tool call's answer (a Bash `true`),
 * then to its end, which must be a success; the stderr lines are logged.
 */
async function cliFirstCall(
  workspaceDir: string,
  env: NodeJS.ProcessEnv,
  args: string[],
  log: (line: string) => void,
  model?: FakeAnthropic,
): Promise<FirstCall> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-bench-cold-"));
  try {
    const script = path.join(dir, "script.json");
    fs.writeFileSync(script, JSON.stringify({ turns: [[{ name: "Bash", input: { command: "true" } }]] }));
    const argv = [CLI, "run", "--workspace", workspaceDir, "--out", path.join(dir, "out")];
    argv.push(...(model ? ["--prompt", "Run true."] : ["--script", script]));
    argv.push("--mode", "bypassPermissions", "--output-format", "stream-json");
    if (model) env = { ...env, ANTHROPIC_API_KEY: BENCH_KEY, ANTHROPIC_BASE_URL: model.url };
    // The progress lines as JSON on stderr (with stream-json on stdout there are none otherwise): the pulls'.
    argv.push("--progress", "json", ...args);
    const t0 = performance.now();
    const child = spawn(CLI_NODE, argv, { env: { ...process.env, ...env } });
    let answered: number | undefined;
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8");
      if (answered === undefined && FIRST_RESULT.test(stdout)) answered = performance.now() - t0;
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    for (const line of stderr.split("\n").filter((l) => /pull|build|fail/i.test(l))) log(`  ${line}`);
    if (code !== 0 || answered === undefined)
      throw new Error(`agent-ci run exited ${code} before answering its first call:\n${stderr.slice(-2000)}`);
    const report = parseReport(fs.readFileSync(path.join(dir, "out", "report.json"), "utf8"));
    return { ms: answered, report };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** An image's compressed size in the registry: its manifest's layers (one platform's manifest). */
async function compressedBytes(registry: string, repository: string, digest: string): Promise<number> {
  const res = await fetch(`http://${registry}/v2/${repository}/manifests/${digest}`, {
    headers: { Accept: "application/vnd.docker.distribution.manifest.v2+json" },
  });
  const manifest = (await res.json()) as { layers?: { size: number }[] };
  return (manifest.layers ?? []).reduce((n, l) => n + l.size, 0);
}

/** Removes every container, image and volume of an engine: the next run finds it as a fresh runner's. */
async function emptyEngine(engine: Docker): Promise<void> {
  for (const c of await engine.listContainers({ all: true }))
    await engine.getContainer(c.Id).remove({ force: true });
  for (const image of await engine.listImages())
    await engine
      .getImage(image.Id)
      .remove({ force: true })
      .catch(() => {});
  for (const volume of (await engine.listVolumes()).Volumes ?? [])
    await engine.getVolume(volume.Name).remove();
}

/** Cold starts per image in the registry section: each on an engine emptied again, so none is favoured. */
export const REGISTRY_COLD_RUNS = 3;
/** The goals for the first call on an empty engine, images pulled from a registry. */
export const REGISTRY_COLD_GOAL_MS = { defaultImage: 10_000, userImage: 4_000 };

/** The lines of the CLI's progress that say how long each pull took, for the log. */
const PULLED = /pulled .*? in [0-9.]+ s/;

/** The machine's CPU time so far, idle and in all (/proc/stat's first line, in ticks), where Linux has it. */
function cpuTicks(): { idle: number; total: number } | undefined {
  try {
    const fields = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9);
    const ticks = fields.map(Number);
    return { idle: ticks[3]! + ticks[4]!, total: ticks.reduce((a, b) => a + b, 0) };
  } catch {
    return undefined;
  }
}

/**
 * How much of the machine was idle between two readings: a pull is CPU work (decompression, digests,
 * unpacking), so a cold start that rises from run to run on a shared machine goes with this falling.
 */
function idleShare(before: ReturnType<typeof cpuTicks>, after: ReturnType<typeof cpuTicks>): string {
  if (!before || !after || after.total === before.total) return "idle share unknown";
  return `machine ${((100 * (after.idle - before.idle)) / (after.total - before.total)).toFixed(0)}% idle, load ${os.loadavg()[0]!.toFixed(1)}`;
}

/** What dockerd decompresses image layers with: unpigz where one is on the PATH it inherits, else Go's gzip. */
function layerDecompressor(): string {
  return hasCommand("unpigz") ? "unpigz" : "Go's gzip (no unpigz on the PATH: apt-get install pigz)";
}

/**
 * Cold starts as a hosted runner would meet them with the prebuilt images: Debian's docker-registry on
 * loopback, agent-ci's images published to it by scripts/publish-images.sh, and a second engine that
 * starts empty and pulls them by digest. Timed through the CLI, from its start to the first tool call's
 * answer, REGISTRY_COLD_RUNS times for each image, the engine emptied before each (the user image's runs
 * find the base image loaded, as a runner that already pulled it). Also the images' compressed sizes and
 * the time to fill the toolbelt's volume.
 */
export async function benchRegistryColdStarts(
  workspaceDir: string,
  log: (line: string) => void,
): Promise<Row[]> {
  const section = "Cold start (to the first tool call)";
  return withColdEngine(
    log,
    "registry cold starts",
    async ({ registry, engine: second, recordFile, env }) => {
      const record = readPrebuiltRecord(recordFile);
      log(`registry cold starts: the engine decompresses layers with ${layerDecompressor()}`);
      const coldRuns = async (what: string, args: string[], prepare: () => Promise<void>) => {
        const times: number[] = [];
        for (let i = 1; i <= REGISTRY_COLD_RUNS; i++) {
          await emptyEngine(second.client);
          await prepare();
          const pulls: string[] = [];
          const before = cpuTicks();
          const { ms } = await cliFirstCall(workspaceDir, env, args, (line) => {
            const pulled = PULLED.exec(line);
            if (pulled) pulls.push(pulled[0]);
          });
          times.push(ms);
          log(
            `registry cold start, ${what}, run ${i}: ${seconds(ms)} s (${[...pulls, idleShare(before, cpuTicks())].join("; ")})`,
          );
        }
        return times;
      };
      const coldDefault = await coldRuns("default image", [], async () => {});
      const { ms: warmDefault } = await cliFirstCall(workspaceDir, env, [], log);
      const coldUser = await coldRuns("user image", ["--image", DEFAULT_BASE_IMAGE], () =>
        second.loadImage(DEFAULT_BASE_IMAGE),
      );
      const toolbelt = record.images.toolbelt!;
      const sandbox = record.images.sandbox!;
      const toolbeltBytes = await compressedBytes(registry.address, toolbelt.repository, toolbelt.digest);
      const sandboxBytes = await compressedBytes(registry.address, sandbox.repository, sandbox.digest);
      // The volume's fill alone: the toolbelt image is on the shared engine; a new volume is filled from it.
      const docker = createDockerClient();
      const fillVolume = `${COLD_TAG}-fill-${newRunId().slice(-6)}`;
      const t0 = performance.now();
      await ensureToolbelt(docker, undefined, { volume: fillVolume });
      const fill = performance.now() - t0;
      await docker.getVolume(fillVolume).remove();
      const mib = (bytes: number) => bytes / 1024 ** 2;
      const runs = (times: number[]) => {
        const s = summarize(times);
        return `${times.length} runs, min / median / max ${seconds(s.min)} / ${seconds(s.median)} / ${seconds(s.max)} s (in order: ${times.map(seconds).join(", ")})`;
      };
      const goal = (ms: number) => `goal ≤ ${ms / 1000} s`;
      return [
        {
          section,
          measurement:
            "default image, cold, **pulled by digest** from a registry on loopback: empty engine → first call answered (`agent-ci run`)",
          unit: "ms",
          agentCi: summarize(coldDefault),
          native: warmDefault,
          note: `${runs(coldDefault)}; native column: the same run again, images present; ${goal(REGISTRY_COLD_GOAL_MS.defaultImage)}`,
        },
        {
          section,
          measurement:
            "user image (`debian:bookworm-slim`, on the engine), toolbelt **pulled by digest**: → first call answered (`agent-ci run`)",
          unit: "ms",
          agentCi: summarize(coldUser),
          native: warmDefault,
          note: `${runs(coldUser)}; native column: a warm run; ${goal(REGISTRY_COLD_GOAL_MS.userImage)}`,
        },
        {
          section,
          measurement: "the default image's compressed size (registry layers)",
          unit: "MiB",
          agentCi: mib(sandboxBytes),
          native: null,
        },
        {
          section,
          measurement: "the toolbelt's compressed size (registry layers)",
          unit: "MiB",
          agentCi: mib(toolbeltBytes),
          native: null,
        },
        {
          section,
          measurement: "the toolbelt's volume filled from its image (the engine's copy-up)",
          unit: "ms",
          agentCi: fill,
          native: null,
        },
      ];
    },
  );
}

/** An empty second engine that pulls agent-ci's images by digest from a registry on loopback. */
interface ColdEngine {
  registry: LocalRegistry;
  engine: SecondEngine;
  recordFile: string;
  /** The environment a CLI run on that engine gets. */
  env: NodeJS.ProcessEnv;
}

/**
 * Runs `measure` with Debian's docker-registry on loopback, agent-ci's images published to it by
 * scripts/publish-images.sh, and a second engine that starts empty; no rows where these cannot run.
 */
async function withColdEngine(
  log: (line: string) => void,
  what: string,
  measure: (cold: ColdEngine) => Promise<Row[]>,
): Promise<Row[]> {
  if (!canRunSecondEngine || !hasRegistryProgram()) {
    log(`${what} left out: they need root, dockerd, ip and Debian's docker-registry`);
    return [];
  }
  const registry = new LocalRegistry();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-bench-registry-"));
  const recordFile = path.join(dir, "images.json");
  let engine: SecondEngine | undefined;
  try {
    await registry.start();
    log(`${what}: publishing agent-ci's images to ${registry.address}`);
    execFileSync("bash", ["scripts/publish-images.sh", registry.address, "--out", recordFile], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    engine = new SecondEngine({
      bridge: "aci-bnbr0",
      bridgeAddress: "10.213.79.1/24",
      insecureRegistries: [registry.address],
    });
    await engine.start();
    const env = { DOCKER_HOST: engine.dockerHost, AGENT_CI_IMAGES_FILE: recordFile };
    return await measure({ registry, engine, recordFile, env });
  } finally {
    await engine?.cleanup();
    await registry.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The first turn's latency the overlap is measured with: a typical first response. */
export const FIRST_TURN_MS = 3000;

const OVERLAP_SECTION = "First tool result, first turn overlapped with a cold start";
/** The overlap's row from the runs' own records: what the first call waited for past the slower of the two. */
export const OVERLAP_WAIT_ROW =
  "· in each run's own record: its first call began after the slower of its sandbox's start and its first turn";
/** The records count whole milliseconds: the waits of two runs are compared within this. */
export const OVERLAP_SLACK_MS = 5;

/**
 * The first model turn overlapped with the sandbox's start (docs/first-turn.md), on an empty engine that pulls
 * the default image by digest: `agent-ci run` against the fake Messages API answering its first turn after
 * 3 s with one Bash call, from the process's start to that call's answer; next to the sum the two would make
 * one after the other (the same cold start, scripted, plus 3 s). The goal: max(pull + start, 3 s) + call.
 * Cold pulls differ by seconds from one run to the next, so the two kinds alternate, REGISTRY_COLD_RUNS
 * times each, the engine emptied before each run, and their medians are compared.
 */
export async function benchFirstTurnOverlap(
  workspaceDir: string,
  log: (line: string) => void,
): Promise<Row[]> {
  return withColdEngine(log, "the overlapped first turn", async ({ engine, env }) => {
    const api = await startFakeAnthropic({
      apiKey: BENCH_KEY,
      turns: Array.from({ length: REGISTRY_COLD_RUNS }, () => [
        fake.toolUse("Bash", { command: "true" }, { delayMs: FIRST_TURN_MS }),
        fake.text("Done."),
      ]).flat(),
    });
    try {
      const scripted: FirstCall[] = [];
      const overlapped: FirstCall[] = [];
      /** Each scripted run's first call after its sandbox; each overlapped run's times. */
      const scriptedWaits: number[] = [];
      const overlappedTimes: Array<{ ready: number; answered: number; wait: number }> = [];
      for (let i = 1; i <= REGISTRY_COLD_RUNS; i++) {
        await emptyEngine(engine.client);
        const alone = await cliFirstCall(workspaceDir, env, [], log);
        await emptyEngine(engine.client);
        const withTurn = await cliFirstCall(workspaceDir, env, [], log, api);
        scripted.push(alone);
        overlapped.push(withTurn);
        const [o, a] = [firstCallTimes(withTurn), firstCallTimes(alone)];
        if (o.answered === undefined)
          throw new Error(
            `overlapped run ${i} did not ask its first turn ahead: ${withTurn.report.firstTurn?.reason}`,
          );
        const wait = o.callStart - Math.max(o.ready, o.answered);
        const scriptedWait = a.callStart - a.ready;
        scriptedWaits.push(scriptedWait);
        overlappedTimes.push({ ready: o.ready, answered: o.answered, wait });
        log(
          `overlapped first turn, run ${i}: scripted cold start ${seconds(alone.ms)} s (its call began ${scriptedWait} ms after its sandbox was ready), with a ${FIRST_TURN_MS} ms first turn ${seconds(withTurn.ms)} s (its sandbox ready at ${o.ready} ms, its first turn answered at ${o.answered} ms, its call began ${wait} ms after the slower of the two)`,
        );
      }
      const scriptedMedian = summarize(scripted.map((r) => r.ms)).median;
      const goal = Math.max(scriptedMedian, FIRST_TURN_MS);
      const median = (values: number[]) => summarize(values).median;
      return [
        {
          section: OVERLAP_SECTION,
          measurement: `default image pulled by digest on an empty engine, first turn ${FIRST_TURN_MS / 1000} s → first tool result (\`agent-ci run\`)`,
          unit: "ms",
          agentCi: summarize(overlapped.map((r) => r.ms)),
          native: summarize(scripted.map((r) => r.ms + FIRST_TURN_MS)),
          note: `${REGISTRY_COLD_RUNS} runs of each, alternated; native column: one after the other (the scripted cold start, median ${Math.round(scriptedMedian)} ms, + ${FIRST_TURN_MS / 1000} s); max(pull + start, 3 s) + call ≈ ${Math.round(goal)} ms, with the scripted runs' pulls`,
        },
        {
          section: OVERLAP_SECTION,
          measurement: OVERLAP_WAIT_ROW,
          unit: "ms",
          agentCi: summarize(overlappedTimes.map((t) => t.wait)),
          native: summarize(scriptedWaits),
          note: `native column: a scripted run's first call after its sandbox's start; in the overlapped runs the sandbox was ready at ${seconds(median(overlappedTimes.map((t) => t.ready)))} s and the first turn answered at ${seconds(median(overlappedTimes.map((t) => t.answered)))} s (medians, from the run's start)`,
        },
      ];
    } finally {
      await api.close();
    }
  });
}
