// The one gate for configuration the workspace provides — its settings' allows, mode, directories and hooks,
// its agents, MCP servers, skills and commands: a pull request can change any of it, so it counts only when
// the run trusts the workspace (--trust-workspace-settings). What the gate holds back is listed in one shape,
// for the log and the report; so are the keys of any configuration file agent-ci leaves unused
// (config-keys.ts).

export const TRUST_WORKSPACE_FLAG = "--trust-workspace-settings";

/** Workspace configuration the run did not use, and why. */
export interface IgnoredConfig {
  /** Where it came from, e.g. `workspace:.mcp.json`. */
  readonly source: string;
  /** What was held back, when the source holds several things: a rule, a mode, the files of a folder. */
  readonly text?: string;
  readonly reason: string;
  /** How loudly the report's warnings say it (default info): a key nobody knows is a warning. */
  readonly severity?: "info" | "warning";
}

/** Why workspace configuration was not used, for `what` (e.g. "allow rule"). */
export const untrustedReason = (what: string): string =>
  `${what} ignored: it comes from the workspace, which a pull request can change (pass ${TRUST_WORKSPACE_FLAG} to accept it)`;

/** One line for the log and the report's warnings. */
export const describeIgnored = (i: IgnoredConfig): string =>
  `${i.source}${i.text ? ` (${i.text})` : ""}: ${i.reason}`;

/**
 * The gate over one source: `admit` says whether the run may use a piece of it; when it may not, the piece
 * is listed in `ignored` with the reason.
 */
export function workspaceGate<E extends IgnoredConfig>(
  trusted: boolean,
  ignored: E[],
): (held: Omit<E, "reason">, what: string) => boolean {
  return (held, what) => {
    if (!trusted) ignored.push({ ...held, reason: untrustedReason(what) } as E);
    return trusted;
  };
}
