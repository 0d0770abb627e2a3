// The OCI runtime of the run's container, read back: the one asked for (AGENT_CI_RUNTIME, set when
// scripts/test.sh runs this file again under runsc; else the engine's runc), and a start refused when the
// engine started another one. Under gVisor the agent's commands see gVisor's kernel, and the egress
// sidecar stays on runc.
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandbox, newRunId } from "../../src/sandbox/docker-sandbox.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { EngineError } from "../../src/sandbox/sandbox.js";
import { startDockerProxy, type DockerProxy } from "../adversarial/docker-proxy.js";
import { makeWorkspace } from "../support/workspace.js";

const asked = process.env.AGENT_CI_RUNTIME || undefined;
const expected = asked ?? "runc";
const docker = new Docker();

describe(`the run's container under ${expected}`, () => {
  let sandbox: DockerSandbox;
  const runId = newRunId();
  beforeAll(async () => {
    const workspace = makeWorkspace({ "a.txt": "a\n" });
    sandbox = await DockerSandbox.start({
      runId,
      workspaceDir: workspace,
      network: "allowlist",
      egress: { given: ["example.test"], rules: [], privateHosts: [], hosts: {}, injections: [] },
    });
  }, 120_000);
  afterAll(async () => {
    await sandbox?.dispose();
  });

  it("is read back as the runtime asked for; the egress sidecar stays on the engine's default", async () => {
    expect(sandbox.hardening.runtime).toBe(expected);
    expect(sandbox.hardening.egressRuntime).toBe("runc");
    expect(sandbox.hardening.missing).toEqual([]);
    const info = await docker.getContainer(`agent-ci-${runId}`).inspect();
    expect(info.HostConfig.Runtime).toBe(expected);
  });

  it("runs the agent's commands on the kernel that runtime gives", async () => {
    const res = await sandbox.exec({ script: "dmesg 2>&1 | head -n 1; true" });
    const first = res.stdout.toString("utf8");
    // gVisor prints its own boot log; on the host's kernel an unprivileged dmesg is refused or shows Linux's.
    if (expected === "runsc") expect(first).toMatch(/Starting gVisor/);
    else expect(first).not.toMatch(/gVisor/);
  });
});

describe("a runtime asked for and not given", () => {
  let proxy: DockerProxy;
  const saved = process.env.DOCKER_HOST;
  // The engine is made to start the container under another runtime it has: runc when runsc was asked
  // for; when runc was, another one registered (scripts/test.sh registers runsc before the tests).
  let other: string | undefined;
  beforeAll(async () => {
    if (!asked) {
      const info = (await docker.info()) as { Runtimes?: Record<string, unknown> };
      other = Object.keys(info.Runtimes ?? {}).find((r) => r !== "runc" && !r.startsWith("io.containerd."));
      if (!other)
        throw new Error(
          "this test needs a second OCI runtime registered with the engine: AGENT_CI_RUNTIMES=runsc bash scripts/ensure-engine.sh",
        );
    }
    proxy = await startDockerProxy({
      rewriteCreate: (body) => {
        const hostConfig = { ...(body.HostConfig as Record<string, unknown>) };
        if (hostConfig.Runtime !== expected) return body; // the egress sidecar, the copier
        if (other) hostConfig.Runtime = other;
        else delete hostConfig.Runtime;
        return { ...body, HostConfig: hostConfig };
      },
    });
    process.env.DOCKER_HOST = proxy.dockerHost;
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
    await proxy?.close();
  });

  it("refuses to start, --allow-weak-hardening or not, and leaves nothing", async () => {
    const runId = newRunId();
    const start = DockerSandbox.start({
      runId,
      workspaceDir: makeWorkspace({ "a.txt": "a\n" }),
      runtime: expected,
      allowWeakHardening: true,
    });
    await expect(start).rejects.toThrow(EngineError);
    await expect(start).rejects.toThrow(
      new RegExp(
        `asked to run under the OCI runtime ${expected} and the engine started it under ${other ?? "runc"}: refusing to start`,
      ),
    );
    const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } });
    expect(left).toEqual([]);
  });
});
