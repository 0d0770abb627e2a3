// The run's capabilities, in the order they start (each may use what one before it started); they close in
// the reverse order. The stages and the run's end iterate this list and name no capability.
import type { Capability, Closed, SandboxNeeds, StartedParts, StartGiven } from "./capability.js";
import type { RecordSection } from "../record/section.js";
import type { PreparedPolicy } from "../run/policy-setup.js";
import type { AgentPhase, RunContext } from "../run/run-context.js";
import type { DockerSandbox } from "../../sandbox/docker-sandbox.js";
import { hooks } from "./hooks/hooks.js";
import { mcp } from "./mcp/mcp.js";
import { memory } from "./memory/memory.js";
import { setupCache } from "./setup-cache/setup-cache.js";
import { subagents } from "./subagents/subagents.js";
import { web } from "./web/web.js";

export type { Capability, Closed, SandboxNeeds, StartedParts, StartGiven } from "./capability.js";

export const CAPABILITIES: readonly Capability[] = [setupCache, mcp, hooks, subagents, web, memory];

/** Every capability's check before anything of the run is made (a config error ends the run there). */
export function prepareCapabilities(ctx: RunContext): void {
  for (const capability of CAPABILITIES) capability.prepare?.(ctx);
}

/** What the sandbox must give the capabilities together. */
export function sandboxNeeds(ctx: RunContext, policy: PreparedPolicy): Required<SandboxNeeds> {
  const needs = CAPABILITIES.map((c) => c.sandboxNeeds?.(ctx, policy) ?? {});
  return {
    sharedWorkspace: needs.some((n) => n.sharedWorkspace),
    services: needs.reduce((sum, n) => sum + (n.services ?? 0), 0),
  };
}

/** Why each capability's part of the first request needs the sandbox first (none: it may be asked ahead). */
export function firstTurnWaits(ctx: RunContext): string[] {
  return CAPABILITIES.flatMap((c) => c.firstTurnWaits?.(ctx) ?? []);
}

/** Told each capability that the sandbox is ready. */
export function sandboxOpened(sandbox: DockerSandbox, log: (line: string) => void): void {
  for (const capability of CAPABILITIES) capability.opened?.(sandbox, log);
}

/**
 * Every capability started, one after another in their order; each one's parts are told to `made` as soon as
 * they are made (before the next start, which can fail), so that the run's end closes them.
 */
export async function startCapabilities(
  given: StartGiven,
  made: (parts: StartedParts) => void,
): Promise<StartedParts> {
  let started: StartedParts = {};
  for (const capability of CAPABILITIES) {
    if (!capability.start) continue;
    const parts = await capability.start(given);
    made(parts);
    started = { ...started, ...parts };
  }
  return started;
}

/** Every capability closed, the last started first, one after another; what they leave for the record. */
export async function closeCapabilities(phase: AgentPhase, log: (line: string) => void): Promise<Closed> {
  let closed: Closed = {};
  for (const capability of [...CAPABILITIES].reverse())
    if (capability.close) closed = { ...closed, ...(await capability.close(phase, log)) };
  return closed;
}

/** The work the capabilities left going that the record tells, waited for. */
export async function settleCapabilities(phase: AgentPhase): Promise<void> {
  await Promise.all(CAPABILITIES.map((c) => c.settle?.(phase)));
}

/** The capabilities' sections of report.json, in their order. */
export const CAPABILITY_SECTIONS: readonly RecordSection[] = CAPABILITIES.flatMap((c) =>
  c.section ? [c.section] : [],
);
