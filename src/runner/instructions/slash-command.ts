// Slash commands in the prompt, as `claude -p "/name args"` runs them: a prompt whose first line is
// `/name args` becomes the command's Markdown with the arguments filled in. Further lines of the prompt (the
// event an Action run answers, say) follow the expanded text unchanged, so `$ARGUMENTS` is the rest of the
// first line only.
import { substituteArguments, type Catalogue, type Instruction } from "./instructions.js";

export interface ExpandedCommand {
  command: Instruction;
  args: string;
  /** The prompt the run starts with. */
  prompt: string;
}

export type Expansion =
  | { kind: "none" }
  | { kind: "expanded"; expanded: ExpandedCommand }
  | { kind: "unknown"; name: string; message: string };

/** `/name` or `/ns:name`, then whitespace or the end of the line; `/usr/bin …` is a path, not a command. */
const COMMAND_LINE = /^\/([A-Za-z0-9][A-Za-z0-9_.:-]{0,127})(?:[ \t]+([^\n]*))?$/;

export function expandSlashCommand(prompt: string, catalogue: Pick<Catalogue, "commands">): Expansion {
  const start = prompt.replace(/^\s+/, "");
  const newline = start.indexOf("\n");
  const first = (newline === -1 ? start : start.slice(0, newline)).replace(/\r$/, "").trimEnd();
  const match = COMMAND_LINE.exec(first);
  if (!match) return { kind: "none" };
  const name = match[1] as string;
  const args = (match[2] ?? "").trim();
  const command = catalogue.commands.find((c) => c.name === name);
  if (!command) {
    const known = catalogue.commands.map((c) => `/${c.name}`);
    return {
      kind: "unknown",
      name,
      message: `the prompt starts with the slash command /${name}, which is not one of this run's commands (${known.length ? `known: ${known.join(", ")}` : "none are loaded: give --commands-dir, the Action's commands input, or --trust-workspace-settings for the workspace's .claude/commands"})`,
    };
  }
  const rest = newline === -1 ? "" : start.slice(newline + 1).replace(/^(?:[ \t]*\r?\n)+/, "");
  const body = substituteArguments(command.body, args).replace(/\n*$/, "");
  return {
    kind: "expanded",
    expanded: { command, args, prompt: rest.trim() ? `${body}\n\n${rest}` : body },
  };
}
