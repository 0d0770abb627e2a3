// A file of tasks, one JSON object a line: what `agent-ci batch` runs (agent-ci run's options by flag name)
// and what the queue claims instead of issues (each with an `id`).
import fs from "node:fs";

/** A tasks file: one JSON object a line (blank lines skipped). */
export function readTasks(file: string): Array<Record<string, unknown>> {
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const tasks: Array<Record<string, unknown>> = [];
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw new Error(`${file} line ${i + 1}: not JSON (${(e as Error).message})`, { cause: e });
    }
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new Error(`${file} line ${i + 1}: not a JSON object of the run's options`);
    tasks.push(value as Record<string, unknown>);
  });
  return tasks;
}

/** A tasks file the queue claims from: every task needs an `id` the ledger can name (`task:<id>`). */
export function readQueueTasks(file: string): Array<Record<string, unknown>> {
  const tasks = readTasks(file);
  for (const task of tasks)
    if (typeof task.id !== "string" || !/^[A-Za-z0-9._-]{1,100}$/.test(task.id))
      throw new Error(
        `${file}: every task the queue claims needs an "id" (letters, digits, . _ -; at most 100)`,
      );
  return tasks;
}
