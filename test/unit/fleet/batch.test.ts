import { describe, expect, it } from "vitest";
import { batchTable, batchTasks, runBatch, taskArgv, type BatchTask } from "../../../src/fleet/batch.js";

describe("agent-ci batch's tasks", () => {
  it("turns a line's options into the run command's argv, the command line's first", () => {
    expect(
      taskArgv(
        {
          id: "a",
          workspace: "repo-a",
          maxTurns: 3,
          allow: ["Read", "Edit"],
          projectMemory: false,
          strictMcp: true,
        },
        "t",
      ),
    ).toEqual([
      "--workspace",
      "repo-a",
      "--max-turns",
      "3",
      "--allow",
      "Read",
      "--allow",
      "Edit",
      "--no-project-memory",
      "--strict-mcp",
    ]);
    const [task] = batchTasks([{ id: "x y", prompt: "p" }], ["--quiet"], "tasks.jsonl", "out");
    expect(task?.argv).toEqual(["--quiet", "--out", "out/001-x-y", "--prompt", "p"]);
  });

  it("refuses a key that is no flag name, and a value that is no string, number or boolean", () => {
    expect(() => taskArgv({ "--x; rm": "1" }, "tasks.jsonl task 1")).toThrow(/is not a flag name/);
    expect(() => taskArgv({ env: { a: 1 } }, "t")).toThrow(/takes a string/);
  });

  it("runs at most K at once, records each in file order, and stops starting at the cap", async () => {
    const tasks: BatchTask[] = Array.from({ length: 9 }, (_, i) => ({ index: i, name: `t${i}`, argv: [] }));
    let running = 0;
    let peak = 0;
    const waiting: Array<() => void> = [];
    const run = async () => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise<void>((resolve) => waiting.push(resolve));
      running -= 1;
      return { exitCode: 0, exitReason: "completed", costUsd: 1 };
    };
    const done = runBatch(tasks, { parallel: 3, run });
    // Release one waiting run whenever there is one, until all nine have run.
    let released = 0;
    while (released < 9) {
      await new Promise((resolve) => setImmediate(resolve));
      const next = waiting.shift();
      if (next) {
        next();
        released += 1;
      }
    }
    const records = await done;
    expect(peak).toBe(3);
    expect(records.map((r) => r.task.name)).toEqual(tasks.map((t) => t.name));
    expect(batchTable(records)).toContain("9 task(s): 9 completed, 0 not; cost $9.0000");

    const capped = await runBatch(tasks, {
      parallel: 1,
      run: async () => ({ exitCode: 0, costUsd: 1 }),
      maxUsd: 3,
      perRunUsd: 1,
    });
    expect(capped.filter((r) => r.status === "ran")).toHaveLength(3);
    expect(capped.filter((r) => r.status === "capped")).toHaveLength(6);
  });
});
