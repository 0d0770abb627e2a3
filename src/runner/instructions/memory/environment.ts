// The environment facts of the system prompt, as Claude Code lists them (working directory, whether it is a
// git repository, platform, shell, today's date, the model), for the sandbox the model's tools run in.
import { WORKSPACE_ROOT } from "../../../sandbox/sandbox.js";

export interface EnvironmentFacts {
  workingDirectory: string;
  isGitRepository: boolean;
  platform: "linux";
  shell: "bash";
  /** Today's date (UTC), YYYY-MM-DD. */
  date: string;
  /** The model's id; absent in a scripted run. */
  model?: string;
}

export function environmentFacts(options: {
  isGitRepository: boolean;
  model?: string;
  now?: Date;
}): EnvironmentFacts {
  return {
    workingDirectory: WORKSPACE_ROOT,
    isGitRepository: options.isGitRepository,
    platform: "linux",
    shell: "bash",
    date: (options.now ?? new Date()).toISOString().slice(0, 10),
    ...(options.model ? { model: options.model } : {}),
  };
}

/** The system prompt's `# Environment` section. */
export function environmentSection(facts: EnvironmentFacts): string {
  const lines = [
    "# Environment",
    "You have been invoked in the following environment:",
    ` - Primary working directory: ${facts.workingDirectory}`,
    ` - Is a git repository: ${facts.isGitRepository}`,
    ` - Platform: ${facts.platform}`,
    ` - Shell: ${facts.shell}`,
  ];
  if (facts.model) lines.push("", `You are powered by the model ${facts.model}.`);
  lines.push("", `Today's date is ${facts.date}.`);
  return lines.join("\n");
}
