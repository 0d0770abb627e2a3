// `agent-ci`: the command line. `run` is the main job; `policy check|test` explain decisions; `report
// render` re-renders a saved report; `cache ls|rm` shows and removes the setup cache's entries. The Action calls
// the same runner (src/runner/run.ts).
//
// What a command runs is loaded when it runs (`import()`): the options, their help and the exit codes come from
// small modules, so `--version` and `--help` start without loading a run's machinery (scripts/build.mjs splits
// the bundle into chunks along these imports).
import fs from "node:fs";
import path from "node:path";
import { Command, CommanderError, Help, Option } from "commander";
import { ConfigError } from "./errors.js";
import type { RunConfig, RunConfigInput } from "./runner/config.js";
import type { RunOutcome } from "./runner/run.js";
import type { Capability } from "./runner/capabilities/capability.js";
import { DEFAULT_OUT_PARENT, EXIT_CODES } from "./runner/options.js";
import { addTableOptions, CLAUDE_CODE_ALIASES, RUN_HELP_GROUPS, tableOption } from "./options/commander.js";
import { DEFAULT_SETUP_CACHE_MAX_AGE_DAYS, type PROGRESS_FORMATS } from "./options/values.js";
import { modelProvider, providerEnv, providersFromEnv } from "./runner/model/providers.js";
import { jsonProgress } from "./runner/progress.js";
import { addPublishCommand } from "./publish/cli.js";
import { addBatchCommand, addQueueCommand } from "./fleet/cli.js";
import { splitList } from "./github/input-conventions.js";
import { processLogs } from "./github/workflow-log.js";
import { AGENT_CI_VERSION } from "./version.js";
import { telemetry } from "./telemetry/capability.js";

// Everything the command prints goes through these: a workflow step's runner reads both streams, and no line of
// text (a run's progress, a model's words in it, a report) may be taken there for a workflow command.
const log = processLogs();

/**
 * The run command's flags: RunConfig's own fields under the same names, except those the command line
 * takes in another form (seconds, a file, comma lists), from the environment (the key, the base URL) or from
 * another flag (the attempts' pool of turns: whether --max-turns was given).
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
  | "turnsPool"
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
};

export { RUN_HELP_GROUPS };

/** Puts each of a command's options under its group's heading; one not named anywhere goes under "Other:". */
function groupHelp(command: Command, groups: Record<string, readonly string[]>): void {
  for (const option of command.options) {
    const group = Object.keys(groups).find((name) => groups[name]?.includes(option.long ?? ""));
    option.helpGroup(`${group ?? "Other"}:`);
  }
}

export { CLAUDE_CODE_ALIASES };

/**
 * The table's options for `run` or `policy`, with Claude Code's spellings (hidden) folded into agent-ci's
 * flags before the action: a list adds up, a single value counts where agent-ci's own flag is not given.
 */
function tableOptions(command: Command, which: "run" | "policy"): Command {
  return addTableOptions(command, which).hook("preAction", (cmd) => {
    for (const [alias, name] of Object.entries(CLAUDE_CODE_ALIASES)) {
      const value: unknown = cmd.getOptionValue(alias);
      if (value === undefined) continue;
      const ours: unknown = cmd.getOptionValue(name);
      cmd.setOptionValue(
        name,
        Array.isArray(value) ? [...((ours as string[]) ?? []), ...value.flatMap(splitList)] : (ours ?? value),
      );
      cmd.setOptionValue(alias, undefined);
    }
  });
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
  const { progress: _progress, ...fields } = same;
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
    // Commander leaves --max-turns undefined unless given: then each attempt has the default.
    turnsPool: flags.maxTurns !== undefined,
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

async function run(flags: RunFlags, seen?: (outcome: RunOutcome) => void): Promise<number> {
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
    capabilities: [cliTelemetry(endedBeforeAnyContainer)],
  };
  const outcome = await runAgent(config, io, cancel.signal);
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  seen?.(outcome);

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

  const summary = seen ? undefined : closingSummary(config, outcome);
  if (summary) {
    if (config.outputFormat === "json") log.out.json(summary);
    else log.out.text(summary);
  }
  return outcome.exitCode;
}

/**
 * The run's telemetry once its record is written (telemetry/capability.ts): none for a config error before any
 * container, which leaves no output; the gRPC exporter is loaded only when asked for.
 */
function cliTelemetry(skip: (ended: Pick<RunOutcome, "exitReason" | "report">) => boolean): Capability {
  return telemetry({
    env: process.env,
    warn: (line) => log.err.text(line),
    grpc: () => import("./telemetry/otlp-grpc.js"),
    skip,
  });
}

/** One task of `agent-ci batch`: its options parsed by the run command itself, then run by its own function. */
async function runTask(argv: readonly string[]) {
  const program = buildProgram();
  let flags: RunFlags | undefined;
  program.commands.find((c) => c.name() === "run")?.action((given: RunFlags) => void (flags = given));
  await program.parseAsync(["run", ...argv], { from: "user" });
  let outcome: RunOutcome | undefined;
  const exitCode = flags ? await run(flags, (o) => (outcome = o)) : EXIT_CODES.config_error;
  const { runId, exitReason, outDir, error, report } = outcome ?? {};
  return { exitCode, runId, exitReason, outDir, error, costUsd: report?.costUsd };
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

  addRunCommand(program);
  // `publish`: from a run's output folder to a pull request (src/publish/).
  addPublishCommand(program, log);
  // `queue`: the work queue and its ledger (src/fleet/).
  addQueueCommand(program, log);
  addBatchCommand(program, log, runTask);
  addCacheCommand(program);
  addChooseCommand(program);
  addPolicyCommand(program);
  addReportCommand(program);
  return program;
}

