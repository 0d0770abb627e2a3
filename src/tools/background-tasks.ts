// The run's background tasks, one registry for both kinds TaskOutput and KillShell serve: shells (Bash
// run_in_background) and agents (Task run_in_background). Shells are the sandbox's, so every agent of a run
// shares them and their numbering; agents are the main loop's only: a subagent can neither start one nor
// reach the parent's. A leaf of src/tools/: the tools' state holds it, and it names no tool.

export interface BackgroundShell {
  id: string;
  command: string;
  startedAt: number;
}

/** How a subagent's run went, for the hand-back. */
export interface SubagentOutcome {
  agentId: string;
  /** Its final text. */
  report: string;
  /** Distinct tool names it called, in the order first called. */
  toolsUsed: string[];
  toolUses: number;
  tokens: number;
  durationMs: number;
  /** Claude Code omits agentId and usage for Explore and Plan. */
  usageFooter: boolean;
  /** Why it stopped before finishing (a limit, a cancel), in a sentence; undefined when it finished. */
  stoppedEarly?: string;
}

/** A background subagent, as TaskOutput and KillShell see it. */
export interface BackgroundAgent {
  type: string;
  description: string;
  readonly status: string;
  done: Promise<void>;
  stop(): void;
  outcome(): SubagentOutcome;
}

export class BackgroundTasks {
  constructor(
    readonly shells = new Map<string, BackgroundShell>(),
    private readonly shellSeq = { n: 0 },
    /** Undefined in a subagent's view: it has no background agents. */
    private readonly agents: Map<string, BackgroundAgent> | undefined = new Map(),
  ) {}

  /** A subagent's view: the run's shells and their numbering, no agents. */
  forAgent(): BackgroundTasks {
    return new BackgroundTasks(this.shells, this.shellSeq, undefined);
  }

  nextShellId(): string {
    this.shellSeq.n += 1;
    return `bash${this.shellSeq.n}`;
  }

  addAgent(id: string, agent: BackgroundAgent): void {
    if (!this.agents) throw new Error("a subagent cannot start a background agent");
    this.agents.set(id, agent);
  }

  agent(id: string): BackgroundAgent | undefined {
    return this.agents?.get(id);
  }
}
