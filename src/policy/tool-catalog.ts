// What is known of each tool by its name: Claude Code's tool vocabulary (its rules name tools, some of
// which agent-ci does not implement, such as MultiEdit and LS), with the kind of specifier a rule on the
// tool takes, the tool's category and the input field that names its file. The one place these are
// stated: the policy reads them to parse rules and decide calls, the runner to leave file-changing tools
// out of a plan-mode run, the report to summarise calls. A new tool declares itself here, with one line.
//
// Plain data with no imports: the report's browser script reads it too (through report/format.ts).

/** What a tool does, as far as permission is concerned. */
export type ToolCategory =
  /** Reads workspace files; `Read(…)` rules govern it; allowed in every mode unless a rule says otherwise. */
  | "read"
  /** Changes workspace files; `Edit(…)` rules govern it; protected paths apply; not offered in plan mode. */
  | "edit"
  /** Runs commands; the policy proves or refuses each command line itself. */
  | "execute"
  /** Reads, but reaches the network: needs an allow rule (or bypassPermissions). */
  | "network"
  /** Keeps the agent's own bookkeeping: allowed in every mode unless a rule denies it. */
  | "housekeeping"
  /**
   * Starts a subagent: needs no allow rule in any mode, as in Claude Code (each of the subagent's calls is
   * decided by this same policy); a deny rule (`Task(Explore)`) still refuses it, in every mode.
   */
  | "agent"
  /**
   * An MCP server's tool (`mcp__server__tool`): needs an allow rule in every mode but bypassPermissions
   * (Claude Code asks before one runs); in plan mode also the server's `readOnlyHint`.
   */
  | "mcp";

/** What follows a tool's name in parentheses in a rule. */
export type SpecifierKind = "bash" | "path" | "domain" | "name" | "none";

export interface ToolEntry {
  readonly category: ToolCategory;
  readonly specifier: SpecifierKind;
  /** The input field naming the file or directory the call is about. */
  readonly pathKey?: "file_path" | "path" | "notebook_path";
  /** Another name for the same tool (Claude Code renamed some): rules on either govern both. */
  readonly aliasOf?: string;
  /**
   * The input field naming the MCP server the call is about: that server's own rules (`mcp__<server>`,
   * `mcp__<server>__*`) govern the call too, as they govern the server's tools.
   */
  readonly serverKey?: "server";
  /** For a `name` specifier: the input field holding the name a rule matches (`Task(Explore)`, `Skill(fix)`). */
  readonly nameKey?: "subagent_type" | "skill";
}

export const TOOL_CATALOG = {
  Bash: { category: "execute", specifier: "bash" },
  Read: { category: "read", specifier: "path", pathKey: "file_path" },
  Glob: { category: "read", specifier: "path", pathKey: "path" },
  Grep: { category: "read", specifier: "path", pathKey: "path" },
  LS: { category: "read", specifier: "path", pathKey: "path" },
  NotebookRead: { category: "read", specifier: "path", pathKey: "notebook_path" },
  Edit: { category: "edit", specifier: "path", pathKey: "file_path" },
  MultiEdit: { category: "edit", specifier: "path", pathKey: "file_path" },
  Write: { category: "edit", specifier: "path", pathKey: "file_path" },
  NotebookEdit: { category: "edit", specifier: "path", pathKey: "notebook_path" },
  WebFetch: { category: "network", specifier: "domain" },
  WebSearch: { category: "network", specifier: "none" },
  TodoWrite: { category: "housekeeping", specifier: "none" },
  // Background tasks (shells and subagents): the seeds' v2.1 TaskOutput and KillShell, with the names
  // Claude Code used before (BashOutput, KillBash) and after (TaskStop) as aliases.
  TaskOutput: { category: "housekeeping", specifier: "none" },
  BashOutput: { category: "housekeeping", specifier: "none", aliasOf: "TaskOutput" },
  KillShell: { category: "housekeeping", specifier: "none" },
  KillBash: { category: "housekeeping", specifier: "none", aliasOf: "KillShell" },
  TaskStop: { category: "housekeeping", specifier: "none", aliasOf: "KillShell" },
  ExitPlanMode: { category: "housekeeping", specifier: "none" },
  // They list and read what the configured MCP servers offer as resources, read-only, as Claude Code does;
  // a rule on the server they name (`--deny mcp__srv`) decides them too.
  ListMcpResourcesTool: { category: "housekeeping", specifier: "none", serverKey: "server" },
  ReadMcpResourceTool: { category: "housekeeping", specifier: "none", serverKey: "server" },
  // Loads one of the run's skills into the conversation: instructions only, so allowed unless a rule denies.
  Skill: { category: "housekeeping", specifier: "name", nameKey: "skill" },
  Task: { category: "agent", specifier: "name", nameKey: "subagent_type" },
  Agent: { category: "agent", specifier: "name", nameKey: "subagent_type", aliasOf: "Task" },
} as const satisfies Readonly<Record<string, ToolEntry>>;

export type KnownToolName = keyof typeof TOOL_CATALOG;
export const KNOWN_TOOLS = Object.keys(TOOL_CATALOG) as readonly KnownToolName[];

/** Every input field that names a file, whatever the tool: the policy checks them all on every call. */
export const PATH_INPUT_KEYS: readonly string[] = [
  ...new Set(
    Object.values(TOOL_CATALOG as Readonly<Record<string, ToolEntry>>).flatMap((e) => e.pathKey ?? []),
  ),
];

/** How every MCP name begins: `mcp__<server>` names a server, `mcp__<server>__<tool>` one of its tools. */
export const MCP_PREFIX = "mcp__";
/** The one spelling of MCP names: a server's (`mcp__srv`), or one of its tools' (`mcp__srv__tool`, `*`: all). */
export const mcpName = (server: string, tool?: string): string =>
  tool === undefined ? `${MCP_PREFIX}${server}` : `${MCP_PREFIX}${server}__${tool}`;
export const isMcpTool = (tool: string): boolean => tool.startsWith(MCP_PREFIX);

/** The MCP server a call names in its tool's `serverKey` field (the resource tools), if any. */
export function mcpServerOfCall(tool: string, input: Readonly<Record<string, unknown>>): string | undefined {
  const key = toolEntry(tool)?.serverKey;
  const value = key === undefined ? undefined : input[key];
  return typeof value === "string" ? value : undefined;
}

/** The catalogue's entry for a tool name; MCP tools share one; undefined for a name nobody declared. */
export function toolEntry(tool: string): ToolEntry | undefined {
  if (Object.hasOwn(TOOL_CATALOG, tool)) return TOOL_CATALOG[tool as KnownToolName];
  return isMcpTool(tool) ? { category: "mcp", specifier: "none" } : undefined;
}

/** The other names a tool answers to: the catalogue's entries that are aliases of it. */
export function aliasesOf(tool: string): string[] {
  return KNOWN_TOOLS.filter((name) => (TOOL_CATALOG[name] as ToolEntry).aliasOf === tool);
}

export const toolCategory = (tool: string): ToolCategory | undefined => toolEntry(tool)?.category;

/** The names of one category, in the catalogue's order (for messages and docs). */
export function toolsOfCategory(category: ToolCategory): KnownToolName[] {
  return KNOWN_TOOLS.filter((tool) => TOOL_CATALOG[tool].category === category);
}
