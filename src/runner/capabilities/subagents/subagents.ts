// Subagents (docs/subagents.md): the agent types a Task call may start, checked before any container; the
// runner that runs them once the run's services are made; background ones still running when the run ends are
// stopped before the patch is taken, and the record says which.
import { checkAgentModes, loadAgents, type LoadedAgents } from "../../agents/agents.js";
import type { AgentDefinition } from "../../agents/agents.js";
import { SubagentRunner, taskDescription } from "../../agents/subagents.js";
import { describeIgnored } from "../../../policy/workspace-trust.js";
import { createTaskTool, type SubagentLauncher } from "../../../tools/task.js";
import type { Capability } from "../capability.js";
import { subagentsSection } from "./record.js";

export const subagents: Capability = {
  name: "subagents",
  options: ["agents", "agents_dir", "trust_workspace_settings"],
  forRun: () => {
    let loaded: LoadedAgents | undefined;
    let runner: SubagentRunner | undefined;
    let stopped: string[] | undefined;
    return {
      // Agent definitions are checked before any container or model call: a bad one is a config error.
      prepare: ({ ctx, config, mode }) => {
        const agents = loadAgents({
          workspace: config.workspace,
          agentsDirs: config.agentsDir,
          agentsJson: config.agents,
          trustWorkspace: config.trustWorkspaceSettings,
        });
        checkAgentModes(agents.agents, mode);
        loaded = agents;
        for (const ignored of agents.ignored) ctx.log(describeIgnored(ignored));
      },
      bind: ({ services, parentTools, told }) => {
        runner = new SubagentRunner(services, { agents: loaded?.agents ?? [], parentTools, told });
      },
      // Before the runner (the first request asked ahead): the Task tool's definition only.
      tools: () => runner?.tools() ?? [createTaskTool(taskDefinitionOnly(loaded?.agents ?? []))],
      close: async (log) => {
        stopped = await runner?.stopBackground();
        for (const agent of stopped ?? []) log(`stopped the background subagent ${agent}: the run ended`);
      },
      childCalls: () => runner?.calls() ?? [],
      spent: () => (runner?.runs ?? []).map(({ loop }) => ({ usage: loop.usage, costUsd: loop.costUsd })),
      section: subagentsSection(() => ({ loaded, runner, stopped })),
    };
  },
};

/**
 * The Task tool as the first request describes it. The runner that runs a Task call is made once the sandbox
 * is up (run/first-turn.ts asks the first turn before it); this one only gives the tool's definition, and the loop checks that the definitions are the same.
 */
export function taskDefinitionOnly(agents: readonly AgentDefinition[]): SubagentLauncher {
  const unbound = (): never => {
    throw new Error("the Task tool of the first request's definition is not bound to a runner");
  };
  return { description: () => taskDescription(agents), unknownType: unbound, run: unbound, start: unbound };
}
