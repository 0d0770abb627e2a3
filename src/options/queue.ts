// The Action's inputs for `task: queue` (docs/fleet.md): the query whose work is claimed, how much and for how
// long, and the spending caps across runs. The CLI's counterpart is `agent-ci queue claim`, with flags of its
// own (src/fleet/cli.ts), not `agent-ci run`'s.
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
        "With task: queue, claim nothing once the day's spend (UTC) in the ledger, plus max_budget_usd held for every run in flight and for each new run, would pass this; the issues left waiting get a comment saying why.",
      cli: claim("--max-daily-usd"),
    },
  },
  max_monthly_usd: {
    action: {
      default: "",
      description: "With task: queue, the same as max_daily_usd for the month's spend (UTC).",
      cli: claim("--max-monthly-usd"),
    },
  },
  cap_name: {
    action: {
      default: "",
      description:
        "With task: queue, the name spend is counted under in the ledger (default: the repository, owner/name); give the same name in several repositories to share a cap.",
      cli: claim("--cap-name"),
    },
  },
} as const satisfies Record<string, OptionDef>;
