// Cold and warm starts, as a fresh CI runner meets them: from an engine that has only the base image to
// the first tool call's answer. The cold builds run with the build cache off, under tags and a volume of
// their own (removed afterwards), so nothing another run on this engine uses is removed or rebuilt.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { DockerSandbox, newRunId } from "../src/sandbox/docker-sandbox.js";
import { createDockerClient } from "../src/sandbox/docker-client.js";
import { DEFAULT_BASE_IMAGE, ensureBuilt, sandboxRecipe } from "../src/sandbox/image.js";
import { readPrebuiltRecord } from "../src/sandbox/prebuilt.js";
import { ensureToolbelt } from "../src/sandbox/toolbelt.js";
import { hasRegistryProgram, LocalRegistry } from "../test/support/local-registry.js";
import { canRunSecondEngine, SecondEngine } from "../test/support/second-engine.js";
import { fake, startFakeAnthropic, type FakeAnthropic } from "../test/support/fake-anthropic.js";
import type { Row } from "./stats.js";

const COLD_TAG = "agent-ci-bench-cold";
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
): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-bench-cold-"));
  try {
    const script = path.join(dir, "script.json");
    fs.writeFileSync(script, JSON.stringify({ turns: [[{ name: "Bash", input: { command: "true" } }]] }));
    const argv = [CLI, "run", "--workspace", workspaceDir, "--out", path.join(dir, "out")];
    argv.push(...(model ? ["--prompt", "Run true."] : ["--script", script]));
    argv.push("--mode", "bypassPermissions", "--output-format", "stream-json", ...args);
    if (model) env = { ...env, ANTHROPIC_API_KEY: BENCH_KEY, ANTHROPIC_BASE_URL: model.url };
    const t0 = performance.now();
    const child = spawn(process.execPath, argv, { env: { ...process.env, ...env } });
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
    return answered;
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

/**
 * Cold starts as a hosted runner would meet them with the prebuilt images: Debian's docker-registry on
 * loopback, agent-ci's images published to it by scripts/publish-images.sh, and a second engine that
 * starts empty and pulls them by digest. Timed through the CLI, from its start to the first tool call's
 * answer. Also the toolbelt's compressed size and the time to fill its volume.
 */
export async function benchRegistryColdStarts(
  workspaceDir: string,
  log: (line: string) => void,
): Promise<Row[]> {
  return withColdEngine(log, "registry cold starts", (cold) => registryColdRows(workspaceDir, log, cold));
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

async function registryColdRows(
  workspaceDir: string,
  log: (line: string) => void,
  { registry, engine, recordFile, env }: ColdEngine,
): Promise<Row[]> {
  const section = "Cold start (to the first tool call)";
  const record = readPrebuiltRecord(recordFile);
  log("registry cold start: the default image, on an empty engine");
  const coldDefault = await cliFirstCall(workspaceDir, env, [], log);
  const warmDefault = await cliFirstCall(workspaceDir, env, [], log);
  log("registry cold start: a user image (the base image, already on the engine), toolbelt pulled");
  await emptyEngine(engine.client);
  await engine.loadImage(DEFAULT_BASE_IMAGE);
  const coldUser = await cliFirstCall(workspaceDir, env, ["--image", DEFAULT_BASE_IMAGE], log);
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
  return [
    {
      section,
      measurement:
        "default image, cold, **pulled by digest** from a registry on loopback: empty engine → first call answered (`agent-ci run`)",
      unit: "ms",
      agentCi: coldDefault,
      native: warmDefault,
      note: `native column: the same run again, images present; goal ≤ 15 s; compressed: sandbox ${mib(sandboxBytes).toFixed(0)} MiB, toolbelt ${mib(toolbeltBytes).toFixed(0)} MiB`,
    },
    {
      section,
      measurement:
        "user image (`debian:bookworm-slim`, on the engine), toolbelt **pulled by digest**: → first call answered (`agent-ci run`)",
      unit: "ms",
      agentCi: coldUser,
      native: warmDefault,
      note: "native column: a warm run; goal ≤ 10 s",
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
}

/** The first turn's latency the overlap is measured with: a typical first response. */
const FIRST_TURN_MS = 3000;

/**
 * The first model turn overlapped with the sandbox's start (docs/first-turn.md), on an empty engine that pulls
 * the default image by digest: `agent-ci run` against the fake Messages API answering its first turn after
 * 3 s with one Bash call, from the process's start to that call's answer; next to the sum the two would make
 * one after the other (the same cold start, scripted, plus 3 s). The goal: max(pull + start, 3 s) + call.
 */
export async function benchFirstTurnOverlap(
  workspaceDir: string,
  log: (line: string) => void,
): Promise<Row[]> {
  return withColdEngine(log, "the overlapped first turn", async ({ engine, env }) => {
    log("overlapped first turn: a scripted cold start (pull + start + call), on an empty engine");
    const scripted = await cliFirstCall(workspaceDir, env, [], log);
    await emptyEngine(engine.client);
    log(`overlapped first turn: a model run whose first turn takes ${FIRST_TURN_MS} ms, on an empty engine`);
    const api = await startFakeAnthropic({
      apiKey: BENCH_KEY,
      turns: [fake.toolUse("Bash", { command: "true" }, { delayMs: FIRST_TURN_MS }), fake.text("Done.")],
    });
    try {
      const overlapped = await cliFirstCall(workspaceDir, env, [], log, api);
      const goal = Math.max(scripted, FIRST_TURN_MS);
      return [
        {
          section: "First tool result, first turn overlapped with a cold start",
          measurement: `default image pulled by digest on an empty engine, first turn ${FIRST_TURN_MS / 1000} s → first tool result (\`agent-ci run\`)`,
          unit: "ms",
          agentCi: overlapped,
          native: scripted + FIRST_TURN_MS,
          note: `native column: one after the other (the scripted cold start, ${Math.round(scripted)} ms, + ${FIRST_TURN_MS / 1000} s); goal max(pull + start, 3 s) + call ≈ ${Math.round(goal)} ms`,
        },
      ];
    } finally {
      await api.close();
    }
  });
}