/** `agent-ci run`: one run on a workspace, its flags from the option table. */
function addRunCommand(program: Command): void {
  const runCommand = program
    .command("run")
    .description(
      "start a sandbox on a workspace, let the model (or a script) work through the tools, write the patch and the report",
    );
  tableOptions(runCommand, "run")
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
}

/** `agent-ci choose`: the chosen attempt of a matrix's runs (src/runner/capabilities/attempts/). */
function addChooseCommand(program: Command): void {
  program
    .command("choose")
    .description(
      "choose among runs' output folders (a matrix's attempts) by the rule of run --attempts, and write the chosen one, with the attempts table, to --out",
    )
    .argument("<folder...>", "output folders of runs of one task; attempt k is the one named …attempt-k")
    .requiredOption("--out <dir>", "where the chosen run's patch and report go")
    .action(async (folders: string[], flags: { out: string }) => {
      const line = (text: string) => log.err.text(text);
      const { chooseFromFolders } = await import("./runner/capabilities/attempts/write-chosen.js");
      const outcome = await chooseFromFolders(folders, flags.out, {
        stdout: line,
        stderr: line,
        progress: false,
      });
      process.exitCode = outcome.exitCode;
    });
}

/** `agent-ci policy check|test`: the policy's decisions without a run. */
function addPolicyCommand(program: Command): void {
  const policy = program
    .command("policy")
    .description("explain permission decisions without running anything");
  tableOptions(
    policy
      .command("check")
      .description(
        "print the decision for one call, e.g. 'Bash(git push origin main)' or 'Edit(src/a.ts)', and why",
      )
      .argument(
        "<call>",
        "Tool(input): Bash(command), Read(path), Edit(path), Write(path), Grep(path), Glob(path)",
      ),
    "policy",
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
  tableOptions(
    policy
      .command("test")
      .description(
        "re-decide every call of a recorded run under the rules and mode it recorded, plus the rules given here (--mode overrides), print the calls whose decision flips, and exit 1 if any does",
      )
      .requiredOption("--replay <report.json>", "the report of the run to replay"),
    "policy",
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
}

/** `agent-ci report render`: a saved report.json as Markdown or HTML. */
function addReportCommand(program: Command): void {
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
}

/** `agent-ci cache ls|rm`: the setup cache's entries on the engine (docs/setup-cache.md). */
function addCacheCommand(program: Command): void {
  const cache = program
    .command("cache")
    .description(
      "list and remove the setup cache's snapshots and package-cache volumes on the engine (docs/setup-cache.md)",
    );
  const load = async () => {
    const [entries, { connectEngine }] = await Promise.all([
      import("./sandbox/setup/entries.js"),
      import("./sandbox/engine/engine.js"),
    ]);
    return { ...entries, docker: await connectEngine() };
  };
  const maxAge = (flags: { setupCacheMaxAge?: number }) =>
    flags.setupCacheMaxAge ?? DEFAULT_SETUP_CACHE_MAX_AGE_DAYS;
  cache
    .command("ls")
    .description(
      "list the entries, newest first: key (packages for a package-cache volume), namespace (trusted, or pr-<n>), the run that made it, the size of its own layer (a volume's size), its age",
    )
    .addOption(tableOption("setup_cache_max_age"))
    .option("--json", "one JSON array of the entries instead of the table")
    .action(async (flags: { setupCacheMaxAge?: number; json?: boolean }) => {
      const { listCacheEntries, formatEntries, docker } = await load();
      const entries = await listCacheEntries(docker);
      if (flags.json) log.out.json(`${JSON.stringify(entries, null, 2)}\n`);
      else log.out.text(formatEntries(entries, maxAge(flags), Date.now()));
    });
  cache
    .command("rm")
    .description(
      "remove the entries of one key (whole, or its start as ls shows it), --all of them, or the --expired ones",
    )
    .argument("[key]", "the key of the entries to remove, or a package-cache volume's name")
    .option("--all", "remove every entry")
    .option("--expired", "remove the entries older than the max age (--setup-cache-max-age)")
    .addOption(tableOption("setup_cache_max_age"))
    .action(
      async (
        key: string | undefined,
        flags: { all?: boolean; expired?: boolean; setupCacheMaxAge?: number },
      ) => {
        if ([key !== undefined, flags.all, flags.expired].filter(Boolean).length !== 1)
          throw new ConfigError("cache rm: give one of a key, --all or --expired");
        const {
          listCacheEntries,
          selectEntries,
          removeCacheEntries,
          CacheSelectionError,
          entryName,
          docker,
        } = await load();
        const entries = await listCacheEntries(docker);
        let chosen;
        try {
          chosen = selectEntries(
            entries,
            key !== undefined
              ? { key }
              : flags.all
                ? { all: true }
                : { expired: true, maxAgeDays: maxAge(flags), now: Date.now() },
          );
        } catch (e) {
          throw e instanceof CacheSelectionError ? new ConfigError(`cache rm: ${e.message}`) : e;
        }
        const done = await removeCacheEntries(docker, chosen);
        for (const { entry, error } of done)
          log.out.text(`${error ? "kept" : "removed"} ${entryName(entry)}${error ? `: ${error}` : ""}\n`);
        if (!done.length) log.out.text("no setup cache entries to remove\n");
        if (done.some((d) => d.error)) process.exitCode = 1;
      },
    );
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
