// The run's container under gVisor (`--runtime runsc`) next to the engine's default (runc), on the same
// repository: the sandbox's ready time, and the per-call cost of the helper's round trip and of a Read.
// A runtime the engine has not registered gets a row saying so (scripts/ensure-engine.sh registers runsc
// with AGENT_CI_RUNTIMES=runsc).
import { DockerSandbox, newRunId } from "../src/sandbox/docker-sandbox.js";
import { createDockerClient } from "../src/sandbox/engine/docker-client.js";
import { paired, type Row, summarize } from "./stats.js";

const OTHER = "runsc";
const START_REPS = 5;
const CALL_REPS = 40;

async function start(workspaceDir: string, runtime: string | undefined): Promise<DockerSandbox> {
  return DockerSandbox.start({ runId: newRunId(), workspaceDir, runtime });
}

export async function benchRuntimes(
  workspaceDir: string,
  readTarget: string,
  log: (line: string) => void,
): Promise<Row[]> {
  const section = `OCI runtime: ${OTHER} (agent-ci column) next to runc (native column)`;
  const info = (await createDockerClient().info()) as { Runtimes?: Record<string, unknown> };
  if (!Object.keys(info.Runtimes ?? {}).includes(OTHER)) {
    log(`runtimes: the engine has no ${OTHER}; its rows are empty`);
    const note = `the engine has no ${OTHER} runtime (AGENT_CI_RUNTIMES=${OTHER} bash scripts/ensure-engine.sh)`;
    return [{ section, measurement: "sandbox ready", unit: "ms", agentCi: null, native: null, note }];
  }
  log(`runtimes: ${START_REPS} starts each under ${OTHER} and runc, alternating`);
  const ready = { other: [] as number[], runc: [] as number[] };
  for (let i = 0; i < START_REPS; i++) {
    for (const [key, runtime] of [
      ["other", OTHER],
      ["runc", undefined],
    ] as const) {
      const sandbox = await start(workspaceDir, runtime);
      ready[key].push(sandbox.timings.readyMs);
      await sandbox.dispose();
    }
  }
  const rows: Row[] = [
    {
      section,
      measurement: "sandbox ready (create to baseline)",
      unit: "ms",
      agentCi: summarize(ready.other),
      native: summarize(ready.runc),
    },
  ];
  const other = await start(workspaceDir, OTHER);
  const runc = await start(workspaceDir, undefined);
  try {
    log(`runtimes: ${CALL_REPS} calls each, alternating`);
    const target = `${other.root}/${readTarget}`;
    const exec = (s: DockerSandbox) => () => s.exec({ argv: ["true"] });
    const calls = await paired(CALL_REPS, 3, exec(other), exec(runc));
    const read = (s: DockerSandbox) => () => s.readFile(target);
    const reads = await paired(CALL_REPS, 3, read(other), read(runc));
    const status = (s: DockerSandbox) => () => s.exec({ argv: ["git", "status", "--short"] });
    const statuses = await paired(Math.ceil(CALL_REPS / 4), 1, status(other), status(runc));
    rows.push(
      {
        section,
        measurement: "per call: `true` through the helper (spawn and wait)",
        unit: "ms",
        agentCi: summarize(calls.a),
        native: summarize(calls.b),
      },
      {
        section,
        measurement: `per call: readFile of ${readTarget}`,
        unit: "ms",
        agentCi: summarize(reads.a),
        native: summarize(reads.b),
      },
      {
        section,
        measurement: "per call: `git status --short` over the repository",
        unit: "ms",
        agentCi: summarize(statuses.a),
        native: summarize(statuses.b),
      },
    );
  } finally {
    await Promise.all([other.dispose(), runc.dispose()]);
  }
  return rows;
}
