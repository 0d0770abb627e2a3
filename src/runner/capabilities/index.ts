// The run's capabilities, in the order they start (each may use what one before it started); they close in
// the reverse order, and their sections of report.json are in this order. The stages, the run's end and the
// record go through the functions here over a run's parts (`capabilitiesFor`) and name no capability.
import type { RunConfig } from "../config.js";
import type { PreparedPolicy } from "../run/policy-setup.js";
import type { DockerSandbox } from "../../sandbox/docker-sandbox.js";
import type { StartRecord } from "../../sandbox/phase-clock.js";
import type { AnyTool } from "../../tools/types.js";
import type {
  AroundGiven,
  BindGiven,
  Capability,
  CapabilityRun,
  PrepareGiven,
  RecordedGiven,
  SandboxAsk,
  StartedParts,
  StartGiven,
  Told,
} from "./capability.js";
import type { RunOutcome } from "../run/outcome.js";
import { attempts } from "./attempts/attempts.js";
import { egress } from "./egress/egress.js";
import { hooks } from "./hooks/hooks.js";
import { mcp } from "./mcp/mcp.js";
import { memory } from "./memory/memory.js";
import { setupCache } from "./setup-cache/setup-cache.js";
import { subagents } from "./subagents/subagents.js";
import { web } from "./web/web.js";

export type * from "./capability.js";

export const CAPABILITIES: readonly Capability[] = [
  attempts,
  egress,
  setupCache,
  mcp,
  hooks,
  subagents,
  web,
  memory,
];

/**
 * Each capability's part of one run, in their order, then those the entry gives (RunIO's `capabilities`:
 * telemetry, which the runner may not import): made before anything else of the run.
 */
export function capabilitiesFor(
  config: RunConfig,
  given: readonly Capability[] = [],
): readonly CapabilityRun[] {
  return [...CAPABILITIES, ...given].map((c) => c.forRun(config));
}

/** The whole run, when a capability runs it around the stages (attempts); undefined: the run is one. */
export function runAround(
  runs: readonly CapabilityRun[],
  given: AroundGiven,
): Promise<RunOutcome> | undefined {
  for (const run of runs) {
    const whole = run.around?.(given);
    if (whole) return whole;
  }
  return undefined;
}

/** The secret values the capabilities' configuration holds. */
export function capabilitySecrets(runs: readonly CapabilityRun[]): string[] {
  return runs.flatMap((r) => r.secrets ?? []);
}

/** Every capability's check before anything of the run is made (a config error ends the run there). */
export function checkCapabilities(runs: readonly CapabilityRun[]): void {
  for (const run of runs) run.check?.();
}

/** The service containers' slots beside the agent's that the capabilities need. */
export function serviceSlots(runs: readonly CapabilityRun[]): number {
  return runs.reduce((sum, r) => sum + (r.services ?? 0), 0);
}

/** What the sandbox must give the capabilities together. */
export function sandboxNeeds(
  runs: readonly CapabilityRun[],
  policy: PreparedPolicy,
): { sharedWorkspace: boolean; services: number } {
  return {
    sharedWorkspace: runs.some((r) => r.sharedWorkspace?.(policy)),
    services: serviceSlots(runs),
  };
}

/** What the capabilities ask of the run's sandboxes together (the agent's and verify's). */
export function sandboxAsks(runs: readonly CapabilityRun[]): SandboxAsk {
  return Object.assign({}, ...runs.map((r) => r.sandbox?.() ?? {})) as SandboxAsk;
}

/** Why each capability's part of the first request needs the sandbox first (none: it may be asked ahead). */
export function firstTurnWaits(runs: readonly CapabilityRun[]): string[] {
  return runs.flatMap((r) => r.firstTurnWaits?.() ?? []);
}

/** Told each capability the workspace the run goes on with. */
export function workspaceKnown(runs: readonly CapabilityRun[], config: RunConfig): void {
  for (const run of runs) run.workspaceKnown?.(config);
}

/** What the model is told, from the capability that tells it. */
export async function tell(runs: readonly CapabilityRun[], given: PrepareGiven): Promise<Told> {
  const teller = runs.find((r) => r.tell);
  if (!teller?.tell) throw new Error("no capability tells the model what it is told");
  return teller.tell(given);
}

/** Every capability's preparation once the run knows its mode, before the model's driver. */
export function prepareCapabilities(runs: readonly CapabilityRun[], given: PrepareGiven): void {
  for (const run of runs) run.prepare?.(given);
}

/** Told each capability that the model's driver is made. */
export function modelReady(
  runs: readonly CapabilityRun[],
  given: Parameters<NonNullable<CapabilityRun["modelReady"]>>[0],
): void {
  for (const run of runs) run.modelReady?.(given);
}

/** Told each capability that the sandbox is ready. */
export function sandboxOpened(
  runs: readonly CapabilityRun[],
  sandbox: DockerSandbox,
  log: (line: string) => void,
): void {
  for (const run of runs) run.opened?.(sandbox, log);
}

/**
 * Every capability started, one after another in their order (each keeps what it started, so that the run's end
 * closes it whatever fails after); what they started, together.
 */
export async function startCapabilities(
  runs: readonly CapabilityRun[],
  given: StartGiven,
): Promise<StartedParts> {
  let started: StartedParts = {};
  for (const run of runs) if (run.start) started = { ...started, ...(await run.start(given)) };
  return started;
}

/** Each capability given the run's services. */
export function bindCapabilities(runs: readonly CapabilityRun[], given: BindGiven): void {
  for (const run of runs) run.bind?.(given);
}

/** The tools the capabilities add to the run's tool set, in their order. */
export function capabilityTools(runs: readonly CapabilityRun[]): AnyTool[] {
  return runs.flatMap((r) => r.tools?.() ?? []);
}

/** The capabilities' tools the run leaves out, each with why. */
export function capabilityToolsOff(
  runs: readonly CapabilityRun[],
  given: Parameters<NonNullable<CapabilityRun["toolsOff"]>>[0],
): Map<string, string> {
  return new Map(runs.flatMap((r) => [...(r.toolsOff?.(given) ?? [])]));
}

/** Every capability closed, the last started first, one after another. */
export async function closeCapabilities(
  runs: readonly CapabilityRun[],
  log: (line: string) => void,
): Promise<void> {
  for (const run of [...runs].reverse()) await run.close?.(log);
}

/** The work the capabilities left going that the record tells, waited for. */
export async function settleCapabilities(runs: readonly CapabilityRun[], start: StartRecord): Promise<void> {
  await Promise.all(runs.map((r) => r.settle?.(start)));
}

/**
 * Each capability told that the record is written, one after another in their order. What one does there
 * cannot change the run's outcome: an error of its own is one line on `warn`.
 */
export async function recordedCapabilities(
  runs: readonly CapabilityRun[],
  given: RecordedGiven,
  warn: (line: string) => void,
): Promise<void> {
  for (const run of runs)
    await run.recorded?.(given).catch((e: unknown) => warn(`agent-ci: ${(e as Error).message}`));
}
