// `agent-ci`: the command line. `run` is the main job; `policy check|test` explain decisions; `report
// render` re-renders a saved report. The Action calls the same runner (src/runner/run.ts).
//
// What a command runs is loaded when it runs (`import()`): the options, their help and the exit codes come from
// small modules, so `--version` and `--help` start without loading a run's machinery (scripts/build.mjs splits
// the bundle into chunks along these imports).
import fs from "node:fs";
import path from "node:path";
import { Command, CommanderError, Help, InvalidArgumentError, Option } from "commander";
import { ConfigError } from "./errors.js";
import { PERMISSION_MODES } from "./policy/modes.js";
import { NETWORK_POLICIES } from "./policy/network.js";
import type { RunConfig, RunConfigInput } from "./runner/config.js";
import type { RunOutcome } from "./runner/run.js";
import {
  ATTEMPT_OPTIONS,
  type AttemptFlags,
  DEFAULT_OUT_PARENT,
  EXIT_CODES,
  OUTPUT_FORMATS,
  PROVIDERS,
  TASKS,
} from "./runner/options.js";
import { modelProvider, providerEnv, providersFromEnv } from "./runner/model/providers.js";
import { EGRESS_PRESET_NAMES } from "./sandbox/egress/presets.js";
import { jsonProgress } from "./runner/progress.js";
import { addPublishCommand } from "./publish/cli.js";
import { splitList } from "./github/inputs.js";
import { processLogs } from "./github/workflow-log.js";
import { parseSize } from "./text.js";
import { AGENT_CI_VERSION } from "./version.js";

// Everything the command prints goes through these: a workflow step's runner reads both streams, and no line of
// text (a run's progress, a model's words in it, a report) may be taken there for a workflow command.
const log = processLogs();

