// RELIABILITY D4, the engine restarted mid-run. Restarting the shared engine would break every other test
// file running at the same time, so this file starts a second dockerd of its own (own data root, exec root,
// socket and bridge; no iptables), loads the sandbox image into it, and kills and restarts that daemon while
// a run's command is in flight. The run must end as engine_error with its record (earlier calls kept, the
// in-flight call marked interrupted), and the container it could not remove while the engine was down must
// be reaped by the next start. Where a second daemon cannot be started (not root, no dockerd or ip), the
// restart is simulated by removing the container mid-call, and the test's name says so. The second engine
// (test/support/second-engine.ts) gets a bridge of its own, and the test checks docker0 afterwards.
import { execFileSync, spawnSync } from "node:child_process";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { EXIT_CODES } from "../../src/runner/run.js";
import { defaultImageTag, recipeTag } from "../../src/sandbox/image/image.js";
import { toolbeltRecipe } from "../../src/sandbox/image/toolbelt.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { canRunSecondEngine, SecondEngine } from "../support/second-engine.js";
import { docker, until, useHarness, type CliHandle, type ScriptCall } from "./harness.js";
import { rowTester, type Row } from "./rows.js";

const ROWS = [
  { id: "D4", what: "the engine restarted while a command runs", kind: "fault" },
] as const satisfies readonly Row[];

const h = useHarness();
const { test, checkTable } = rowTester(ROWS);
const bash = (command: string): ScriptCall => ({ name: "Bash", input: { command } });

const canRunSecondDaemon = canRunSecondEngine && process.env.AGENT_CI_SIMULATE_ENGINE_RESTART !== "1";

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function containerOn(engine: Docker, runId: string) {
  return (await engine.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } }))[0];
}

async function inFlight(engine: Docker, handle: CliHandle, marker: string): Promise<string> {
  const info = await until(
    "the run's container",
    async () => (handle.runId() ? containerOn(engine, handle.runId()!) : undefined),
    60_000,
  );
  await until(`"${marker}" running`, async () => {
    const top = await engine
      .getContainer(info.Id)
      .top({ ps_args: "-eo pid,args" })
      .catch(() => undefined);
    return top?.Processes?.some((p: string[]) => p.join(" ").includes(marker)) ? true : undefined;
  });
  return info.Id;
}

describe.sequential("D4: the engine restarted mid-run", () => {
  let daemon: SecondEngine | undefined;

  beforeAll(async () => {
    if (!canRunSecondDaemon) return;
    daemon = new SecondEngine({ bridge: "aci-d2br0", bridgeAddress: "10.213.77.1/24" });
    await daemon.start();
    // No registry: the default image and agent-ci's toolbelt built on the main engine are copied over.
    for (const tag of [defaultImageTag(), recipeTag(toolbeltRecipe())]) await daemon.loadImage(tag);
  }, 240_000);

  afterAll(async () => {
    await daemon?.cleanup();
    // The shared engine was never touched; make sure it still answers, with its bridge.
    execFileSync("bash", ["scripts/ensure-engine.sh"], {
      stdio: "pipe",
      env: { ...process.env, CI: "true" },
    });
    await docker.ping();
    if (canRunSecondDaemon) expect(spawnSync("ip", ["link", "show", "docker0"]).status).toBe(0);
  }, 120_000);

  if (canRunSecondDaemon) {
    test(
      "D4",
      "the engine restarted mid-call (a second dockerd, killed and started again): engine_error, record kept, the orphan reaped on the next start",
      async () => {
        const d = daemon!;
        const ws = h.workspace({ "a.txt": "a\n" });
        const handle = h.startCli({
          workspace: ws,
          mode: "bypassPermissions",
          env: { DOCKER_HOST: d.dockerHost },
          turns: [
            [{ name: "Write", input: { file_path: "/workspace/kept.txt", content: "kept\n" } }],
            [bash("sleep 1000000090")],
            [bash("echo never")],
          ],
        });
        await inFlight(d.client, handle, "sleep 1000000090");
        const pid = await d.stop();
        expect(pidAlive(pid)).toBe(false);
        const run = await handle.done;
        await d.start();
        expect(run.exitCode).toBe(EXIT_CODES.engine_error);
        expect(run.report?.exitReason).toBe("engine_error");
        expect(run.calls.map((c) => [c.tool, c.errorKind ?? "ok"])).toEqual([
          ["Write", "ok"],
          ["Bash", "interrupted"],
        ]);
        expect(run.report?.warnings).toContainEqual(
          expect.objectContaining({ kind: "patch", message: expect.stringMatching(/no patch/) }),
        );
        // The next start on the restarted engine reaps what the dead run could not remove.
        const next = await h.cli({
          workspace: ws,
          env: { DOCKER_HOST: d.dockerHost },
          turns: [[bash("echo next")]],
        });
        expect(next.report?.exitReason).toBe("completed");
        expect(await containerOn(d.client, run.runId!)).toBeUndefined();
      },
      180_000,
    );
  } else {
    test(
      "D4",
      "the engine restarted mid-call (simulated: the container removed from outside, no second dockerd here): engine_error, record kept",
      async () => {
        const ws = h.workspace({ "a.txt": "a\n" });
        const handle = h.startCli({
          workspace: ws,
          mode: "bypassPermissions",
          turns: [
            [{ name: "Write", input: { file_path: "/workspace/kept.txt", content: "kept\n" } }],
            [bash("sleep 1000000091")],
          ],
        });
        const id = await inFlight(docker, handle, "sleep 1000000091");
        await docker.getContainer(id).remove({ force: true });
        const run = await handle.done;
        expect(run.exitCode).toBe(EXIT_CODES.engine_error);
        expect(run.calls.map((c) => [c.tool, c.errorKind ?? "ok"])).toEqual([
          ["Write", "ok"],
          ["Bash", "interrupted"],
        ]);
      },
      120_000,
    );
  }

  checkTable();
});
