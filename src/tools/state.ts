// Host-side state of one run that the tools share: what was read (for read-before-edit), the shell's
// working directory, the background tasks and the task list.
import crypto from "node:crypto";
import { WORKSPACE_ROOT } from "../sandbox/sandbox.js";
import { BackgroundTasks } from "./background-tasks.js";

export interface ReadRecord {
  /** sha256 of the whole file when it was read whole; undefined for a partial read of a huge file. */
  sha256?: string;
  mtimeMs: number;
  size: number;
  /** The model saw only part of the file (Read with offset/limit, or a window of a huge file). */
  partial: boolean;
}

export interface Todo {
  content: string;
  status: "pending" | "in_progress" | "completed";
  activeForm?: string;
}

export function sha256(data: Uint8Array | string): string {
  return crypto.createHash("sha256").update(data).digest("hex");
}

export class RunState {
  /** Container real path → what the model last saw of it. */
  readonly reads = new Map<string, ReadRecord>();
  cwd: string = WORKSPACE_ROOT;
  todos: Todo[] = [];

  /** The run's background shells and agents, for TaskOutput and KillShell. */
  constructor(readonly background = new BackgroundTasks()) {}

  /**
   * A subagent's state: its own reads (read-before-edit per agent, as in Claude Code), cwd and todos; the
   * run's shells, and no background agents.
   */
  forAgent(): RunState {
    return new RunState(this.background.forAgent());
  }

  recordRead(
    realPath: string,
    data: Uint8Array | undefined,
    stat: { mtimeMs: number; size: number },
    partial = false,
  ): void {
    this.reads.set(realPath, {
      sha256: data ? sha256(data) : undefined,
      mtimeMs: stat.mtimeMs,
      size: stat.size,
      partial,
    });
  }
}
