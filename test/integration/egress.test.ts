// `--network allowlist` against the real engine, on loopback only: origin servers on this host's bridge
// address under names the sidecar maps (`--allow-private-host NAME=ADDRESS`, the documented way to a
// private host), curl in the sandbox through the proxy, and every way around it tried and failing.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerSandbox, newRunId } from "../../src/sandbox/docker-sandbox.js";
import { egressOptions } from "../../src/sandbox/egress/allowlist.js";
import { egressMount, egressNames } from "../../src/sandbox/egress/sidecar.js";
import { LABEL_RUN, reapOrphans } from "../../src/sandbox/engine/engine.js";
import {
  hostAddressForContainers,
  type OriginServers,
  startOriginServers,
} from "../support/egress-servers.js";
import { runCli as runAgentCi } from "../support/cli-process.js";
import { makeWorkspace } from "../support/workspace.js";
import { parseReport } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { runAgent } from "../../src/runner/run.js";
import { quietIo } from "../support/run-io.js";
import { until } from "../support/until.js";

/** This host's trusted CAs (Debian's bundle), passed on with --ca-cert. */
const HOST_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

const docker = new Docker();

describe("a sandbox with --network allowlist", () => {
  let sandbox: DockerSandbox;
  let origins: OriginServers;
  let host: string;
  const runId = newRunId();

  beforeAll(async () => {
    host = await hostAddressForContainers(docker);
    origins = await startOriginServers(host);
    const workspace = makeWorkspace({ "README.md": "egress\n" });
    sandbox = await DockerSandbox.start({
      runId,
      workspaceDir: workspace,
      network: "allowlist",
      caCertPem: fs.readFileSync(origins.caFile, "utf8"),
      egress: egressOptions(["allowed.test", "localhost"], [`allowed.test=${host}`, `blocked.test=${host}`]),
    });
  });
  afterAll(async () => {
    await sandbox?.dispose();
    await origins?.close();
    expect(await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } })).toEqual(
      [],
    );
    expect((await docker.listVolumes({ filters: { label: [`${LABEL_RUN}=${runId}`] } })).Volumes).toEqual([]);
  });

  const sh = async (script: string, caller = "toolu_test") => {
    const res = await sandbox.exec({ script, mergeStderr: true, timeoutMs: 60_000, caller });
    return { code: res.exitCode, out: res.stdout.toString("utf8") };
  };
  const ledger = async () => {
    await sandbox.egress?.sync();
    return sandbox.egress?.entries ?? [];
  };

  it("reaches an allowed name over HTTP and HTTPS through the proxy, tagged with the calling tool call", async () => {
    expect(await sh(`curl -sS http://allowed.test:${origins.httpPort}/plain`, "toolu_http")).toEqual({
      code: 0,
      out: "hello from allowed.test over http\n",
    });
    expect(await sh(`curl -sS https://allowed.test:${origins.httpsPort}/tls`, "toolu_https")).toEqual({
      code: 0,
      out: "hello from allowed.test over https\n",
    });
    const entries = await ledger();
    expect(entries.find((e) => e.caller === "toolu_http")).toMatchObject({
      host: "allowed.test",
      kind: "http",
      decision: "allowed",
      address: host,
      attributedBy: "credentials",
    });
    expect(entries.find((e) => e.caller === "toolu_https")).toMatchObject({
      host: "allowed.test",
      kind: "connect",
      decision: "allowed",
    });
  });

  it("has a connection in the ledger, tagged with its call by process, while it is still open", async () => {
    // A background client holds its tunnel open (stdin never ends): the ledger has it without waiting for
    // the tunnel to close, as a call that ended now would read it.
    await sandbox.startBackground("held", {
      script: `sleep 600 | openssl s_client -proxy 127.0.0.1:3128 -connect allowed.test:${origins.httpsPort} -servername allowed.test 2>&1`,
      caller: "toolu_held",
    });
    let output = "";
    await until("the held tunnel's TLS handshake", async () => {
      output += (await sandbox.readBackground("held")).output.toString("utf8");
      return /Verify return code/.test(output);
    });
    try {
      expect((await ledger()).filter((e) => e.caller === "toolu_held")).toMatchObject([
        { host: "allowed.test", kind: "connect", decision: "allowed", attributedBy: "process" },
      ]);
    } finally {
      await sandbox.killBackground("held");
    }
  });

  it("refuses a name off the allowlist with the policy's message", async () => {
    const plain = await sh(`curl -sS http://blocked.test:${origins.httpPort}/`, "toolu_blocked");
    expect(plain.out).toContain("agent-ci's network policy refused blocked.test");
    const tls = await sh(`curl -sS https://blocked.test:${origins.httpsPort}/`, "toolu_blocked_tls");
    expect(tls.code).not.toBe(0);
    expect(tls.out).toMatch(/CONNECT tunnel failed, response 403/);
    const entries = await ledger();
    expect(
      entries.filter((e) => e.caller?.startsWith("toolu_blocked")).map((e) => [e.kind, e.decision, e.reason]),
    ).toEqual([
      ["http", "denied", "not on the allowlist"],
      ["connect", "denied", "not on the allowlist"],
    ]);
    expect(origins.seen.some((s) => s.includes("blocked.test"))).toBe(false);
  });

  it.each([
    ["an IP literal", () => `curl -sS -k https://${host}:${origins.httpsPort}/`, /IP address/],
    ["the metadata address", () => "curl -sS http://169.254.169.254/latest/meta-data/", /IP address/],
    [
      "a name resolving to loopback without the opt-in",
      () => "curl -sS --noproxy '' http://localhost:9/",
      /non-public address 127\.0\.0\.1/,
    ],
  ])("refuses %s at the proxy", async (what, script, reason) => {
    const caller = `toolu_${what.replace(/\W+/g, "_")}`;
    const res = await sh(script(), caller);
    expect(res.out).toMatch(/agent-ci's network policy refused|CONNECT tunnel failed, response 403/);
    expect((await ledger()).find((e) => e.caller === caller)).toMatchObject({
      decision: "denied",
      reason: expect.stringMatching(reason),
    });
  });

  it("cuts a tunnel whose TLS server name differs from its CONNECT host", async () => {
    const proxy = "127.0.0.1:3128";
    const res = await sh(
      `openssl s_client -proxy ${proxy} -connect allowed.test:${origins.httpsPort} -servername blocked.test </dev/null`,
      "toolu_sni",
    );
    expect(res.code).not.toBe(0);
    // openssl sends no proxy credentials: the connection is traced to its process, and that to the call.
    expect((await ledger()).find((e) => e.caller === "toolu_sni")).toMatchObject({
      host: "allowed.test",
      decision: "denied",
      reason: "the TLS server name blocked.test differs from the CONNECT host",
      attributedBy: "process",
    });
  });

  it("attributes a client given only host:port to its call by its process, and tells the call what was refused", async () => {
    // -x without user:password replaces the proxy URL (and its credentials) the environment carries.
    const proxy = "http://127.0.0.1:3128";
    const refused = await sandbox.exec({
      script: `curl -sS -x ${proxy} http://blocked.test:${origins.httpPort}/`,
      timeoutMs: 60_000,
      caller: "toolu_hostport",
    });
    expect(refused.egressRefused).toEqual([
      `agent-ci's network policy refused blocked.test:${origins.httpPort}: not on the allowlist; allowed: allowed.test, localhost`,
    ]);
    // A tunnel from a process the command started in the background of its own shell: traced to the
    // process, then up to the call's tag.
    const allowed = await sh(
      `(curl -sS -x ${proxy} https://allowed.test:${origins.httpsPort}/tls) & wait`,
      "toolu_hostport_tls",
    );
    expect(allowed.out).toBe("hello from allowed.test over https\n");
    const entries = await ledger();
    expect(entries.find((e) => e.caller === "toolu_hostport")).toMatchObject({
      host: "blocked.test",
      kind: "http",
      decision: "denied",
      attributedBy: "process",
    });
    expect(entries.find((e) => e.caller === "toolu_hostport_tls")).toMatchObject({
      host: "allowed.test",
      kind: "connect",
      decision: "allowed",
      attributedBy: "process",
    });
  });

  it("traces a client that dropped its environment (env -i) to its call through its parent", async () => {
    const res = await sh(
      `env -i "$(command -v curl)" -sS -x http://127.0.0.1:3128 http://blocked.test:${origins.httpPort}/`,
      "toolu_env_i",
    );
    expect(res.out).toContain("agent-ci's network policy refused blocked.test");
    expect((await ledger()).find((e) => e.caller === "toolu_env_i")).toMatchObject({
      decision: "denied",
      attributedBy: "process",
    });
  });

  it("has no way out around the proxy: no direct connection, no outside DNS", async () => {
    const direct = await sh(`curl -sS -m 5 --noproxy '*' http://${host}:${origins.httpPort}/`);
    expect(direct.code).not.toBe(0);
    const tcp = await sh(
      `timeout 5 bash -c 'echo > /dev/tcp/${host}/${origins.httpPort}' && echo OPEN || echo CLOSED`,
    );
    expect(tcp.out.trim().split("\n").pop()).toBe("CLOSED");
    const dns = await sh(
      "getent hosts registry.npmjs.org deb.debian.org && echo RESOLVED || echo UNRESOLVED",
    );
    expect(dns.out.trim().split("\n").pop()).toBe("UNRESOLVED");
    const info = await docker.getContainer(`agent-ci-${runId}`).inspect();
    expect(info.HostConfig.NetworkMode).toBe("none");
    // /proc/net/dev, not /sys/class/net: gVisor's runsc has no such directory (and its coreutils ls fails on statx).
    const interfaces = await sh("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
    expect(interfaces.out.trim()).toBe("lo");
    expect(origins.seen.filter((s) => s.startsWith(`http://${host}`))).toEqual([]);
  });

  it("leaves the sidecar and its volume to be removed with the sandbox", async () => {
    const names = egressNames(runId);
    expect((await docker.getContainer(names.sidecar).inspect()).State.Running).toBe(true);
    expect((await docker.getVolume(names.volume).inspect()).Name).toBe(names.volume);
  });
});

