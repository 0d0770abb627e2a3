// The permission modes, and what each one means, said once: the tool gate (evaluate.ts), the container's
// rules (container-rules.ts), the tools the runner offers, and the record read it from here. Apart from the
// zod schemas that check a mode's name (schema.ts), so the CLI's help lists them without loading zod.
export const PERMISSION_MODES = ["default", "plan", "acceptEdits", "bypassPermissions"] as const;
type Mode = (typeof PERMISSION_MODES)[number];

/** What a permission mode lets through without a rule, and what the sandbox enforces for it. */
export interface ModeMeaning {
  /** How wide it is: a subagent may be held to a mode no wider than its parent's. */
  readonly width: number;
  /**
   * Nothing in the workspace may change: no file-writing tool is offered (and an MCP tool only when it is
   * read-only and a rule allows it), Bash runs only proven read-only commands, the container's workspace is
   * root's, and no patch comes out.
   */
  readonly readOnly: boolean;
  /** File changes inside the workspace are allowed with no rule. */
  readonly editsWithoutRule: boolean;
  /** Every call no deny rule refuses is allowed: no rule checks. */
  readonly everythingWithoutRule: boolean;
  /** One line for --help and the docs. */
  readonly summary: string;
}

export const MODE_MEANINGS: Readonly<Record<Mode, ModeMeaning>> = {
  plan: {
    width: 0,
    readOnly: true,
    editsWithoutRule: false,
    everythingWithoutRule: false,
    summary: "read-only: the workspace cannot change, and no patch comes out",
  },
  default: {
    width: 1,
    readOnly: false,
    editsWithoutRule: false,
    everythingWithoutRule: false,
    summary: "allow rules only: anything not read-only needs a rule",
  },
  acceptEdits: {
    width: 2,
    readOnly: false,
    editsWithoutRule: true,
    everythingWithoutRule: false,
    summary: "file changes inside the workspace too, with no rule",
  },
  bypassPermissions: {
    width: 3,
    readOnly: false,
    editsWithoutRule: true,
    everythingWithoutRule: true,
    summary: "no rule checks: everything no deny rule refuses",
  },
};

/** The mode a read-only agent (Explore, Plan) and a review run in, whatever the run's. */
export const READ_ONLY_MODE = "plan" as const satisfies Mode;

/** Nothing in the workspace may change in this mode (ModeMeaning.readOnly). */
export const isReadOnlyMode = (mode: Mode): boolean => MODE_MEANINGS[mode].readOnly;
