// The one writer of what agent-ci prints where a GitHub Actions runner reads it: both Actions' stdout, and the
// CLI's stdout and stderr in a workflow step (GITHUB_ACTIONS=true). The runner reads that output a line at a
// time (a line ends at "\r\n", "\r" or "\n") and acts on a line that, after its leading whitespace, starts
// `::name …::` (`::stop-commands::`, `::add-mask::`, `::error file=…::`, `::set-output`, …), or that holds
// `##[name …]` anywhere (the older form). So what is printed comes in two kinds, and their types keep them
// apart:
// - a WorkflowCommand: agent-ci's own, built from its parts and escaped as the runner unescapes them. Nothing
//   else becomes a command.
// - text: every other line, agent-ci's words and what the model, a tool, a repository or a pull request wrote
//   alike (a progress line holds a Bash command, an error holds a path). Written as whole lines, each inert:
//   a line whose first visible characters are `::` gets a `\` before them, and `##[` becomes `##\[` (in a
//   JSON line `##\u005b`, the same string to a JSON reader). Nothing else changes, so the log reads as it was
//   written; `\::` and `##\[` also show as `::` and `##[` in Markdown.
// Commands are never turned off (no text can stop them), so a mask written at any time is obeyed. A value is
// masked once per log.

/** The annotation commands. */
export type AnnotationLevel = "error" | "warning" | "notice";

/** Where an annotation points, and its title (the runner's property names). */
export interface AnnotationProperties {
  title?: string;
  file?: string;
  line?: number;
  endLine?: number;
  col?: number;
  endColumn?: number;
}

/** A workflow command agent-ci gives the runner: the only output the runner acts on. */
export type WorkflowCommand =
  | { name: "add-mask"; value: string }
  | { name: AnnotationLevel; message: string; properties?: AnnotationProperties }
  | { name: "group"; title: string }
  | { name: "endgroup" };

/** A command's message as the runner unescapes it (`%25`, `%0D`, `%0A`; `%` first). */
function escapeData(text: string): string {
  return text.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

/** A property value as the runner unescapes it: the message's escapes, and `:` and `,`, which end one. */
function escapeProperty(text: string): string {
  return escapeData(text).replaceAll(":", "%3A").replaceAll(",", "%2C");
}

/** The command as one line (without its line end). */
export function commandLine(command: WorkflowCommand): string {
  switch (command.name) {
    case "add-mask":
      return `::add-mask::${escapeData(command.value)}`;
    case "group":
      return `::group::${escapeData(command.title)}`;
    case "endgroup":
      return "::endgroup::";
    default: {
      const properties = Object.entries(command.properties ?? {})
        .filter(([, value]) => value !== undefined && value !== "")
        .map(([key, value]) => `${key}=${escapeProperty(String(value))}`);
      return `::${command.name}${properties.length ? ` ${properties.join(",")}` : ""}::${escapeData(command.message)}`;
    }
  }
}

// The runner finds `::` and `##[` with culture-sensitive searches, which skip controls and zero-width
// characters; those count as nothing between the marks here too. Whitespace is .NET's (what TrimStart removes),
// with the byte-order mark as well; "\r" and "\n" end lines.
const IGNORED = String.raw`\0-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\p{Default_Ignorable_Code_Point}`;
const LEADING = String.raw`[\t\v\f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000${IGNORED}]*`;
const COMMAND_AT_LINE_START = new RegExp(String.raw`(^|[\r\n])(${LEADING})(?=:[${IGNORED}]*:)`, "gu");
const OLD_COMMAND = new RegExp(String.raw`#([${IGNORED}]*)#([${IGNORED}]*)\[`, "gu");

/** Text no line of which the runner takes for a command; lines that could not be one are unchanged. */
export function inertText(text: string): string {
  return text.replace(COMMAND_AT_LINE_START, "$1$2\\").replace(OLD_COMMAND, "#$1#$2\\[");
}

/** A line of JSON made inert without changing its value (`[` is `\u005b`; a JSON line never starts `::`). */
export function inertJsonLine(line: string): string {
  return line.replace(COMMAND_AT_LINE_START, "$1$2\\").replace(OLD_COMMAND, "#$1#$2\\u005b");
}

export interface WorkflowLogOptions {
  /** Writes a chunk of whole lines (looked up at each write: tests capture the stream). */
  write: (chunk: string) => void;
  /** Whether a runner reads this output: then text is made inert and masks are written. */
  runner: boolean;
  /** The values masked so far, shared by the streams of one process (the runner's masks are the job's). */
  masked?: Set<string>;
}

/** One stream of the log: text of any origin, and agent-ci's own commands. */
export class WorkflowLog {
  readonly runner: boolean;
  private readonly write: (chunk: string) => void;
  private readonly masked: Set<string>;

  constructor(options: WorkflowLogOptions) {
    this.write = options.write;
    this.runner = options.runner;
    this.masked = options.masked ?? new Set();
  }

  /** Text for a person, whatever wrote it: whole lines (a line end is added), none of them a command. */
  text(text: string): void {
    this.lines(this.runner ? inertText(text) : text);
  }

  /** One line of JSON (machine output), inert with its value unchanged. */
  json(line: string): void {
    this.lines(this.runner ? inertJsonLine(line) : line);
  }

  /** One of agent-ci's own commands. */
  command(command: WorkflowCommand): void {
    this.lines(commandLine(command));
  }

  /** Fails the step with this message (an error annotation, and exit code 1), as core.setFailed does. */
  fail(message: string): void {
    process.exitCode = 1;
    this.command({ name: "error", message });
  }

  /** Masks a secret in the runner's log from here on (once per value; nothing when no runner reads it). */
  mask(value: string): void {
    if (!this.runner || !value.trim() || this.masked.has(value)) return;
    this.masked.add(value);
    this.command({ name: "add-mask", value });
  }

  private lines(text: string): void {
    this.write(text.endsWith("\n") ? text : `${text}\n`);
  }
}

/** An Action's log: its stdout, which the runner reads. */
export function actionLog(): WorkflowLog {
  return new WorkflowLog({ write: (chunk) => process.stdout.write(chunk), runner: true });
}

/** The CLI's two streams; a runner reads them when the CLI runs in a workflow step. */
export interface ProcessLogs {
  out: WorkflowLog;
  /** Also where masks go: machine output on stdout stays JSON. */
  err: WorkflowLog;
}

export function processLogs(env: Record<string, string | undefined> = process.env): ProcessLogs {
  const runner = env.GITHUB_ACTIONS === "true";
  const masked = new Set<string>();
  return {
    out: new WorkflowLog({ write: (chunk) => process.stdout.write(chunk), runner, masked }),
    err: new WorkflowLog({ write: (chunk) => process.stderr.write(chunk), runner, masked }),
  };
}
