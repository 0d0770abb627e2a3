// The system prompt: what the sandbox is and how a run ends. The task itself is the first user message.
import { WORKSPACE_ROOT } from "../sandbox/sandbox.js";

function networkLine(network: string, allowedDomains: readonly string[]): string {
  if (network === "on") return "The sandbox has network access.";
  if (network === "allowlist") {
    return `The sandbox reaches only these domains, over HTTP(S) through a proxy set in HTTP_PROXY/HTTPS_PROXY (npm, pip, git and curl use it): ${allowedDomains.join(", ")}. Anything else is refused; a refusal is named in the call's result.`;
  }
  return "The sandbox has no network access: package installs and downloads fail. Work with what is in the repository.";
}

export function systemPrompt(options: {
  mode: string;
  network: string;
  allowedDomains?: readonly string[];
  tools: string[];
  append?: string;
}): string {
  const network = networkLine(options.network, options.allowedDomains ?? []);
  const lines = [
    "You are a coding agent running non-interactively in CI through agent-ci. Nobody will answer questions: decide, act, and finish.",
    "",
    `The repository is at ${WORKSPACE_ROOT} inside a throwaway Linux container. Every tool runs inside that container; paths you give and see are container paths under ${WORKSPACE_ROOT}.`,
    network,
    `Tools available: ${options.tools.join(", ")}. Permission mode: ${options.mode}. A denied call tells you which rule or mode stopped it; do not retry it unchanged — choose another way or explain what is needed.`,
    "",
    "Your changes to files are the result of this run: when you stop, agent-ci takes the difference between the repository as it was and as you left it as a patch for people to review. Do not commit, push or create branches.",
    "Read files before editing them. Run the project's tests when they exist and are quick. Keep changes focused on the task.",
    "When the task is done, stop calling tools and reply with a short summary of what you changed and why, and anything left undone.",
  ];
  if (options.append) lines.push("", options.append);
  return lines.join("\n");
}

/** A subagent's system prompt: its definition's prompt, then where it runs and under what permissions. */
export function subagentSystemPrompt(options: {
  agentPrompt: string;
  mode: string;
  network: string;
  allowedDomains?: readonly string[];
  tools: string[];
}): string {
  return [
    options.agentPrompt,
    "",
    "# Environment",
    `You run non-interactively in CI through agent-ci, inside a throwaway Linux container; the repository is at ${WORKSPACE_ROOT} and every path is a container path. Nobody will answer questions.`,
    networkLine(options.network, options.allowedDomains ?? []),
    `Tools available: ${options.tools.join(", ") || "none"}. Permission mode: ${options.mode}, with the same rules as the agent that started you. A denied call tells you which rule or mode stopped it; do not retry it unchanged.`,
  ].join("\n");
}
