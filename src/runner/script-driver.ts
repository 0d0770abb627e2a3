// ScriptDriver: assistant turns from a file instead of a model, through the same pipeline. For tests,
// demos and replays. A script is `{"turns": [[{name, input}, …], …]}`; a turn may also be
// `{"mutate": [{op, path, content}], "tools": [...]}` to change a file between turns as an outside actor
// would. A report.json works too: its recorded calls are replayed turn by turn. With --output-schema (or in
// review mode) a script returns its object by calling `StructuredOutput` like any other tool.
import fs from "node:fs";
import { z } from "zod";
import type { Sandbox } from "../sandbox/sandbox.js";
import type { AssistantTurn, Driver, TurnRequest } from "./driver.js";

const ScriptCall = z.object({
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()).default({}),
  id: z.string().optional(),
});
const Mutation = z.object({
  op: z.enum(["write", "delete"]),
  path: z.string().min(1),
  content: z.string().optional(),
});
const ScriptTurn = z.union([
  z.array(ScriptCall),
  z.object({
    mutate: z.array(Mutation).default([]),
    tools: z.array(ScriptCall).default([]),
    text: z.string().optional(),
  }),
]);
export const ScriptFile = z.object({ turns: z.array(ScriptTurn), final: z.string().optional() });
export type ScriptFile = z.infer<typeof ScriptFile>;

const RecordedReport = z.object({
  schemaVersion: z.number(),
  toolCalls: z.array(
    z.object({ turn: z.number().int().nonnegative(), tool: z.string(), input: z.unknown() }),
  ),
});

/** A file change between turns, standing in for an outside actor (a linter, a user). */
type ScriptMutation = z.infer<typeof Mutation>;

export class ScriptError extends Error {
  override readonly name = "ScriptError";
}

interface NormalTurn {
  calls: Array<z.infer<typeof ScriptCall>>;
  mutations: ScriptMutation[];
  text?: string;
}

/** Reads a script file or a report.json into turns; a clear error names what is wrong with it. */
export function loadScript(file: string): { turns: NormalTurn[]; final?: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new ScriptError(`cannot read script ${file}: ${(e as Error).message}`);
  }
  const report = RecordedReport.safeParse(raw);
  if (report.success) {
    const byTurn = new Map<number, NormalTurn>();
    for (const call of report.data.toolCalls) {
      const turn = byTurn.get(call.turn) ?? { calls: [], mutations: [] };
      turn.calls.push({ name: call.tool, input: (call.input ?? {}) as Record<string, unknown> });
      byTurn.set(call.turn, turn);
    }
    return { turns: [...byTurn.entries()].sort(([a], [b]) => a - b).map(([, t]) => t) };
  }
  const parsed = ScriptFile.safeParse(raw);
  if (!parsed.success)
    throw new ScriptError(`script ${file} is not a script or a report: ${z.prettifyError(parsed.error)}`);
  const turns = parsed.data.turns.map((turn): NormalTurn =>
    Array.isArray(turn)
      ? { calls: turn, mutations: [] }
      : { calls: turn.tools, mutations: turn.mutate, text: turn.text },
  );
  return { turns, final: parsed.data.final };
}

const NO_USAGE = { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };

export class ScriptDriver implements Driver {
  readonly name = "script" as const;
  private next = 0;
  /** Changes of the turn returned last, applied before its tools run. */
  private pending: ScriptMutation[] = [];

  constructor(private readonly script: { turns: NormalTurn[]; final?: string }) {}

  async nextTurn(request: TurnRequest): Promise<AssistantTurn> {
    request.signal.throwIfAborted();
    const index = this.next++;
    const turn = this.script.turns[index];
    this.pending = turn?.mutations ?? [];
    if (!turn) {
      const text = this.script.final ?? "Script finished.";
      return {
        content: [{ type: "text", text }],
        stopReason: "end_turn",
        usage: NO_USAGE,
        model: "script",
        attempts: 1,
      };
    }
    const content: AssistantTurn["content"] = [];
    if (turn.text) content.push({ type: "text", text: turn.text });
    turn.calls.forEach((call, i) => {
      content.push({
        type: "tool_use",
        id: call.id ?? `toolu_script_${index}_${i}`,
        name: call.name,
        input: call.input,
      });
    });
    return {
      content,
      stopReason: turn.calls.length ? "tool_use" : "end_turn",
      usage: NO_USAGE,
      model: "script",
      attempts: 1,
    };
  }

  costOf(): number {
    return 0;
  }

  async beforeTools(sandbox: Sandbox): Promise<void> {
    const mutations = this.pending;
    this.pending = [];
    for (const m of mutations) {
      const target = `${sandbox.root}/${m.path}`;
      if (m.op === "write") await sandbox.writeFile(target, m.content ?? "");
      else await sandbox.exec({ argv: ["rm", "-rf", "--", target] });
    }
  }
}