describe("runAgent with --network allowlist", () => {
  let origins: OriginServers;
  let host: string;
  let caFile: string;

  beforeAll(async () => {
    host = await hostAddressForContainers(docker);
    origins = await startOriginServers(host);
    // The test servers' CA, and this host's own trust (a registry may sit behind a TLS-inspecting proxy).
    caFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-ca-")), "ca.pem");
    const hostBundle = fs.existsSync(HOST_CA_BUNDLE) ? fs.readFileSync(HOST_CA_BUNDLE, "utf8") : "";
    fs.writeFileSync(caFile, fs.readFileSync(origins.caFile, "utf8") + hostBundle);
  });
  afterAll(async () => {
    await origins?.close();
  });

  async function run(allowDomain: string[], turns: unknown[], extra: Partial<RunConfigInput> = {}) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-egress-run-"));
    const scriptFile = path.join(dir, "script.json");
    fs.writeFileSync(scriptFile, JSON.stringify({ turns }));
    const workspace = makeWorkspace({
      "package.json": JSON.stringify({ name: "egress-demo", version: "1.0.0", private: true }) + "\n",
    });
    const config = parseRunConfig({
      workspace,
      out: path.join(dir, "out"),
      script: scriptFile,
      mode: "bypassPermissions",
      network: "allowlist",
      allowDomain,
      allowPrivateHost: [`allowed.test=${host}`, `blocked.test=${host}`],
      caCert: caFile,
      ...extra,
    });
    const logs: string[] = [];
    const outcome = await runAgent(config, quietIo({ stderr: (l) => logs.push(l) }));
    if (!fs.existsSync(path.join(outcome.outDir, "report.json")))
      throw new Error(`no report: ${JSON.stringify(outcome)}\n${logs.join("\n")}`);
    const report = parseReport(fs.readFileSync(path.join(outcome.outDir, "report.json"), "utf8"));
    expect(
      await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${outcome.runId}`] } }),
    ).toEqual([]);
    expect(
      (await docker.listVolumes({ filters: { label: [`${LABEL_RUN}=${outcome.runId}`] } })).Volumes,
    ).toEqual([]);
    return { outcome, report, md: fs.readFileSync(path.join(outcome.outDir, "report.md"), "utf8") };
  }

  it("records every attempt with its tool call, and tells the model what was refused", async () => {
    const { report, md } = await run(
      ["allowed.test"],
      [
        [
          {
            id: "toolu_get",
            name: "Bash",
            input: { command: `curl -sS https://allowed.test:${origins.httpsPort}/` },
          },
        ],
        [
          {
            id: "toolu_refused",
            name: "Bash",
            input: { command: `curl -sS https://blocked.test:${origins.httpsPort}/` },
          },
        ],
      ],
    );
    const connections = report.egress?.connections ?? [];
    expect(connections.find((c) => c.caller === "toolu_get")).toMatchObject({
      host: "allowed.test",
      decision: "allowed",
      kind: "connect",
    });
    expect(connections.find((c) => c.caller === "toolu_refused")).toMatchObject({
      host: "blocked.test",
      decision: "denied",
      reason: "not on the allowlist",
    });
    expect(report.toolCalls.find((c) => c.id === "toolu_get")?.resultPreview).toContain(
      "hello from allowed.test over https",
    );
    expect(report.toolCalls.find((c) => c.id === "toolu_refused")?.resultPreview).toContain(
      `agent-ci's network policy refused blocked.test:${origins.httpsPort}: not on the allowlist; allowed: allowed.test`,
    );
    expect(md).toContain("<b>Network: 2 connections through the allowlist proxy, 1 denied</b>");
    expect(report.hardening?.networkMode).toBe("none (egress only through the allowlist proxy)");
  });

  it(
    "installs an npm package with --allow-domain npm, and not without it",
    { timeout: 240_000 },
    async () => {
      const install = [
        [
          {
            id: "toolu_npm",
            name: "Bash",
            input: {
              command:
                "npm install --no-audit --no-fund is-number@7.0.0 && node -e 'console.log(require(\"is-number\")(5))'",
            },
          },
        ],
      ];
      const allowed = await run(["npm"], install);
      const call = allowed.report.toolCalls.find((c) => c.id === "toolu_npm");
      expect(call?.exitCode, call?.resultPreview).toBe(0);
      expect(call?.resultPreview).toContain("true");
      expect(
        allowed.report.egress?.connections.some(
          (c) => c.host === "registry.npmjs.org" && c.decision === "allowed",
        ),
      ).toBe(true);

      const refused = await run(["allowed.test"], install);
      const denied = refused.report.toolCalls.find((c) => c.id === "toolu_npm");
      expect(denied?.exitCode).not.toBe(0);
      expect(denied?.resultPreview).toContain(
        "agent-ci's network policy refused registry.npmjs.org:443: not on the allowlist",
      );
    },
  );

  it("gives --network setup's commands the setup allowlist, then nothing to the agent", async () => {
    const { outcome, report } = await run(
      [],
      [
        [
          {
            id: "toolu_after",
            name: "Bash",
            input: {
              command: `curl -sS -m 5 https://allowed.test:${origins.httpsPort}/; echo "rc=$? proxy=\${HTTPS_PROXY:-unset}"`,
            },
          },
        ],
      ],
      {
        network: "setup",
        allowDomain: [],
        setupAllowDomain: ["allowed.test"],
        setup: [
          `curl -sS -o /workspace/fetched.txt https://allowed.test:${origins.httpsPort}/setup`,
          `curl -sS http://blocked.test:${origins.httpPort}/ | grep -q "network policy refused"`,
        ],
      },
    );
    expect(outcome.exitReason).toBe("completed");
    expect(report.egress?.allowed).toEqual(["allowed.test"]);
    expect(report.egress?.connections.map((c) => [c.caller, c.host, c.decision])).toEqual([
      ["setup", "allowed.test", "allowed"],
      ["setup", "blocked.test", "denied"],
    ]);
    const after = report.toolCalls.find((c) => c.id === "toolu_after")?.resultPreview ?? "";
    expect(after).toMatch(/rc=(6|7) proxy=unset/);
    expect(report.hardening?.networkMode).toMatch(/^none/);
  });
});

