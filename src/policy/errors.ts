/**
 * Named errors of the permission policy. Both are infrastructure faults: a bad
 * configuration stops the run before any model call; using the Bash matcher before it is loaded is a
 * programming error. Denied tool calls are never errors: they are `Decision`s.
 */

export interface PolicyConfigErrorDetails {
  /** The rule, mode or key as the user wrote it. */
  readonly subject: string;
  /** Why it was refused, in words the user can act on. */
  readonly reason: string;
  /** Label of the source it came from (`--allow`, `.claude/settings.json`, …), when known. */
  readonly source?: string | undefined;
}

/** A rule, mode, settings file or hook definition that agent-ci refuses to run with (RELIABILITY R16). */
export class PolicyConfigError extends Error {
  override readonly name = "PolicyConfigError";
  readonly subject: string;
  readonly reason: string;
  readonly source: string | undefined;

  constructor(details: PolicyConfigErrorDetails) {
    const from = details.source === undefined ? "" : ` (from ${details.source})`;
    super(`invalid permission config ${JSON.stringify(details.subject)}${from}: ${details.reason}`);
    this.subject = details.subject;
    this.reason = details.reason;
    this.source = details.source;
  }
}

/** The tree-sitter Bash parser was used before `loadBashParser()` / `createPolicyEngine()` finished. */
export class PolicyNotReadyError extends Error {
  override readonly name = "PolicyNotReadyError";

  constructor() {
    super("the Bash parser is not loaded yet: await createPolicyEngine() or loadBashParser() first");
  }
}