const collect = (value: string, previous: string[] = []) => [...previous, value];
const positiveInt = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError("a positive whole number");
  return n;
};
const positiveNumber = (value: string) => {
  const n = Number(value);
  if (!(n > 0)) throw new InvalidArgumentError("a positive number");
  return n;
};
const size = (value: string) => {
  try {
    return parseSize(value);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
};

/**
 * The run command's flags: RunConfig's own fields under the same names, except those the command line
 * takes in another form (seconds, a file, comma lists) or from the environment (the key, the base URL).
 */
type RunFlags = Omit<
  RunConfigInput,
  | "prompt"
  | "timeoutMs"
  | "includeIgnored"
  | "apiKey"
  | "authToken"
  | "oauthToken"
  | "federation"
  | "baseURL"
  | "reviewBase"
  | "reviewHead"
  | "region"
  | "projectId"
  | "awsCredentials"
  | "googleAccessToken"
  | "runnerNodeVersion"
> & {
  /** --task review: the commit the change is reviewed against, and its head. */
  base?: string;
  head?: string;
  prompt?: string;
  promptFile?: string;
  /** Seconds. */
  timeout?: number;
  /** Bare flag: every ignored file; with values: patterns, each possibly comma-separated. */
  includeIgnored?: boolean | string[];
  /** No progress lines on stderr. */
  quiet?: boolean;
  /** Progress lines as text (default) or one JSON object each (ProgressLine). */
  progress?: (typeof PROGRESS_FORMATS)[number];
  /** Print the first request's context and exit. */
  printContext?: boolean;
} & AttemptFlags;

const PROGRESS_FORMATS = ["text", "json"] as const;

/** The run command's help, by subject: every option is named in one group (a test keeps the list whole). */
export const RUN_HELP_GROUPS: Record<string, readonly string[]> = {
  Task: [
    "--workspace",
    "--prompt",
    "--prompt-file",
    "--script",
    "--task",
    "--base",
    "--head",
    "--resume",
    "--system-prompt-append",
    "--no-project-memory",
    "--memory-file",
    "--max-turns",
    "--max-budget-usd",
    "--timeout",
  ],
  Permissions: ["--mode", "--allow", "--deny", "--settings", "--trust-workspace-settings"],
  Sandbox: [
    "--image",
    "--image-registry",
    "--runtime",
    "--node-version",
    "--memory",
    "--cpus",
    "--workspace-size",
    "--env",
    "--setup",
    "--include-ignored",
    "--allow-weak-hardening",
  ],
  Network: [
    "--network",
    "--allow-domain",
    "--setup-allow-domain",
    "--allow-private-host",
    "--inject-secret",
    "--ca-cert",
  ],
  Extensions: ["--mcp-config", "--strict-mcp", "--agents-dir", "--agents", "--skills-dir", "--commands-dir"],
  Model: [
    "--model",
    "--provider",
    "--small-fast-model",
    "--max-tokens",
    "--thinking-budget",
    "--context-window",
    "--compact-at",
    "--no-compaction",
  ],
  Attempts: ["--attempts", "--parallel", "--attempt-prompts", "--stop-at-first-pass"],
  Output: [
    "--out",
    "--output-format",
    "--quiet",
    "--progress",
    "--verify",
    "--output-schema",
    "--print-context",
  ],
};

/** Puts each of a command's options under its group's heading; one not named anywhere goes under "Other:". */
function groupHelp(command: Command, groups: Record<string, readonly string[]>): void {
  for (const option of command.options) {
    const group = Object.keys(groups).find((name) => groups[name]?.includes(option.long ?? ""));
    option.helpGroup(`${group ?? "Other"}:`);
  }
}

/** Claude Code's spellings of agent-ci's flags: accepted, hidden from the help, folded into agent-ci's. */
export const CLAUDE_CODE_ALIASES = {
  permissionMode: "mode",
  allowedTools: "allow",
  disallowedTools: "deny",
  appendSystemPrompt: "systemPromptAppend",
} as const;

function policyOptions(command: Command): Command {
  return command
    .addOption(new Option("--permission-mode <mode>").choices(PERMISSION_MODES).hideHelp())
    .addOption(new Option("--allowedTools <rules>").argParser(collect).hideHelp())
    .addOption(new Option("--disallowedTools <rules>").argParser(collect).hideHelp())
    .hook("preAction", (cmd) => {
      for (const [alias, name] of Object.entries(CLAUDE_CODE_ALIASES)) {
        const value: unknown = cmd.getOptionValue(alias);
        if (value === undefined) continue;
        const ours: unknown = cmd.getOptionValue(name);
        cmd.setOptionValue(
          name,
          Array.isArray(value)
            ? [...((ours as string[]) ?? []), ...value.flatMap(splitList)]
            : (ours ?? value),
        );
        cmd.setOptionValue(alias, undefined);
      }
    })
    .addOption(
      new Option(
        "--mode <mode>",
        "permission mode (default: a trusted settings file's defaultMode, else \"default\"); Claude Code's --permission-mode, --allowedTools and --disallowedTools work too",
      ).choices(PERMISSION_MODES),
    )
    .option(
      "--allow <rule>",
      "allow rule in Claude Code syntax, e.g. 'Bash(npm test:*)' (repeatable)",
      collect,
      [],
    )
    .option("--deny <rule>", "deny rule, e.g. 'Read(./.env)' (repeatable; deny always wins)", collect, [])
    .option("--settings <file>", "a Claude Code settings file whose permissions and hooks you trust")
    .option(
      "--trust-workspace-settings",
      "let the workspace's .claude/settings.json grant permissions (off: it may only deny), its .claude/agents/ define subagents and its .mcp.json start servers (off: both ignored)",
    );
}

/**
 * The run's configuration from the flags and the environment, or the exit code of a configuration error
 * (said in one line).
 */
async function readRunConfig(flags: RunFlags): Promise<RunConfig | number> {
  const [{ parseRunConfig }, { anthropicCredential, credentialsFromEnv }] = await Promise.all([
    import("./runner/config.js"),
    import("./runner/model/credentials.js"),
  ]);
  const {
    promptFile,
    timeout,
    includeIgnored,
    base,
    head,
    quiet: _quiet,
    printContext: printOnly,
    ...same
  } = flags;
  const {
    progress: _progress,
    attempts: _a,
    parallel: _p,
    attemptPrompts: _ap,
    stopAtFirstPass: _s,
    ...fields
  } = same;
  const fromEnv = providersFromEnv(process.env);
  if (!flags.provider && fromEnv.length > 1) {
    log.err.text(
      "agent-ci: CLAUDE_CODE_USE_BEDROCK and CLAUDE_CODE_USE_VERTEX are both set: unset one, or give --provider",
    );
    return EXIT_CODES.config_error;
  }
  const provider = flags.provider ?? fromEnv[0] ?? "anthropic";
  const input: RunConfigInput = {
    ...fields,
    provider,
    ...providerEnv(provider, process.env),
    reviewBase: base,
    reviewHead: head,
    prompt: promptFile ? readPromptFile(promptFile) : flags.prompt,
    ...(modelProvider(provider).anthropicSignIn ? credentialsFromEnv(process.env) : {}),
    timeoutMs: timeout ? timeout * 1000 : undefined,
    includeIgnored: Array.isArray(includeIgnored)
      ? includeIgnored.flatMap((p) => p.split(",")).filter((p) => p.trim())
      : includeIgnored,
  };
  try {
    // --print-context calls no model, so it needs no key.
    return parseRunConfig(
      printOnly && !anthropicCredential(input) ? { ...input, apiKey: "(no model call)" } : input,
    );
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    log.err.text(`agent-ci: ${e.message}`);
    return EXIT_CODES.config_error;
  }
}

async function run(flags: RunFlags): Promise<number> {
  const [{ runAgent, endedBeforeAnyContainer }, { printContext }, { disposeAllSandboxes }] =
    await Promise.all([
      import("./runner/run.js"),
      import("./runner/instructions/memory/print-context.js"),
      import("./sandbox/docker-sandbox.js"),
    ]);
  const config = await readRunConfig(flags);
  if (typeof config === "number") return config;
  if (flags.printContext) {
    log.out.text(await printContext(config));
    return 0;
  }
  // The folder this run's output creates (the first missing one on the way to it), removed again when the run
  // ends in a config error before any container: there is nothing to keep, and the error is one line.
  const created = firstMissing(path.resolve(flags.out ?? DEFAULT_OUT_PARENT));
  if (flags.out && !created && !fs.statSync(flags.out).isDirectory()) {
    log.err.text(
      `agent-ci: --out ${flags.out} is a file: the patch and the report need a folder; give another --out`,
    );
    return EXIT_CODES.output_error;
  }

  // First SIGINT/SIGTERM: stop the run, write the patch and the record, remove the container.
  // A second one: remove the containers and leave at once.
  const cancel = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (cancel.signal.aborted) {
      void disposeAllSandboxes().finally(() => process.exit(EXIT_CODES.cancelled));
      return;
    }
    const stopping = `agent-ci: ${signal}: stopping the run; writing the patch and the report…`;
    if (json) json.log(stopping);
    else log.err.text(stopping);
    cancel.abort(new Error(`received ${signal}`));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  // A line per phase and per tool call on stderr, to a terminal or a CI log alike (a run can take half an
  // hour); with a machine-read stdout only to a terminal; none with --quiet.
  // --progress json: every one of those lines a JSON object (ProgressLine), asked for, so printed anyway.
  const progress =
    !flags.quiet &&
    (flags.progress === "json" || config.outputFormat === "text" || Boolean(process.stderr.isTTY));
  const json = progress && flags.progress === "json" ? jsonProgress((t) => log.err.json(t)) : undefined;
  const io = {
    stdout: (line: string) => log.out.json(line),
    stderr: (line: string) => {
      if (json) json.log(line);
      else if (progress) log.err.text(line);
    },
    progress: progress && !json,
    onProgress: json?.onProgress,
    onSecret: (value: string) => log.err.mask(value),
  };
  const { attempts } = flags;
  const outcome =
    attempts && attempts > 1
      ? await (
          await import("./runner/attempts/attempts.js")
        ).runAttemptsCommand(
          config,
          // Commander leaves --max-turns undefined unless given: then each attempt has the default.
          { ...flags, attempts, maxTurnsGiven: flags.maxTurns !== undefined },
          io,
          cancel.signal,
        )
      : await runAgent(config, io, cancel.signal);
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);

  if (endedBeforeAnyContainer(outcome)) {
    // An --out folder that was there before is the user's: left as it is.
    const made = created ?? (flags.out ? undefined : outcome.outDir);
    if (made) fs.rmSync(made, { recursive: true, force: true });
    const error = outcome.error ?? "configuration error";
    if (json) json.result({ exit_reason: outcome.exitReason, exit_code: EXIT_CODES.config_error, error });
    else log.err.text(`agent-ci: ${error}`);
    return EXIT_CODES.config_error;
  }
  json?.result({
    exit_reason: outcome.exitReason,
    exit_code: outcome.exitCode,
    report_path: outcome.reportPath,
    error: outcome.error,
  });

  const summary = closingSummary(config, outcome);
  if (summary) {
    if (config.outputFormat === "json") log.out.json(summary);
    else log.out.text(summary);
  }
  return outcome.exitCode;
}

