// MCP server configuration in Claude Code's format: `{"mcpServers": {"name": {...}}}`, a stdio server
// (`command`, `args`, `env`) or a remote one (`type: "http" | "sse"`, `url`, `headers`), with `${VAR}` and
// `${VAR:-default}` taken from agent-ci's own environment. Sources: `--mcp-config FILE|JSON` (repeatable)
// and the Action's `mcp_config` are trusted; the workspace's `.mcp.json` is a pull request's to change, so
// it counts only with `--trust-workspace-settings`. A bad entry is a config error naming its server, a
// misspelt key (`mcpServer`, `comand`) among them; a key agent-ci does not use is noted and ignored. What
// `${VAR}` takes from the environment is a secret wherever it goes: redacted in every output, and never on a
// stdio server's command line, which every process in the sandbox can read (it goes in through `env`).
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { isInlineJson, readJsonSource } from "../json-source.js";
import { checkKeys, workspaceGate, type IgnoredConfig, type KeyRules } from "../policy/index.js";

/** Claude Code's rule for a server's name (`claude mcp add` refuses others). */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** The workspace's own file, read only when it is trusted. */
export const WORKSPACE_MCP_FILE = ".mcp.json";

const StringMap = z.record(z.string(), z.string());

const StdioServer = z.object({
  type: z.literal("stdio").optional(),
  command: z.string().min(1, "command is empty"),
  args: z.array(z.string()).default([]),
  env: StringMap.default({}),
});
const RemoteServer = z.object({
  type: z.enum(["http", "sse"]),
  url: z.url({ protocol: /^https?$/, error: "url must be an http or https URL" }),
  headers: StringMap.default({}),
});
const McpFile = z.object({ mcpServers: z.record(z.string(), z.unknown()) });

/**
 * The keys Claude Code documents for a server (https://code.claude.com/docs/en/mcp): the stdio and remote
 * ones agent-ci reads (its schemas'), a stdio server's `cwd`, a remote one's `headersHelper` and `oauth`.
 */
const CLAUDE_MCP_SERVER_KEYS = [
  ...new Set([...Object.keys(StdioServer.shape), ...Object.keys(RemoteServer.shape), "cwd"]),
  "headersHelper",
  "oauth",
];
const FILE_KEYS: KeyRules = {
  where: "",
  read: Object.keys(McpFile.shape),
  documented: Object.keys(McpFile.shape),
};
const serverKeys = (name: string, schema: typeof StdioServer | typeof RemoteServer): KeyRules => ({
  where: `MCP server "${name}"`,
  read: Object.keys(schema.shape),
  documented: CLAUDE_MCP_SERVER_KEYS,
});

interface Configured {
  name: string;
  source: string;
  /** Values taken from the environment into `url` (a remote server's): secrets, redacted everywhere. */
  expanded?: string[];
}
export type StdioServerConfig = z.infer<typeof StdioServer> & Configured;
export type RemoteServerConfig = z.infer<typeof RemoteServer> & Configured;
export type McpServerConfig = StdioServerConfig | RemoteServerConfig;

export const isStdio = (server: McpServerConfig): server is StdioServerConfig => "command" in server;

export class McpConfigError extends Error {
  override readonly name = "ConfigError";
}

export interface McpConfigResult {
  servers: McpServerConfig[];
  /**
   * Sources present but not used (the workspace's .mcp.json without trust), and keys agent-ci does not use,
   * for the log and the report.
   */
  ignored: IgnoredConfig[];
  /** Values from `env` and `headers`, and what `${VAR}` put into a URL: secrets, redacted everywhere. */
  secrets: string[];
}

/**
 * `${VAR}` / `${VAR:-default}` from `env`; a variable that is unset with no default is listed in `missing`,
 * and one whose value came from `env` in `taken` (name → value: a secret, whatever it holds).
 */
export function expandVars(
  text: string,
  env: NodeJS.ProcessEnv,
  missing: Set<string>,
  taken?: Map<string, string>,
): string {
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (whole, name: string, fallback?: string) => {
      const value = env[name];
      if (value !== undefined && value !== "") {
        taken?.set(name, value);
        return value;
      }
      if (fallback !== undefined) return fallback;
      missing.add(name);
      return whole;
    },
  );
}

/** One `--mcp-config` value: inline JSON when it starts with `{`, else a file. */
function readSource(value: string): { label: string; raw: unknown } {
  const label = isInlineJson(value) ? "--mcp-config (inline JSON)" : `--mcp-config ${value}`;
  return { label, raw: readJsonSource(value, label) };
}

/** A file's or a server's keys: a misspelt one is a config error, the unused ones are listed in `ignored`. */
function checkedKeys(value: unknown, rules: KeyRules, label: string, ignored: IgnoredConfig[]): void {
  const { problems, ignored: unused } = checkKeys(value, rules);
  if (problems[0]) throw new McpConfigError(`${label}: ${problems[0].reason}`);
  ignored.push(...unused.map((i) => ({ ...i, source: label })));
}

