// The Actions Runner Controller's topology (`containerMode: dind`): the engine runs in a container of its
// own (Debian's docker.io, privileged, built from the local base image), reached over TCP with mutual TLS,
// with its own file system, and agent-ci runs outside it. The engine sees none of this host's paths: the
// workspace, the helper's socket directory and the copier's list are not there for it. agent-ci finds that
// out by what the engine answers (a bind source it cannot find), never by a name or a variable; the copy-in
// and the helper then go through the engine's API. Both entries are driven: the CLI and the Action's run().
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseReport, type RunReport } from "../../src/report/index.js";
import { EXIT_CODES } from "../../src/runner/run.js";
import { STREAM_BELOW_BYTES } from "../../src/sandbox/copy/copy-in.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { DEFAULT_BASE_IMAGE, ensureBuilt, folderFiles, recipeTag } from "../../src/sandbox/image/image.js";
import { toolbeltRecipe } from "../../src/sandbox/image/toolbelt.js";
import { until } from "../adversarial/harness.js";
import { calcWorkspace, CALC_BEFORE, runAction, scriptFile } from "../support/action-harness.js";
import { startCli, type CliProcess } from "../support/cli-process.js";
import {
  hostAddressForContainers,
  startOriginServers,
  type OriginServers,
} from "../support/egress-servers.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { ENGINE_SERVER, makeCa, makeCert } from "../support/tls-certs.js";
import { tempOut } from "../support/run-io.js";

const host = new Docker();
/** The run's image inside the engine: Debian's base, loaded (the toolbelt brings everything agent-ci runs). */
const IMAGE = DEFAULT_BASE_IMAGE;
const DIND_RECIPE = {
  what: "the Docker-in-Docker test image",
  repository: "agent-ci-test-dind",
  files: folderFiles(path.resolve("test/fixtures/images/dind")),
  baseImage: DEFAULT_BASE_IMAGE,
  label: "test-dind",
};

const root = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-dind-"));
const certs = {
  ca: path.join(root, "ca"),
  server: path.join(root, "server"),
  client: path.join(root, "client"),
};
let dind: Docker.Container;
let engine: Docker;
let engineEnv: Record<string, string>;
let origins: OriginServers;

const CGROUP_PARENT = `agent-ci-dind-${process.pid}`;

/** Linux's capabilities by number (linux/capability.h), as Docker names them. */
const CAPABILITIES =
  "CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF CHECKPOINT_RESTORE".split(
    " ",
  );

/** The capabilities this machine's root does not have (its bounding set): a container cannot get them. */
function missingCapabilities(): string[] {
  const hex = /^CapBnd:\s*([0-9a-f]+)$/m.exec(fs.readFileSync("/proc/self/status", "utf8"))?.[1] ?? "0";
  const bounding = BigInt(`0x${hex}`);
  return CAPABILITIES.filter((_, bit) => ((bounding >> BigInt(bit)) & 1n) === 0n);
}

/** Removes the inner engine's cgroups (empty once its containers are gone), deepest first. */
function removeCgroups(): void {
  for (const controller of fs.readdirSync("/sys/fs/cgroup")) {
    const dir = path.join("/sys/fs/cgroup", controller, CGROUP_PARENT);
    if (!fs.existsSync(dir)) continue;
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true }))
        if (e.isDirectory()) walk(path.join(d, e.name));
      fs.rmdirSync(d);
    };
    walk(dir);
  }
}

function pipeImage(tag: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const save = spawn("docker", ["save", tag], { stdio: ["ignore", "pipe", "inherit"] });
    const load = spawn("docker", ["load", "-q"], {
      stdio: ["pipe", "ignore", "inherit"],
      env: { ...process.env, ...engineEnv },
    });
    save.stdout.pipe(load.stdin);
    load.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`docker load of ${tag} exited ${code}`)),
    );
    save.on("exit", (code) => code === 0 || reject(new Error(`docker save of ${tag} exited ${code}`)));
  });
}

interface CliRun {
  exitCode: number | null;
  stderr: string;
  report: RunReport | undefined;
  patch: string;
}

/** `agent-ci run` against the DinD engine, its record read from `outDir` once it ends. */
function startRun(args: string[], outDir: string): { child: CliProcess["child"]; done: Promise<CliRun> } {
  const cli = startCli(["run", "--out", outDir, "--image", IMAGE, ...args], {
    ...engineEnv,
    ANTHROPIC_API_KEY: "",
  });
  const done = cli.done.then(({ code, stderr }): CliRun => {
    const read = (name: string) =>
      fs.existsSync(path.join(outDir, name)) ? fs.readFileSync(path.join(outDir, name), "utf8") : "";
    const json = read("report.json");
    return {
      exitCode: code,
      stderr,
      report: json ? parseReport(json) : undefined,
      patch: read("patch.diff"),
    };
  });
  return { child: cli.child, done };
}

/** What a run left on the DinD engine: containers and volumes with agent-ci's run label. */
async function leftovers(): Promise<string[]> {
  const containers = await engine.listContainers({ all: true, filters: { label: [LABEL_RUN] } });
  const { Volumes: volumes } = await engine.listVolumes({ filters: { label: [LABEL_RUN] } });
  return [...containers.map((c) => c.Names[0] ?? c.Id), ...(volumes ?? []).map((v) => v.Name)];
}

