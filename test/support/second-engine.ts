// A second dockerd of a test's own (own data root, exec root, socket and bridge; no iptables), for what the
// shared engine must not see: an engine restarted mid-run, an engine that starts empty. Needs root, dockerd
// and ip (`canRunSecondEngine`).
//
// Careful: a second dockerd started with `--bridge none` deletes the host's docker0 interface (the shared
// engine's default bridge). Each one gets a bridge of its own; callers check docker0 afterwards.
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Docker from "dockerode";
import { hasCommand } from "./host-command.js";
import { until } from "./until.js";

export const canRunSecondEngine = process.getuid?.() === 0 && hasCommand("dockerd") && hasCommand("ip");

export interface SecondEngineOptions {
  /** The bridge's name and its address (10.x.y.1/24), distinct per test file: they may run at once. */
  bridge: string;
  bridgeAddress: string;
  /** Registries it may speak plain HTTP to (host:port). */
  insecureRegistries?: string[];
}

export class SecondEngine {
  readonly dir = fs.mkdtempSync("/tmp/aci-engine-");
  readonly socket = path.join(this.dir, "docker.sock");
  readonly dockerHost = `unix://${this.socket}`;
  readonly client = new Docker({ socketPath: this.socket });
  process: ChildProcess | undefined;
  private bridgeMade = false;

  constructor(private readonly options: SecondEngineOptions) {}

  async start(): Promise<void> {
    if (!this.bridgeMade) {
      const { bridge, bridgeAddress } = this.options;
      execFileSync("ip", ["link", "add", bridge, "type", "bridge"], { stdio: "pipe" });
      this.bridgeMade = true;
      execFileSync("ip", ["addr", "add", bridgeAddress, "dev", bridge], { stdio: "pipe" });
      execFileSync("ip", ["link", "set", bridge, "up"], { stdio: "pipe" });
    }
    const log = fs.openSync(path.join(this.dir, "dockerd.log"), "a");
    const args = [
      "--data-root",
      path.join(this.dir, "data"),
      "--exec-root",
      path.join(this.dir, "exec"),
      "--pidfile",
      path.join(this.dir, "dockerd.pid"),
      "-H",
      this.dockerHost,
      "--bridge",
      this.options.bridge,
      "--iptables=false",
      "--ip6tables=false",
      "--ip-masq=false",
      // The host's daemon.json (runtimes, mirrors) is the shared engine's, not this one's.
      "--config-file",
      path.join(this.dir, "daemon.json"),
      ...(this.options.insecureRegistries ?? []).flatMap((r) => ["--insecure-registry", r]),
    ];
    fs.writeFileSync(path.join(this.dir, "daemon.json"), "{}\n");
    this.process = spawn("dockerd", args, { stdio: ["ignore", log, log], detached: false });
    fs.closeSync(log);
    await until(
      "the second dockerd to answer",
      async () =>
        await this.client
          .ping()
          .then(() => true)
          .catch(() => undefined),
      60_000,
      250,
    );
  }

  /** SIGTERM, then waits until the process is gone (asserted by pid, not by time). */
  async stop(): Promise<number> {
    const child = this.process;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return 0;
    const pid = child.pid;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 40_000);
    await exited;
    clearTimeout(timer);
    this.process = undefined;
    return pid;
  }

  /** Copies an image of the shared engine into this one (`docker save | docker load`: no registry, no build). */
  async loadImage(tag: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const save = spawn("docker", ["save", tag], { stdio: ["ignore", "pipe", "inherit"] });
      const load = spawn("docker", ["-H", this.dockerHost, "load", "-q"], {
        stdio: ["pipe", "ignore", "inherit"],
      });
      save.stdout.pipe(load.stdin);
      load.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`docker load exited ${code}`))));
      save.on("exit", (code) => code === 0 || reject(new Error(`docker save exited ${code}`)));
    });
  }

  async cleanup(): Promise<void> {
    await this.stop();
    spawnSync(
      "sh",
      ["-c", `grep ' ${this.dir}' /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l`],
      { stdio: "ignore" },
    );
    fs.rmSync(this.dir, { recursive: true, force: true });
    if (this.bridgeMade) spawnSync("ip", ["link", "delete", this.options.bridge], { stdio: "ignore" });
  }
}