/** What the run prints on stdout when it ends: one JSON object, or the text summary. */
function closingSummary(config: RunConfig, outcome: RunOutcome): string | undefined {
  const report = outcome.report;
  if (config.outputFormat === "json") {
    return `${JSON.stringify({ run_id: outcome.runId, exit_reason: outcome.exitReason, exit_code: outcome.exitCode, out_dir: outcome.outDir, patch_path: outcome.patchPath, report_path: outcome.reportPath, outcome: report?.outcome, changed_files: report?.patch.files.length ?? 0, cost_usd: report?.costUsd ?? 0, error: outcome.error })}\n`;
  } else if (config.outputFormat === "text") {
    const files = report?.patch.files ?? [];
    const lines = [
      "",
      `agent-ci: ${report?.outcome ?? "error"} (exit reason: ${outcome.exitReason}${outcome.error && outcome.exitReason !== "completed" ? `: ${outcome.error}` : ""})`,
      `  changed files: ${files.length}${files.length ? ` (+${report?.patch.added ?? 0} −${report?.patch.removed ?? 0})` : ""}`,
      ...files.slice(0, 20).map((f) => `    ${f.path}`),
      `  tool calls: ${report?.toolCalls.length ?? 0}, denied: ${report?.denials.length ?? 0}, turns: ${report?.turns.length ?? 0}, cost: $${(report?.costUsd ?? 0).toFixed(4)}`,
      report?.verify
        ? `  verify: ${report.verify.applied ? `exit ${report.verify.exitCode}` : "the patch did not apply"}`
        : "",
      report?.structuredOutput
        ? `  output: ${report.structuredOutput.path ? `${outcome.outDir}/${report.structuredOutput.path}` : `none (${report.structuredOutput.errors.join("; ")})`}`
        : "",
      outcome.review
        ? `  review: ${outcome.review.inline.length} finding(s) on lines of the diff, ${outcome.review.outside.length} outside it`
        : "",
      ...(outcome.review?.outside ?? [])
        .slice(0, 20)
        .map(({ finding, why }) => `    ${finding.path}:${finding.line} ${finding.severity} (${why})`),
      `  patch:  ${outcome.patchPath}`,
      `  report: ${outcome.reportPath ?? "(not written)"} (also report.md, report.html)`,
    ].filter((l) => l !== "");
    return `${lines.join("\n")}\n`;
  }
  return undefined;
}

