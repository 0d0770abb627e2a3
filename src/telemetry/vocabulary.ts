// Claude Code's names for what agent-ci also does (test/fixtures/claude-code-telemetry/ holds what Claude Code
// 2.1.328 sent), and agent-ci's own under `agent_ci.`: one place, so a dashboard's names are spelled once.
import type { CallDecision } from "../policy/schema.js";

export const METRICS = {
  session: { name: "claude_code.session.count", unit: "", description: "Count of CLI sessions started" },
  lines: {
    name: "claude_code.lines_of_code.count",
    unit: "",
    description:
      "Count of lines of code modified, with the 'type' attribute indicating whether lines were added or removed and the 'model' attribute indicating which model made the change",
  },
  cost: { name: "claude_code.cost.usage", unit: "USD", description: "Cost of the Claude Code session" },
  tokens: { name: "claude_code.token.usage", unit: "tokens", description: "Number of tokens used" },
  codeEditDecision: {
    name: "claude_code.code_edit_tool.decision",
    unit: "",
    description:
      "Count of code editing tool permission decisions (accept/reject) for Edit, Write, and NotebookEdit tools",
  },
  activeTime: {
    name: "claude_code.active_time.total",
    unit: "s",
    description: "Total active time in seconds",
  },
  runs: {
    name: "agent_ci.run.count",
    unit: "",
    description: "Count of agent-ci runs ended, by outcome and exit reason",
  },
  egressBytes: {
    name: "agent_ci.egress.bytes",
    unit: "By",
    description: "Bytes through the egress proxy, by host, decision and direction",
  },
} as const;

export const SPANS = {
  run: "agent_ci.run",
  interaction: "claude_code.interaction",
  llmRequest: "claude_code.llm_request",
  tool: "claude_code.tool",
  toolExecution: "claude_code.tool.execution",
  /** A sandbox phase: agent_ci.phase.<name> (engine, images, container, start, copy-in, …, teardown). */
  phasePrefix: "agent_ci.phase.",
} as const;

/** Claude Code's event names (log records, `event.name`); their bodies are `claude_code.<name>`. */
export const CLAUDE_CODE_EVENTS = [
  "user_prompt",
  "tool_decision",
  "api_request",
  "api_error",
  "tool_result",
  "assistant_response",
] as const;
export type ClaudeCodeEvent = (typeof CLAUDE_CODE_EVENTS)[number];

/** agent-ci's own events (bodies `agent_ci.<name>`). */
export const AGENT_CI_EVENTS = ["egress_connection", "verify", "run_end", "patch_finding"] as const;
export type AgentCiEvent = (typeof AGENT_CI_EVENTS)[number];

/** Edit, Write and NotebookEdit: the tools Claude Code's code_edit_tool.decision counts. */
export const CODE_EDIT_TOOLS: ReadonlySet<string> = new Set(["Edit", "Write", "NotebookEdit", "MultiEdit"]);

/** What Claude Code puts where it does not log content. */
export const NOT_LOGGED = "<REDACTED>";

/** Claude Code's tool_decision `source`: config for a rule or the mode's default, hook for a hook's block. */
export function decisionSource(decision: CallDecision | undefined, blockedByHook: boolean): string {
  if (blockedByHook) return "hook";
  return decision ? "config" : "validation";
}

const LANGUAGES: Record<string, string> = {
  js: "JavaScript",
  mjs: "JavaScript",
  cjs: "JavaScript",
  jsx: "JavaScript",
  ts: "TypeScript",
  tsx: "TypeScript",
  py: "Python",
  go: "Go",
  rs: "Rust",
  java: "Java",
  rb: "Ruby",
  sh: "Shell",
  md: "Markdown",
  json: "JSON",
  yml: "YAML",
  yaml: "YAML",
  c: "C",
  h: "C",
  cpp: "C++",
  cs: "C#",
  php: "PHP",
  css: "CSS",
  html: "HTML",
};

/** The `language` attribute of code_edit_tool.decision, from the file's extension (unknown when none fits). */
export function languageOf(filePath: unknown): string {
  if (typeof filePath !== "string") return "unknown";
  const ext = /\.([A-Za-z0-9]+)$/.exec(filePath)?.[1]?.toLowerCase();
  return (ext && LANGUAGES[ext]) ?? "unknown";
}