beforeAll(async () => {
  makeCa(certs.ca, "agent-ci dind CA");
  makeCert(certs.ca, certs.server, ENGINE_SERVER, "agent-ci-server");
  makeCert(certs.ca, certs.client, "client", "agent-ci-client");
  const image = await ensureBuilt(host, DIND_RECIPE);
  dind = await host.createContainer({
    Image: image,
    Cmd: [
      `--cgroup-parent=/${CGROUP_PARENT}`,
      "--host=tcp://0.0.0.0:2376",
      "--tlsverify",
      "--tlscacert=/certs/ca.pem",
      "--tlscert=/certs/cert.pem",
      "--tlskey=/certs/key.pem",
    ],
    Labels: { "agent-ci.test": "dind" },
    ExposedPorts: { "2376/tcp": {} },
    // What `--privileged` gives, spelled out: where the machine's own root lacks a capability (this one has
    // no CAP_SYS_RESOURCE), runc refuses --privileged ("unable to apply caps"). Every capability the
    // machine has, no seccomp or AppArmor profile, every device, and the cgroup tree writable (v1 has no
    // cgroup namespace: the inner engine's containers go under a parent of their own, removed after).
    HostConfig: {
      CapAdd: ["ALL"],
      CapDrop: missingCapabilities(),
      SecurityOpt: ["seccomp=unconfined", "apparmor=unconfined"],
      DeviceCgroupRules: ["a *:* rwm"],
      Tmpfs: { "/run": "" },
      PortBindings: { "2376/tcp": [{ HostIp: "127.0.0.1", HostPort: "" }] },
      Binds: [`${certs.server}:/certs:ro`, "/sys/fs/cgroup:/sys/fs/cgroup:rw"],
    },
  });
  await dind.start();
  const port = (await dind.inspect()).NetworkSettings.Ports["2376/tcp"]?.[0]?.HostPort;
  engineEnv = {
    DOCKER_HOST: `tcp://127.0.0.1:${port}`,
    DOCKER_TLS_VERIFY: "1",
    DOCKER_CERT_PATH: certs.client,
  };
  const read = (name: string) => fs.readFileSync(path.join(certs.client, name));
  engine = new Docker({
    host: "127.0.0.1",
    port: Number(port),
    protocol: "https",
    ca: read("ca.pem"),
    cert: read("cert.pem"),
    key: read("key.pem"),
  });
  await until(
    "the engine in its container to answer over mutual TLS",
    () =>
      engine
        .ping()
        .then(() => true)
        .catch(() => undefined),
    120_000,
    250,
  );
  // The engine has none of this host's images: the run's image and agent-ci's toolbelt are loaded, as a
  // runner's engine would pull them.
  await Promise.all([pipeImage(IMAGE), pipeImage(recipeTag(toolbeltRecipe()))]);
  // The origin on the host engine's bridge: the inner engine's containers reach it through their engine's NAT.
  origins = await startOriginServers(await hostAddressForContainers(host));
}, 600_000);

afterAll(async () => {
  await origins?.close();
  await dind?.remove({ force: true, v: true }).catch(() => undefined);
  removeCgroups();
  fs.rmSync(root, { recursive: true, force: true });
});

let workspace: string;
let outDir: string;
beforeEach(() => {
  workspace = calcWorkspace();
  outDir = tempOut();
});
afterEach(async () => {
  expect(await leftovers()).toEqual([]);
  fs.rmSync(outDir, { recursive: true, force: true });
});