function readPromptFile(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConfigError(
      `--prompt-file ${file}: ${code === "ENOENT" ? "no such file" : (e as Error).message}`,
    );
  }
}

/** The outermost folder on the way to `dir` that does not exist yet (undefined when `dir` exists). */
function firstMissing(dir: string): string | undefined {
  let missing: string | undefined;
  for (let at = dir; !fs.existsSync(at); at = path.dirname(at)) missing = at;
  return missing;
}

export function buildProgram(): Command {
  const program = new Command()
    .name("agent-ci")
    .description(
      "Run a Claude coding agent in a throwaway Docker container: every tool call sandboxed and decided by a non-interactive policy, the result a patch and a report.",
    )
    .version(AGENT_CI_VERSION)
    // A usage error is one line that says what to do, exit 2 (EXIT_CODES.config_error), never the whole help
    // (the subcommands inherit both settings).
    .exitOverride()
    .configureOutput({
      writeOut: (text) => log.out.text(text),
      writeErr: (text) => log.err.text(text),
      outputError: (text, write) => write(usageLine(text)),
      // Wrapped to the terminal, and to 80 columns in a log or a pipe.
      getOutHelpWidth: () => (process.stdout.isTTY ? process.stdout.columns : 80),
    })
    .configureHelp({
      minWidthToWrap: 20,
      optionDescription(this: Help, option: Option) {
        return Help.prototype.optionDescription.call(this, option).replace(" (default: [])", "");
      },
    });

  const runCommand = program
    .command("run")
    .description(
      "start a sandbox on a workspace, let the model (or a script) work through the tools, write the patch and the report",
    )
    .option("-w, --workspace <dir>", "the repository to work on (copied in; never written to)", ".")
    .option("-p, --prompt <text>", "the task")
    .option("--prompt-file <file>", "read the task from a file")
    .option(
      "--resume <out-dir|report.json>",
      "continue an earlier run: its workspace as it ended and its conversation, under this run's own policy (--prompt adds a message; see Resume below)",
    )
    .option(
      "--system-prompt-append <text>",
      "text appended to agent-ci's system prompt (Claude Code's --append-system-prompt works too)",
    )
    .addOption(new Option("--append-system-prompt <text>").hideHelp())
    .option("--script <file>", "run a file of tool calls (or a report.json's calls) instead of a model")
    .option("--model <id>", "Claude model id or alias: sonnet, opus, haiku (default: a current Sonnet)")
    .addOption(
      new Option(
        "--provider <name>",
        "where the model is served: anthropic (ANTHROPIC_API_KEY), bedrock (AWS credentials, AWS_REGION) or vertex (Google credentials, CLOUD_ML_REGION, ANTHROPIC_VERTEX_PROJECT_ID); default: CLAUDE_CODE_USE_BEDROCK=1 / CLAUDE_CODE_USE_VERTEX=1, else anthropic",
      ).choices(PROVIDERS),
    )
    .option("--small-fast-model <id>", "the model that reads WebFetch's pages (default: a current Haiku)")
    .option("--max-tokens <n>", "max output tokens per turn", positiveInt)
    .option("--thinking-budget <n>", "extended thinking budget in tokens", positiveInt)
    .option("--image <name>", "sandbox image (default: agent-ci's, pulled by digest or built on first use)")
    .option(
      "--image-registry <registry>",
      "a mirror of agent-ci's prebuilt images, e.g. registry.example.com/agent-ci (default: AGENT_CI_REGISTRY, else the release's)",
    )
    .option(
      "--runtime <name>",
      "OCI runtime of the sandbox's container, as the engine registers it (runsc: gVisor; default: the engine's)",
    )
    .option(
      "--node-version <version>",
      "the Bash tool's Node.js on any image (20, v20.11.1, >=18, lts/*, system: the image's own); default: the project's pin",
    )
    .addOption(
      new Option(
        "--network <policy>",
        "network in the sandbox: none, setup (only for --setup), allowlist (named domains through agent-ci's proxy), on",
      )
        .choices(NETWORK_POLICIES)
        .default("none"),
    )
    .option(
      "--allow-domain <domain>",
      `with --network allowlist: a host, *.domain, :port, or a preset (${EGRESS_PRESET_NAMES.join(", ")}); repeatable`,
      collect,
      [],
    )
    .option(
      "--allow-private-host <name[=address]>",
      "an allowed host that may resolve to a private address (never the metadata address); =ADDRESS maps the name (repeatable)",
      collect,
      [],
    )
    .option(
      "--inject-secret <NAME=header:host>",
      "the egress proxy puts the value of the environment variable NAME in that header for that host, over TLS; the sandbox's NAME holds a placeholder (repeatable)",
      collect,
      [],
    )
    .option(
      "--ca-cert <file>",
      "a PEM file of CA certificates commands in the sandbox trust besides the image's (a company proxy's); curl, git, pip, npm and Node read it",
    )
    .option(
      "--setup <command>",
      "run before the agent (repeatable); with --network setup through the setup allowlist, which ends before the agent starts",
      collect,
      [],
    )
    .option(
      "--setup-allow-domain <domain>",
      "with --network setup: what setup commands reach, as --allow-domain (default: every preset); repeatable",
      collect,
      [],
    )
    .option("--memory <size>", "memory limit, e.g. 4g", size)
    .option("--cpus <n>", "CPU limit", positiveNumber)
    .option("--workspace-size <size>", "size of the sandbox's /workspace, e.g. 4g", size)
    .option(
      "--mcp-config <file-or-json>",
      'MCP servers in Claude Code\'s format ({"mcpServers": {...}}), a file or inline JSON (repeatable); stdio servers run in the sandbox',
      collect,
      [],
    )
    .option("--strict-mcp", "an MCP server that fails to start is a config error (default: a warning)")
    .option(
      "--env <name>",
      "pass this environment variable into the sandbox, by name (repeatable)",
      collect,
      [],
    )
    .option(
      "--skills-dir <dir>",
      "a folder of skills (<name>/SKILL.md) the agent may load with the Skill tool (repeatable; the workspace's .claude/skills only with --trust-workspace-settings)",
      collect,
      [],
    )
    .option(
      "--commands-dir <dir>",
      "a folder of slash commands (<name>.md): a prompt starting /name args expands from it (repeatable; the workspace's .claude/commands only with --trust-workspace-settings)",
      collect,
      [],
    );
  policyOptions(runCommand)
    .option(
      "--no-project-memory",
      "do not tell the model the workspace's CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md and .claude/rules (nor the nested ones)",
    )
    .option(
      "--memory-file <file>",
      "a memory file of your own, told to the model as ~/.claude/CLAUDE.md is (repeatable)",
      collect,
      [],
    )
    .option(
      "--print-context",
      "print the first request's system prompt and first user message (memory, git snapshot, task) and exit: no model call, no container",
    )
    .option(
      "--agents-dir <dir>",
      "a folder of subagent definitions for Task (Markdown with YAML frontmatter: name, description, tools, model); repeatable",
      collect,
      [],
    )
    .option(
      "--agents <json>",
      'subagent definitions as Claude Code\'s --agents JSON ({"name": {description, prompt, tools, model}}), or a file holding it',
    )
    .option(
      "--max-turns <n>",
      "stop after this many model turns, subagents' included (default 50)",
      positiveInt,
    )
    .option("--max-budget-usd <usd>", "stop when the estimated cost reaches this", positiveNumber)
    .option("--timeout <seconds>", "wall-clock limit for the run (default 1800)", positiveInt)
    .option("--context-window <tokens>", "the model's context window (default: the model's)", positiveInt)
    .option(
      "--compact-at <tokens>",
      "make the conversation smaller once its prompt reaches this (default: 75% of the window)",
      positiveInt,
    )
    .option(
      "--no-compaction",
      "never make the conversation smaller: a prompt over the window ends the run (context_window)",
    )
    .option("--out <dir>", "output folder (default ./agent-ci-out/<run-id>)")
    .option("--attempts <n>", ATTEMPT_OPTIONS.attempts, positiveInt)
    .option("--parallel <k>", ATTEMPT_OPTIONS.parallel, positiveInt)
    .option("--attempt-prompts <file>", ATTEMPT_OPTIONS.attemptPrompts)
    .option("--stop-at-first-pass", ATTEMPT_OPTIONS.stopAtFirstPass)
    .option("-q, --quiet", "no progress lines on stderr (errors and the closing summary still print)")
    .addOption(
      new Option(
        "--progress <format>",
        "progress lines on stderr as text, or json: one object per line per phase and per tool call",
      )
        .choices(PROGRESS_FORMATS)
        .default("text"),
    )
    .addOption(
      new Option("--output-format <format>", "stdout: text, json, or stream-json (Claude Code's shape)")
        .choices(OUTPUT_FORMATS)
        .default("text"),
    )
    .option(
      "--verify <command>",
      "after the run, apply the patch in a fresh sandbox made as the agent's was (setup included) and run this command",
    )
    .option(
      "--output-schema <file>",
      "a JSON Schema (type object): the agent must end by returning an object valid against it, written to output.json",
    )
    .addOption(
      new Option(
        "--task <task>",
        "run: do the task; review: review --base...--head read-only and return findings",
      )
        .choices(TASKS)
        .default("run"),
    )
    .option(
      "--base <rev>",
      "--task review: the commit or ref the change is reviewed against (e.g. origin/main)",
    )
    .option("--head <rev>", "--task review: the reviewed commit (default HEAD)")
    .option(
      "--include-ignored [pattern...]",
      "also copy files that git ignores: all of them, or only those under matching paths (e.g. node_modules .venv; commas work too)",
    )
    .option(
      "--allow-weak-hardening",
      "run even when the engine did not apply a sandbox setting (the report says so)",
    )
    .addHelpText(
      "after",
      `
Exit codes: 0 completed; 1 the patch or report could not be written; 2 usage or
config error; 3 engine error; 4 model API error; 5 a limit was reached (turns,
budget, timeout, context window, denials); 6 verify failed; 7 no valid
structured output; 130 cancelled.

Examples:
  ANTHROPIC_API_KEY=… agent-ci run --prompt "Fix the failing test" \\
    --mode acceptEdits --allow 'Bash(npm test:*)'
  agent-ci run --resume agent-ci-out/<run-id> --prompt "Also handle empty lists"
  agent-ci run --workspace examples/buggy-calc \\
    --script examples/buggy-calc/fix.script.json --mode acceptEdits`,
    )
    .action(async (flags: RunFlags) => {
      process.exitCode = await run(flags);
    });
  groupHelp(runCommand, RUN_HELP_GROUPS);

  // `publish`: from a run's output folder to a pull request (src/publish/).
  addPublishCommand(program, log);

  program
    .command("choose")
    .description(
      "choose among runs' output folders (a matrix's attempts) by the rule of run --attempts, and write the chosen one, with the attempts table, to --out",
    )
    .argument("<folder...>", "output folders of runs of one task; attempt k is the one named …attempt-k")
    .requiredOption("--out <dir>", "where the chosen run's patch and report go")
    .action(async (folders: string[], flags: { out: string }) => {
      const line = (text: string) => log.err.text(text);
      const { chooseFromFolders } = await import("./runner/attempts/write-chosen.js");
      const outcome = await chooseFromFolders(folders, flags.out, {
        stdout: line,
        stderr: line,
        progress: false,
      });
      process.exitCode = outcome.exitCode;
    });

  const policy = program
    .command("policy")
    .description("explain permission decisions without running anything");
  policyOptions(
    policy
      .command("check")
      .description(
        "print the decision for one call, e.g. 'Bash(git push origin main)' or 'Edit(src/a.ts)', and why",
      )
      .argument(
        "<call>",
        "Tool(input): Bash(command), Read(path), Edit(path), Write(path), Grep(path), Glob(path)",
      ),
  ).action(
    async (
      call: string,
      flags: {
        mode?: RunFlags["mode"];
        allow: string[];
        deny: string[];
        settings?: string;
        trustWorkspaceSettings?: boolean;
      },
    ) => {
      const { policyCheck } = await import("./runner/run/policy-setup.js");
      process.exitCode = await policyCheck(call, flags, (line) => log.out.text(line));
    },
  );
  policyOptions(
    policy
      .command("test")
      .description(
        "re-decide every call of a recorded run under the rules and mode it recorded, plus the rules given here (--mode overrides), print the calls whose decision flips, and exit 1 if any does",
      )
      .requiredOption("--replay <report.json>", "the report of the run to replay"),
  ).action(
    async (flags: {
      replay: string;
      mode?: RunFlags["mode"];
      allow: string[];
      deny: string[];
      settings?: string;
      trustWorkspaceSettings?: boolean;
    }) => {
      const { policyReplay } = await import("./runner/run/policy-setup.js");
      process.exitCode = await policyReplay(flags.replay, flags, (line) => log.out.text(line));
    },
  );

  program
    .command("report")
    .description("work with saved reports")
    .command("render")
    .description("re-render a saved report.json as Markdown or HTML (to stdout)")
    .argument("<report.json>")
    .addOption(new Option("--format <format>", "md or html").choices(["md", "html"]).default("md"))
    .action(async (file: string, flags: { format: "md" | "html" }) => {
      const { renderReportFile } = await import("./report/index.js");
      const rendered = await renderReportFile(file, flags.format).catch((e: Error) => {
        throw new ConfigError(
          `cannot render ${file}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : e.message}; give a run's report.json (agent-ci-out/<run>/report.json)`,
        );
      });
      log.out.text(rendered);
    });
  return program;
}

/** Commander's "error: unknown option '--x'" as agent-ci's one line, with where to look. */
function usageLine(text: string): string {
  return `agent-ci: ${text.trim().replace(/^error: /, "")} (see --help)\n`;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (e) {
    // Commander has printed its line already; --help and --version end here too, with exit code 0.
    if (e instanceof CommanderError) {
      process.exitCode = e.exitCode === 0 ? 0 : EXIT_CODES.config_error;
      return;
    }
    log.err.text(`agent-ci: ${(e as Error).message}`);
    process.exitCode = e instanceof ConfigError ? EXIT_CODES.config_error : process.exitCode || 1;
  }
}