function parseServers(
  label: string,
  raw: unknown,
  env: NodeJS.ProcessEnv,
  ignored: IgnoredConfig[],
): McpServerConfig[] {
  checkedKeys(raw, FILE_KEYS, label, ignored);
  const top = McpFile.safeParse(raw);
  if (!top.success)
    throw new McpConfigError(`${label}: expected {"mcpServers": {...}}: ${z.prettifyError(top.error)}`);
  const servers: McpServerConfig[] = [];
  for (const [name, entry] of Object.entries(top.data.mcpServers)) {
    const fail = (why: string): never => {
      throw new McpConfigError(`${label}: MCP server "${name}": ${why}`);
    };
    if (!SERVER_NAME.test(name))
      fail("a server's name may hold only letters, digits, hyphens and underscores (at most 64)");
    const isRemote =
      typeof entry === "object" &&
      entry !== null &&
      ["http", "sse"].includes((entry as { type?: string }).type ?? "");
    const schema = isRemote ? RemoteServer : StdioServer;
    checkedKeys(entry, serverKeys(name, schema), label, ignored);
    const parsed = schema.safeParse(entry);
    if (!parsed.success) {
      const hasNeither =
        typeof entry === "object" && entry !== null && !("command" in entry) && !("url" in entry);
      fail(hasNeither ? "names no command (stdio) or url (type http or sse)" : z.prettifyError(parsed.error));
    }
    const missing = new Set<string>();
    const x = (text: string) => expandVars(text, env, missing);
    // Values from the environment in a command line or a URL: secrets as env and headers are.
    const taken = new Map<string, string>();
    const xs = (text: string) => expandVars(text, env, missing, taken);
    const mapValues = (m: Record<string, string>) =>
      Object.fromEntries(Object.entries(m).map(([k, v]) => [k, x(v)]));
    const data = parsed.data as z.infer<typeof StdioServer> | z.infer<typeof RemoteServer>;
    const server: McpServerConfig =
      "command" in data
        ? {
            ...data,
            command: xs(data.command),
            args: data.args.map(xs),
            env: mapValues(data.env),
            name,
            source: label,
          }
        : { ...data, url: xs(data.url), headers: mapValues(data.headers), name, source: label };
    if (missing.size) fail(`missing environment variables: ${[...missing].join(", ")}`);
    if (isStdio(server) && taken.size) fail(commandLineSecretProblem([...taken.keys()]));
    servers.push({ ...server, expanded: [...taken.values()] });
  }
  return servers;
}

/**
 * Why a stdio server's `command` and `args` take nothing from the environment: a process's command line is
 * readable by every user of the sandbox (/proc/<pid>/cmdline, `ps`; a container cannot hide it), the
 * agent's among them, while its environment is its own user's. So the value goes in through `env`.
 */
function commandLineSecretProblem(names: readonly string[]): string {
  const vars = names.map((n) => `\${${n}}`).join(", ");
  return (
    `${vars} in its command or args would put the value on the server's command line, which every process ` +
    `in the sandbox can read (/proc/<pid>/cmdline), the agent's too. Pass it in "env" instead ` +
    `(for example "env": {"${names[0]}": "\${${names[0]}}"}), where only the server's own user can read it; ` +
    "a server that takes it only as an argument can read it from that variable through a script of its image"
  );
}

/**
 * The run's servers from its sources, later sources overriding earlier ones of the same name (the
 * workspace's file first, then each `--mcp-config` in order).
 */
export function loadMcpConfig(options: {
  configs: readonly string[];
  workspace: string;
  trustWorkspace: boolean;
  env?: NodeJS.ProcessEnv;
}): McpConfigResult {
  const env = options.env ?? process.env;
  const byName = new Map<string, McpServerConfig>();
  const ignored: IgnoredConfig[] = [];
  const workspaceFile = path.join(options.workspace, WORKSPACE_MCP_FILE);
  const label = `workspace:${WORKSPACE_MCP_FILE}`;
  const admit = workspaceGate(options.trustWorkspace, ignored);
  if (fs.existsSync(workspaceFile) && admit({ source: label }, "its MCP servers")) {
    const raw = readJsonSource(workspaceFile, label);
    for (const s of parseServers(label, raw, env, ignored)) byName.set(s.name, s);
  }
  for (const value of options.configs) {
    const { label, raw } = readSource(value);
    for (const s of parseServers(label, raw, env, ignored)) byName.set(s.name, s);
  }
  const servers = [...byName.values()];
  const secrets = servers
    .flatMap((s) => [...Object.values(isStdio(s) ? s.env : s.headers), ...(s.expanded ?? [])])
    .filter(Boolean);
  return { servers, ignored, secrets };
}
