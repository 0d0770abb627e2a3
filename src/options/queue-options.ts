// The Action's inputs for `task: queue` (docs/fleet.md): the query whose work is claimed, how much and for how
// long; and the spending caps across runs, which a queue and a single triggered run apply alike. The CLI's
// counterparts are `agent-ci queue claim` and `agent-ci queue check`, with flags of their own (src/fleet/cli.ts),
// not `agent-ci run`'s.
import type { OptionDef } from "./types.js";

const claim = (flag: string) => `\`agent-ci queue claim ${flag}\``;

export const QUEUE_OPTIONS = {
  queue_label: {
    action: {
      default: "",
      description:
        "With task: queue, the work is the repository's open issues with this label (with queue_milestone and queue_assignee, those that match all three).",
      cli: claim("--label"),
    },
  },
  queue_milestone: {
    action: {
      default: "",
      description: "With task: queue, the work is the open issues of this milestone (its number).",
      cli: claim("--milestone"),
    },
  },
  queue_assignee: {
    action: {
      default: "",
      description: "With task: queue, the work is the open issues assigned to this login.",
      cli: claim("--assignee"),
    },
  },
  queue_tasks: {
    action: {
      default: "",
      description:
        "With task: queue, the work is a file of tasks instead of issues (a path in the workspace): one JSON object a line, each with an id; a matrix entry's task is its line as JSON.",
      cli: claim("--tasks"),
    },
  },
  queue_max: {
    action: {
      default: "5",
      description: "With task: queue, claim at most this many items a run.",
      cli: claim("--max"),
    },
  },
  queue_lease_seconds: {
    action: {
      default: "3600",
      description:
        "With task: queue, how long a claim holds without a release; after that another scheduler takes the item again. Make it longer than the agent and publish jobs take.",
      cli: claim("--lease"),
    },
  },
  max_daily_usd: {
    action: {
      default: "",
      description:
        "A cap on the day's spend (UTC) across runs, counted in the ledger on refs/agent-ci/queue (docs/fleet.md). A run starts only while the day's spend, plus max_budget_usd held for every run in flight and for this one, stays within it; otherwise it starts nothing, is skipped (the step does not fail) and says why on its thread. A run that starts adds its cost to the ledger when it ends. With task: queue, only as many items are claimed as fit, and each issue left waiting gets the note (the queue's runs add their cost with agent-ci queue release). Needs github_token with contents: write, issues: write, actions: read.",
      cli: `${claim("--max-daily-usd")}, \`agent-ci queue check --max-daily-usd\``,
    },
  },
  max_monthly_usd: {
    action: {
      default: "",
      description: "The same as max_daily_usd for the month's spend (UTC).",
      cli: `${claim("--max-monthly-usd")}, \`agent-ci queue check --max-monthly-usd\``,
    },
  },
  cap_name: {
    action: {
      default: "",
      description:
        "The name the caps count spend under in the ledger (default: the repository, owner/name); give the same name in several repositories to share a cap.",
      cli: claim("--cap-name"),
    },
  },
} as const satisfies Record<string, OptionDef>;
