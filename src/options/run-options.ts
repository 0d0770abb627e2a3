// The run's limits and its results: turns, budget, attempts, the clock, verify, what is copied in, and the
// Action's own GitHub work (triggers, comment, artifact, failing the step).
import { TASKS } from "./values.js";
import { ACTION_ONLY, type OptionDef } from "./types.js";

const OUT_FOLDER = "the output folder (`--out`) holds what the artifact would";
/** `max_turns`, `--max-turns`, RunConfig's maxTurns. */
export const DEFAULT_MAX_TURNS = 50;
/** `timeout_minutes`; `--timeout` takes seconds, RunConfig milliseconds. */
export const DEFAULT_TIMEOUT_MINUTES = 30;

export const RUN_OPTIONS = {
  max_turns: {
    action: { default: String(DEFAULT_MAX_TURNS), description: "Stop after this many model turns." },
    cli: {
      flags: "--max-turns <n>",
      description: `stop after this many model turns, subagents' included (default ${DEFAULT_MAX_TURNS})`,
      group: "Task",
      parse: "positiveInt",
    },
    claudeCode: ["--max-turns"],
  },
  max_budget_usd: {
    action: {
      default: "",
      description: "Stop when the estimated cost reaches this many US dollars. Empty means no cost limit.",
    },
    cli: {
      flags: "--max-budget-usd <usd>",
      description: "stop when the estimated cost reaches this",
      group: "Task",
      parse: "positiveNumber",
    },
    claudeCode: ["--max-budget-usd"],
  },
  attempts: {
    action: {
      default: "1",
      description:
        "Make this many attempts at the task, each in its own sandbox, and keep the one verify passes (docs/attempts.md); max_budget_usd bounds them together.",
    },
    cli: {
      flags: "--attempts <n>",
      description:
        "make N attempts at the task, each in its own sandbox with its own record (attempt-k/); the output folder's patch and report are the chosen one's (see docs/attempts.md)",
      group: "Attempts",
      parse: "positiveInt",
    },
  },
  attempt: {
    action: {
      default: "",
      description:
        "In a matrix of attempts (set it to the matrix value): this job's attempt number, appended to the artifact name as -attempt-k for the choose action (docs/attempts.md).",
      cli: "`agent-ci choose` over the runs' output folders (a matrix job's artifact is one attempt)",
    },
  },
  timeout_minutes: {
    action: {
      default: String(DEFAULT_TIMEOUT_MINUTES),
      description: "Wall-clock limit for the run, in minutes.",
    },
    cli: {
      flags: "--timeout <seconds>",
      description: `wall-clock limit for the run (default ${DEFAULT_TIMEOUT_MINUTES * 60})`,
      group: "Task",
      parse: "positiveInt",
    },
  },
  verify: {
    action: {
      default: "",
      description:
        "After the run, apply the patch in a fresh sandbox made as the agent's was (setup included) and run this command (e.g. npm test).",
    },
    cli: {
      flags: "--verify <command>",
      description:
        "after the run, apply the patch in a fresh sandbox made as the agent's was (setup included) and run this command",
      group: "Output",
    },
  },
  include_ignored: {
    action: {
      default: "false",
      description:
        "Files git ignores to copy in (dependencies a step installed): false, true (all), or path patterns, comma-separated or one per line, e.g. node_modules, .venv. Read deny rules and credential stripping still apply.",
    },
    cli: {
      flags: "--include-ignored [pattern...]",
      description:
        "also copy files that git ignores: all of them, or only those under matching paths (e.g. node_modules .venv; commas work too)",
      group: "Sandbox",
    },
  },
  github_token: {
    action: {
      default: "${{ github.token }}",
      description:
        "Token for the GitHub API calls the Action makes after the agent stopped (reading the actor's permission, the thread and the base-branch settings; posting the comment). Never passed to the agent.",
      cli: ACTION_ONLY,
    },
  },
  trigger_phrase: {
    action: {
      default: "@agent-ci",
      description:
        "Without a prompt, a run starts when a comment, a review's body, or a new issue's title or body mentions this phrase (as claude-code-action's trigger_phrase).",
      cli: ACTION_ONLY,
    },
  },
  label_trigger: {
    action: {
      default: "agent-ci",
      description:
        "Without a prompt, an issue labeled with this label (any case) starts a run (as claude-code-action's label_trigger).",
      cli: ACTION_ONLY,
    },
  },
  assignee_trigger: {
    action: {
      default: "",
      description:
        "Without a prompt, an issue assigned to this user starts a run (as claude-code-action's assignee_trigger). Empty: assigning starts nothing.",
      cli: ACTION_ONLY,
    },
  },
  allowed_bots: {
    action: {
      default: "",
      list: true,
      description:
        "Bots (comma-separated, without [bot]; * for any) that may trigger a run. Other bots, and people without write access to the repository, are refused.",
      cli: ACTION_ONLY,
    },
  },
  allow_fork_heads: {
    action: {
      default: "false",
      description:
        "Run on pull_request_target and workflow_run events whose head is a fork. Off: such runs are skipped, because those events carry the base repository's secrets and a write token.",
      cli: ACTION_ONLY,
    },
  },
  comment: {
    action: {
      default: "true",
      description:
        "Post the summary as one comment on the issue or pull request, updated in place on re-runs. Also the note on a thread the spending caps keep from starting (max_daily_usd; with task: queue, on each issue left waiting); false: none.",
      cli: ACTION_ONLY,
    },
  },
  upload_artifact: {
    action: {
      default: "true",
      description: "Upload patch.diff, report.json, report.md and report.html as an artifact.",
      cli: OUT_FOLDER,
    },
  },
  artifact_name: {
    action: {
      default: "agent-ci",
      description:
        "Name of the artifact (unique per workflow run; use a matrix value in matrix jobs). `{run_id}` in it becomes agent-ci's run id (e.g. agent-ci-{run_id}), so a later workflow can find a run's artifact by the id its pull request's branch and commit name.",
      cli: OUT_FOLDER,
    },
  },
  retention_days: {
    action: {
      default: "0",
      description: "Days to keep the artifact; 0 uses the repository's default.",
      cli: ACTION_ONLY,
    },
  },
  fail_on: {
    action: {
      default:
        "config_error,engine_error,api_error,max_turns,budget,timeout,context_window,max_denials,cancelled,schema_invalid,verify_failed",
      description:
        "Endings that fail the step, comma-separated: config_error, engine_error, api_error, max_turns, budget, timeout, context_window, max_denials, cancelled, schema_invalid, verify_failed, no_changes, secret_in_patch; or none. The patch and the report are uploaded whatever the ending.",
      cli: "the exit code says how the run ended",
    },
  },
  workspace: {
    action: {
      default: ".",
      description: "The directory the agent works on (copied into the sandbox; never written to).",
    },
    cli: {
      flags: "-w, --workspace <dir>",
      description: "the repository to work on (copied in; never written to)",
      group: "Task",
      default: ".",
    },
  },
  script: {
    action: {
      default: "",
      description:
        "Replay a file of tool calls (or a report.json) instead of calling a model. For tests, demos and debugging a policy; no API key is needed.",
    },
    cli: {
      flags: "--script <file>",
      description: "run a file of tool calls (or a report.json's calls) instead of a model",
      group: "Task",
    },
  },
  task: {
    action: {
      default: "run",
      description:
        "run (do the task) or review: on a pull request (or a comment on one), review base...head read-only (plan mode, no patch) and post the findings as one pull request review with inline comments on the diff's lines. Needs pull-requests: write, and the PR checked out with its history (fetch-depth: 0). Or queue: claim up to queue_max items of the work the queue_* inputs name in the ledger on refs/agent-ci/queue (each claimed issue labelled agent-ci:claimed), set the matrix and count outputs for the next job and the queue's state in the job summary; no model runs (docs/fleet.md). Needs contents: write, issues: write, actions: read.",
    },
    cli: {
      flags: "--task <task>",
      description: "run: do the task; review: review --base...--head read-only and return findings",
      group: "Task",
      choices: TASKS,
      default: "run",
    },
  },
  output_schema: {
    action: {
      default: "",
      description:
        "A JSON Schema (type object), inline JSON or a repository path (read from the base branch on pull-request events): the agent must end by returning an object valid against it, set as the structured_output output and written to output.json. One correction round, then schema_invalid.",
    },
    cli: {
      flags: "--output-schema <file>",
      description:
        "a JSON Schema (type object): the agent must end by returning an object valid against it, written to output.json",
      group: "Output",
    },
  },
  resume_from: {
    action: {
      default: "",
      description:
        "An earlier run's output folder (its downloaded artifact: report.json, patch.diff, conversation.jsonl): continue its workspace (base commit, which must be in the checkout, plus patch) and conversation under this step's own policy, never the record's, with the event's prompt as a new message. The record must reproduce the commit agent-ci publish pushed for that run, else it is refused. If no record is there, the run starts afresh and says so. See docs/resume.md.",
    },
    cli: {
      flags: "--resume <out-dir|report.json>",
      description:
        "continue an earlier run: its workspace as it ended and its conversation, under this run's own policy (--prompt adds a message; see Resume below)",
      group: "Task",
    },
  },
  compaction: {
    cli: {
      flags: "--no-compaction",
      description:
        "never make the conversation smaller: a prompt over the window ends the run (context_window)",
      group: "Model",
    },
  },
} as const satisfies Record<string, OptionDef>;