describe("agent-ci with its engine in a container (Actions Runner Controller, containerMode: dind)", () => {
  it("runs against a workspace the engine cannot see: copy-in, helper, allowlist, patch and verify", async () => {
    // The premise, checked: the engine's file system has no such path.
    const exec = await dind.exec({ Cmd: ["test", "-e", workspace], AttachStdout: true });
    await (await exec.start({})).resume();
    expect(await until("the check's exit", async () => (await exec.inspect()).ExitCode ?? undefined)).toBe(1);
    // Large enough that a copier container is tried first (a small tree is streamed without one).
    fs.writeFileSync(path.join(workspace, "large.bin"), Buffer.alloc(STREAM_BELOW_BYTES));
    // The origin on this host's bridge, by a name the sidecar maps (`--allow-private-host NAME=ADDRESS`).
    const name = "origin.dind.test";
    const origin = `${name}:${origins.httpPort}`;
    const script = scriptFile([
      [{ name: "Read", input: { file_path: "/workspace/src/calc.js" } }],
      [
        {
          name: "Bash",
          input: {
            command: `node -e "require('http').get({host:'127.0.0.1',port:3128,path:'http://${origin}/dind',headers:{host:'${origin}'}},r=>{let b='';r.on('data',d=>b+=d);r.on('end',()=>console.log(r.statusCode,b.length>0))})"`,
          },
        },
      ],
      [
        {
          name: "Edit",
          input: { file_path: "/workspace/src/calc.js", old_string: "a - b", new_string: "a + b" },
        },
      ],
    ]);
    const run = await startRun(
      [
        "--workspace",
        workspace,
        "--script",
        script,
        "--mode",
        "bypassPermissions",
        "--network",
        "allowlist",
        "--allow-domain",
        origin,
        "--allow-private-host",
        `${name}=${origins.address}`,
        "--verify",
        "grep -q 'a + b' src/calc.js",
      ],
      outDir,
    ).done;
    expect(run.exitCode, run.stderr).toBe(EXIT_CODES.completed);
    expect(run.stderr).toMatch(/copy-in: the engine does not see this host's files/);
    const calls = run.report?.toolCalls ?? [];
    expect(calls.map((c) => [c.tool, c.exitCode ?? null])).toEqual([
      ["Read", null],
      ["Bash", 0],
      ["Edit", null],
    ]);
    expect(run.report?.egress?.connections.map((c) => c.decision)).toEqual(["allowed"]);
    expect(origins.seen, JSON.stringify([run.report?.egress, calls[1]])).toContain(`http://${name}/dind`);
    expect(run.report?.hardening?.runtime).toBe("runc");
    expect(run.report?.hardening?.egressRuntime).toBe("runc");
    expect(run.report?.verify).toMatchObject({ applied: true, exitCode: 0 });
    expect(run.patch).toContain("+  return a + b;");
    expect(fs.readFileSync(path.join(workspace, "src/calc.js"), "utf8")).toBe(CALC_BEFORE);
  }, 300_000);

  it("cancels a run in flight: the record is written and nothing is left on the engine", async () => {
    const script = scriptFile([[{ name: "Bash", input: { command: "echo started; sleep 600" } }]]);
    const cli = startRun(
      ["--workspace", workspace, "--script", script, "--mode", "bypassPermissions"],
      outDir,
    );
    // The engine's `top` runs ps where the engine is (its container has none): look from inside the run's.
    const probe = [
      "/opt/agent-ci/bin/bash",
      "-c",
      "for f in /proc/[0-9]*/cmdline; do /opt/agent-ci/bin/tr '\\0' ' ' < $f; echo; done 2>/dev/null",
    ];
    await until(
      "the sleep in the run's container",
      async () => {
        for (const c of await engine.listContainers({ filters: { label: [LABEL_RUN] } })) {
          const exec = await engine
            .getContainer(c.Id)
            .exec({ Cmd: probe, AttachStdout: true, AttachStderr: true });
          const stream = await exec.start({});
          const chunks: Buffer[] = [];
          stream.on("data", (d: Buffer) => chunks.push(d));
          await new Promise((resolve) => stream.on("end", resolve));
          if (Buffer.concat(chunks).toString("latin1").includes("sleep 600")) return true;
        }
        return undefined;
      },
      180_000,
      500,
    );
    cli.child.kill("SIGINT");
    const run = await cli.done;
    expect(run.exitCode, run.stderr).toBe(EXIT_CODES.cancelled);
    expect(run.report?.exitReason).toBe("cancelled");
  }, 300_000);

  it("asked for gVisor on an engine without it, fails at start saying how to get it", async () => {
    const script = scriptFile([[{ name: "Bash", input: { command: "true" } }]]);
    const run = await startRun(["--workspace", workspace, "--script", script, "--runtime", "runsc"], outDir)
      .done;
    expect(run.exitCode).toBe(EXIT_CODES.engine_error);
    expect(run.report?.error?.message).toMatch(
      /has no OCI runtime named runsc \(it has: [^)]*runc[^)]*\): install gVisor .*AGENT_CI_RUNTIMES=runsc/,
    );
  }, 300_000);
});

describe("the Action's entry with its engine in a container", () => {
  // A token-shaped value, assembled here rather than written out.
  const token = ["ghs", "_", "dind".repeat(9)].join("");
  let fake: FakeGitHub;
  beforeEach(async () => {
    fake = await startFakeGitHub({
      token,
      permissions: { octocat: "write" },
      issues: [{ number: 12, title: "add() returns the wrong sum", body: "b", user: { login: "octocat" } }],
    });
  });
  afterEach(async () => {
    await fake.close();
  });

  it("runs the fix on a workspace the engine cannot see and hands back the patch", async () => {
    const script = scriptFile([
      [{ name: "Read", input: { file_path: "/workspace/src/calc.js" } }],
      [
        {
          name: "Edit",
          input: { file_path: "/workspace/src/calc.js", old_string: "a - b", new_string: "a + b" },
        },
      ],
    ]);
    const result = await runAction({
      fixture: "issues-opened",
      apiUrl: fake.url,
      workspace,
      inputs: {
        github_token: token,
        script,
        image: IMAGE,
        permission_mode: "acceptEdits",
        verify: "grep -q 'a + b' src/calc.js",
      },
      env: engineEnv,
    });
    expect(result.failed).toBeUndefined();
    expect(result.outputs).toMatchObject({
      exit_reason: "completed",
      outcome: "changes",
      changed_files: "1",
    });
    expect(fs.readFileSync(result.outputs.patch_path ?? "", "utf8")).toContain("+  return a + b;");
  }, 300_000);
});