describe("--network allowlist through the CLI", () => {
  let origins: OriginServers;
  let host: string;

  beforeAll(async () => {
    host = await hostAddressForContainers(docker);
    origins = await startOriginServers(host);
  });
  afterAll(async () => {
    await origins?.close();
  });

  /**
   * `agent-ci run` of a scripted run on a one-file workspace, allowing allowed.test (both test names lead to
   * the origin servers); its exit code, stderr and report.
   */
  async function runCli(
    turns: unknown[],
    args: string[],
  ): Promise<{ code: number | null; stderr: string; report: ReturnType<typeof parseReport> }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-egress-cli-"));
    const scriptFile = path.join(dir, "script.json");
    fs.writeFileSync(scriptFile, JSON.stringify({ turns }));
    const out = path.join(dir, "out");
    const { code, stderr } = await runAgentCi(
      [
        "run",
        ...["--workspace", makeWorkspace({ "README.md": "egress\n" })],
        ...["--script", scriptFile, "--out", out],
        ...["--network", "allowlist", "--allow-domain", "allowed.test"],
        ...["--allow-private-host", `allowed.test=${host}`, "--allow-private-host", `blocked.test=${host}`],
        ...["--ca-cert", origins.caFile],
        ...args,
      ],
      { ANTHROPIC_API_KEY: "" },
    );
    return { code, stderr, report: parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8")) };
  }

  it("a run that ends during --setup keeps every network attempt, the image, the hardening and the phases it reached in report.json", async () => {
    const { code, stderr, report } = await runCli(
      [],
      [
        "--setup",
        `curl -sS https://allowed.test:${origins.httpsPort}/; curl -sS https://blocked.test:${origins.httpsPort}/; exit 7`,
      ],
    );
    expect(code, stderr).toBe(2);
    expect(report.exitReason).toBe("config_error");
    expect(report.egress?.connections.map((c) => [c.caller, c.host, c.decision])).toEqual([
      ["setup", "allowed.test", "allowed"],
      ["setup", "blocked.test", "denied"],
    ]);
    expect(report.image?.name).toMatch(/^agent-ci-sandbox:/);
    expect(report.hardening?.networkMode).toMatch(/^none/);
    // The sidecar's hardening, read back as the run container's is: all of it applied.
    expect(report.egress?.sidecarHardening).toMatchObject({
      missing: [],
      readonlyRootfs: true,
      noNewPrivileges: true,
      init: true,
      pidsLimit: 64,
    });
    expect(report.workspace.filesCopied).toBe(1);
    // Where the time went, up to the setup that ended the run.
    const phases = report.phases?.map((p) => p.name) ?? [];
    expect(phases.slice(0, 2)).toEqual(["engine", "images"]);
    expect(phases).toContain("copy-in");
    expect(phases.at(-1)).toBe("setup");
    expect(
      await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${report.runId}`] } }),
    ).toEqual([]);
  }, 180_000);

  it("clients that send no proxy credentials: their connections are attributed to their tool calls by process, and the refused call is told why", async () => {
    const bash = (id: string, command: string) => [{ id, name: "Bash", input: { command } }];
    const { code, stderr, report } = await runCli(
      [
        bash(
          "toolu_openssl",
          `openssl s_client -proxy 127.0.0.1:3128 -connect allowed.test:${origins.httpsPort} -servername blocked.test </dev/null`,
        ),
        // A client given only host:port (as a JVM's -Dhttps.proxyHost is): -x without credentials.
        bash("toolu_hostport", `curl -sS -x 127.0.0.1:3128 https://blocked.test:${origins.httpsPort}/`),
        bash("toolu_hostport_ok", `curl -sS -x 127.0.0.1:3128 https://allowed.test:${origins.httpsPort}/`),
      ],
      ["--mode", "bypassPermissions"],
    );
    expect(code, stderr).toBe(0);
    const connections = report.egress?.connections ?? [];
    expect(connections.map((c) => [c.caller, c.attributedBy, c.host, c.decision])).toEqual([
      ["toolu_openssl", "process", "allowed.test", "denied"],
      ["toolu_hostport", "process", "blocked.test", "denied"],
      ["toolu_hostport_ok", "process", "allowed.test", "allowed"],
    ]);
    const result = (id: string) => report.toolCalls.find((c) => c.id === id)?.resultPreview ?? "";
    expect(result("toolu_openssl")).toContain(
      `agent-ci's network policy refused allowed.test:${origins.httpsPort}: the TLS server name blocked.test differs from the CONNECT host`,
    );
    expect(result("toolu_hostport")).toContain(
      `agent-ci's network policy refused blocked.test:${origins.httpsPort}: not on the allowlist; allowed: allowed.test`,
    );
    expect(result("toolu_hostport_ok")).toContain("hello from allowed.test over https");
    expect(result("toolu_hostport_ok")).not.toContain("network policy refused");
    expect(
      await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${report.runId}`] } }),
    ).toEqual([]);
  }, 180_000);
});

describe("the watchdog with --network allowlist", () => {
  it("removes the sidecar and its volume with the run's container when it ends a blocked run", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-egress-watchdog-"));
    const scriptFile = path.join(dir, "script.json");
    fs.writeFileSync(
      scriptFile,
      JSON.stringify({ turns: [[{ name: "Bash", input: { command: "sleep 60" } }]] }),
    );
    const out = path.join(dir, "out");
    const args = [
      "run",
      "--workspace",
      makeWorkspace({ a: "a\n" }),
      "--script",
      scriptFile,
      "--mode",
      "bypassPermissions",
      "--out",
      out,
      "--timeout",
      "5",
      "--network",
      "allowlist",
      "--allow-domain",
      "npm",
    ];
    // The test-only hook blocks the main thread once the sandbox is up: only the watchdog can end the run.
    const { code, stderr } = await runAgentCi(args, {
      ANTHROPIC_API_KEY: "",
      AGENT_CI_TEST_BLOCK_EVENT_LOOP: "1",
    });
    expect(code, stderr).toBe(5);
    const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
    expect(
      await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${report.runId}`] } }),
    ).toEqual([]);
    expect(
      (await docker.listVolumes({ filters: { label: [`${LABEL_RUN}=${report.runId}`] } })).Volumes,
    ).toEqual([]);
  }, 120_000);
});

describe("the orphan reaper", () => {
  it("removes an allowlist run's sidecar and volume whose owner process died", async () => {
    const runId = newRunId();
    const dead = spawn("true");
    await new Promise((resolve) => dead.on("exit", resolve));
    const labels = {
      [LABEL_RUN]: runId,
      "agent-ci.pid": String(dead.pid),
      "agent-ci.host": os.hostname(),
      "agent-ci.started": new Date().toISOString(),
    };
    const names = egressNames(runId);
    await docker.createVolume({ Name: names.volume, Labels: labels });
    const image =
      (await docker.listImages({ filters: { reference: ["agent-ci-sandbox"] } }))[0]?.RepoTags?.[0] ??
      "agent-ci-sandbox";
    await docker.createContainer({
      name: names.sidecar,
      Image: image,
      Cmd: ["true"],
      Labels: labels,
      HostConfig: { Mounts: [egressMount(runId, false)] },
    });
    await reapOrphans(docker);
    expect(await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } })).toEqual(
      [],
    );
    expect((await docker.listVolumes({ filters: { label: [`${LABEL_RUN}=${runId}`] } })).Volumes).toEqual([]);
  });
});
