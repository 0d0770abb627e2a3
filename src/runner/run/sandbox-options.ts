// The sandbox a run's configuration asks for, defined once: the agent's, and verify's fresh one after it,
// are made alike (image, runtime, network, setup, CAs, limits, environment, what is copied in), so that
// verify runs the command where the agent's work was done, without the agent.
import type { DockerSandboxOptions } from "../../sandbox/container-spec.js";
import { readCaCert, type RunConfig, runEgressOptions } from "../config.js";

export type RunSandboxOptions = Pick<
  DockerSandboxOptions,
  | "image"
  | "imageRegistry"
  | "runtime"
  | "network"
  | "setup"
  | "egress"
  | "caCertPem"
  | "memoryBytes"
  | "nanoCpus"
  | "workspaceSizeBytes"
  | "env"
  | "includeIgnored"
  | "allowWeakHardening"
>;

export function runSandboxOptions(config: RunConfig): RunSandboxOptions {
  return {
    image: config.image,
    imageRegistry: config.imageRegistry,
    runtime: config.runtime,
    network: config.network,
    setup: config.setup,
    egress: runEgressOptions(config),
    caCertPem: config.caCert === undefined ? undefined : readCaCert(config.caCert),
    memoryBytes: config.memory,
    nanoCpus: config.cpus ? Math.round(config.cpus * 1e9) : undefined,
    workspaceSizeBytes: config.workspaceSize,
    env: passThroughEnv(config.env),
    includeIgnored: config.includeIgnored,
    allowWeakHardening: config.allowWeakHardening,
  };
}

/** The named variables of the host's environment that are set (`--env`). */
function passThroughEnv(names: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
