/** Shared builders for the policy tests: engines from compact configs, and calls. */
import {
  createPolicyEngine,
  loadPolicy,
  type PolicyCall,
  type PolicyEngine,
  type PermissionMode,
} from "../../../src/policy/index.js";

export interface EngineConfig {
  readonly mode?: PermissionMode | undefined;
  readonly allow?: readonly string[] | undefined;
  readonly deny?: readonly string[] | undefined;
  readonly ask?: readonly string[] | undefined;
  readonly additionalDirectories?: readonly string[] | undefined;
}

const cache = new Map<string, Promise<PolicyEngine>>();

/** One engine per distinct config, shared across tests (engines are immutable). */
export function engineFor(config: EngineConfig = {}): Promise<PolicyEngine> {
  const key = JSON.stringify(config);
  let engine = cache.get(key);
  if (engine === undefined) {
    const policy = loadPolicy({
      mode: config.mode ?? "default",
      sources: [
        {
          source: { kind: "cli", label: "cli", trusted: true },
          allow: config.allow,
          deny: config.deny,
          ask: config.ask,
          additionalDirectories: config.additionalDirectories,
        },
      ],
    });
    engine = createPolicyEngine(policy);
    cache.set(key, engine);
  }
  return engine;
}

export const bash = (command: string, cwd?: string): PolicyCall => ({
  tool: "Bash",
  input: { command },
  readOnly: false,
  cwd,
});

export const fileCall = (tool: string, path: string, readOnly = tool === "Read"): PolicyCall => ({
  tool,
  input: { file_path: path },
  readOnly,
});
