// ScriptDriver: assistant turns from a file instead of a model, through the same pipeline. For tests,
// demos and replays. A script is `{"turns": [[{name, input}, …], …]}`; a turn may also be
// `{"mutate": [{op, path, content}], "tools": [...]}` to change a file between turns as an outside actor
// would. A report.json works too: its recorded calls are replayed turn by turn. With --output-schema (or in
// review mode) a script returns its object by calling `StructuredOutput` like any other tool.
import fs from "node:fs";
import { z } from "zod";
import type { Sandbox } from "../sandbox/sandbox.js";
import type { AssistantTurn, Driver, SideCallRequest, SideCallResult, TurnRequest } from "./driver.js";

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
/**
 * A scripted answer to side calls (WebFetch's reading model, WebSearch's search), as the reference cases
 * write them: picked by `name` (the call's purpose) and, when given, `match` (text the request's messages
 * contain) or `match_tool` (a server tool the request carries); the first that fits answers, every time.
 */
const SideEntry = z.object({
  name: z.enum(["fetch", "search"]),
  match: z.string().optional(),
  match_tool: z.string().optional(),
  reply: z.object({
    text: z.string().optional(),
    content: z.array(z.record(z.string(), z.unknown())).optional(),
    usage: z
      .object({
        input_tokens: z.number().int().nonnegative().optional(),
        output_tokens: z.number().int().nonnegative().optional(),
        server_tool_use: z.object({ web_search_requests: z.number().int().nonnegative() }).optional(),
      })
      .optional(),
  }),
});
type SideEntry = z.infer<typeof SideEntry>;

export const ScriptFile = z.object({
  turns: z.array(ScriptTurn),
  final: z.string().optional(),
  side: z.array(SideEntry).default([]),
});
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
export function loadScript(file: string): { turns: NormalTurn[]; final?: string; side?: SideEntry[] } {
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
  return { turns, final: parsed.data.final, side: parsed.data.side };
}

const NO_USAGE = { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };

export class ScriptDriver implements Driver {
  readonly name = "script" as const;
  private next = 0;
  /** Changes of the turn returned last, applied before its tools run. */
  private pending: ScriptMutation[] = [];

  constructor(private readonly script: { turns: NormalTurn[]; final?: string; side?: SideEntry[] }) {}

  async sideCall(request: SideCallRequest): Promise<SideCallResult | undefined> {
    request.signal.throwIfAborted();
    const text = JSON.stringify(request.messages);
    const entry = (this.script.side ?? []).find(
      (e) =>
        e.name === request.purpose &&
        (e.match === undefined || text.includes(JSON.stringify(e.match).slice(1, -1))) &&
        (e.match_tool === undefined ||
          (request.tools ?? []).some((t) => "name" in t && t.name === e.match_tool)),
    );
    if (!entry) return undefined;
    const { reply } = entry;
    const content = (reply.content ?? [
      { type: "text", text: reply.text ?? "" },
    ]) as unknown as SideCallResult["content"];
    return {
      content,
      usage: {
        ...NO_USAGE,
        inputTokens: reply.usage?.input_tokens ?? 0,
        outputTokens: reply.usage?.output_tokens ?? 0,
      },
      webSearchRequests: reply.usage?.server_tool_use?.web_search_requests ?? 0,
      model: "script",
    };
  }

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
