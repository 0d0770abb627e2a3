// A real registry on loopback: Debian's docker-registry (the Distribution project's registry, installed by
// scripts/test.sh), with its storage in a temporary folder, for publishing agent-ci's images and pulling
// them by digest on an empty engine (the test and the bench's cold starts).
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { hasCommand } from "./host-command.js";
import { until } from "./until.js";

export const REGISTRY_PROGRAM = "docker-registry";

export const hasRegistryProgram = (): boolean => hasCommand(REGISTRY_PROGRAM);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export class LocalRegistry {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "aci-registry-"));
  private process: ChildProcess | undefined;
  /** host:port, once started. */
  address = "";

  async start(): Promise<void> {
    if (!hasRegistryProgram())
      throw new Error(
        `${REGISTRY_PROGRAM} is not installed: apt-get install docker-registry (scripts/test.sh does, as root)`,
      );
    const port = await freePort();
    this.address = `127.0.0.1:${port}`;
    const config = path.join(this.dir, "config.yml");
    fs.writeFileSync(
      config,
      [
        "version: 0.1",
        "log: { level: warn }",
        `storage: { filesystem: { rootdirectory: ${path.join(this.dir, "data")} }, delete: { enabled: true } }`,
        `http: { addr: "${this.address}" }`,
        "",
      ].join("\n"),
    );
    const log = fs.openSync(path.join(this.dir, "registry.log"), "a");
    this.process = spawn(REGISTRY_PROGRAM, ["serve", config], { stdio: ["ignore", log, log] });
    fs.closeSync(log);
    const exited = new Promise<string>((resolve) =>
      this.process!.once("exit", (code) => resolve(`${REGISTRY_PROGRAM} exited ${code}: ${this.log()}`)),
    );
    await until(
      `the registry on ${this.address} to answer`,
      async () => {
        const gone = await Promise.race([exited, Promise.resolve(undefined)]);
        if (gone) throw new Error(gone);
        return fetch(`http://${this.address}/v2/`)
          .then((r) => r.ok || undefined)
          .catch(() => undefined);
      },
      30_000,
      100,
    );
  }

  log(): string {
    try {
      return fs.readFileSync(path.join(this.dir, "registry.log"), "utf8").slice(-2000);
    } catch {
      return "";
    }
  }

  async stop(): Promise<void> {
    const child = this.process;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      await exited;
    }
    this.process = undefined;
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
