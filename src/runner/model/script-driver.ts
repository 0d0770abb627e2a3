// ScriptDriver: assistant turns from a file instead of a model, through the same pipeline. For tests,
// demos and replays. A script is `{"turns": [[{name, input}, …], …]}`; a turn may also be
// `{"mutate": [{op, path, content}], "tools": [...]}` to change a file between turns as an outside actor
// would. A report.json works too: its recorded calls are replayed turn by turn. With --output-schema (or in
// review mode) a script returns its object by calling `StructuredOutput` like any other tool.
// Subagents are scripted under `agents`: `{name, match, type, description, turns, final}`, the entry whose
// given keys all fit a subagent (`match`: a text its prompt contains) plays that subagent's conversation.
// An input value `{"$ref": {turn, index, re}}` becomes a piece of an earlier result of the same
// conversation (the first group of `re`), for ids only known at run time (a background shell's).
import fs from "node:fs";
import { z } from "zod";
import type { Sandbox } from "../../sandbox/sandbox.js";
import type {
  AgentSpec,
  AssistantTurn,
  Driver,
  SideCallRequest,
  SideCallResult,
  TurnRequest,
} from "./driver.js";

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

const ScriptAgent = z.object({
  name: z.string().min(1).optional(),
  match: z.string().min(1).optional(),
  type: z.string().min(1).optional(),
  description: z.string().min(1).optional(),
  turns: z.array(ScriptTurn).default([]),
  final: z.string().optional(),
});
export const ScriptFile = z.object({
  turns: z.array(ScriptTurn),
  final: z.string().optional(),
  agents: z.array(ScriptAgent).default([]),
  side: z.array(SideEntry).default([]),
});
export type ScriptFile = z.infer<typeof ScriptFile>;

const RecordedReport = z.object({
  schemaVersion: z.number(),
  toolCalls: z.array(
    z.object({
      id: z.string().optional(),
      turn: z.number().int().nonnegative(),
      tool: z.string(),
      input: z.unknown(),
      parentToolUseId: z.string().optional(),
    }),
  ),
  subagents: z
    .array(z.object({ toolUseId: z.string(), type: z.string(), description: z.string().optional() }))
    .optional(),
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

interface AgentScript {
  name: string;
  match?: string;
  type?: string;
  description?: string;
  turns: NormalTurn[];
  final?: string;
}

export interface Script {
  turns: NormalTurn[];
  final?: string;
  agents?: AgentScript[];
  side?: SideEntry[];
}

const normalTurn = (turn: z.infer<typeof ScriptTurn>): NormalTurn =>
  Array.isArray(turn)
    ? { calls: turn, mutations: [] }
    : { calls: turn.tools, mutations: turn.mutate, text: turn.text };

/** A recorded run's calls, by turn (one conversation's). */
function byTurn(calls: Array<{ turn: number; tool: string; input: unknown }>): NormalTurn[] {
  const turns = new Map<number, NormalTurn>();
  for (const call of calls) {
    const turn = turns.get(call.turn) ?? { calls: [], mutations: [] };
    turn.calls.push({ name: call.tool, input: (call.input ?? {}) as Record<string, unknown> });
    turns.set(call.turn, turn);
  }
  return [...turns.entries()].sort(([a], [b]) => a - b).map(([, t]) => t);
}

/** Reads a script file or a report.json into turns; a clear error names what is wrong with it. */
export function loadScript(file: string): Script {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new ScriptError(`cannot read script ${file}: ${(e as Error).message}`);
  }
  const report = RecordedReport.safeParse(raw);
  if (report.success) {
    // A subagent's recorded calls replay as that subagent's conversation, matched by its type and description.
    const calls = report.data.toolCalls;
    const agents = (report.data.subagents ?? []).map((agent) => ({
      name: agent.toolUseId,
      type: agent.type,
      description: agent.description,
      turns: byTurn(calls.filter((c) => c.parentToolUseId === agent.toolUseId)),
    }));
    return { turns: byTurn(calls.filter((c) => c.parentToolUseId === undefined)), agents };
  }
  const parsed = ScriptFile.safeParse(raw);
  if (!parsed.success)
    throw new ScriptError(`script ${file} is not a script or a report: ${z.prettifyError(parsed.error)}`);
  const agents = parsed.data.agents.map((agent, i) => ({
    ...agent,
    name: agent.name ?? `agent${i + 1}`,
    turns: agent.turns.map(normalTurn),
  }));
  return {
    turns: parsed.data.turns.map(normalTurn),
    final: parsed.data.final,
    agents,
    side: parsed.data.side,
  };
}

/** The earlier result a `$ref` points at, cut by its pattern. */
function resolveRefs(value: unknown, resultOf: (turn: number, index: number) => string | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveRefs(v, resultOf));
  if (typeof value !== "object" || value === null) return value;
  const ref = (value as Record<string, unknown>).$ref as
    { turn?: number; index?: number; re?: string } | undefined;
  if (ref && Object.keys(value).length === 1 && typeof ref === "object") {
    const text = resultOf(ref.turn ?? 0, ref.index ?? 0);
    if (text === undefined)
      throw new ScriptError(`$ref: no result of call ${ref.index} of turn ${ref.turn} yet`);
    if (!ref.re) return text;
    const found = new RegExp(ref.re).exec(text);
    if (!found)
      throw new ScriptError(
        `$ref: /${ref.re}/ does not match the result of call ${ref.index} of turn ${ref.turn}`,
      );
    return found[1] ?? found[0];
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveRefs(v, resultOf)]));
}

function resultText(messages: TurnRequest["messages"], id: string): string | undefined {
  for (const message of messages) {
    if (message.role !== "user" || typeof message.content === "string") continue;
    for (const block of message.content) {
      if (block.type !== "tool_result" || block.tool_use_id !== id) continue;
      const content = block.content;
      if (typeof content === "string") return content;
      return (content ?? []).map((b) => (b.type === "text" ? b.text : "")).join("");
    }
  }
  return undefined;
}

const NO_USAGE = { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };

export class ScriptDriver implements Driver {
  readonly name = "script" as const;
  private next = 0;
  /** Changes of the turn returned last, applied before its tools run. */
  private pending: ScriptMutation[] = [];

  /** How many subagents each agent entry has played, for distinct tool_use ids. */
  private readonly agentUses = new Map<string, number>();

  constructor(
    private readonly script: Script,
    /** tool_use ids are `<prefix>_<turn>_<index>`: distinct per conversation, so the record's tree is unambiguous. */
    private readonly idPrefix = "toolu_script",
  ) {}

  private idOf(call: { id?: string }, turn: number, index: number): string {
    return call.id ?? `${this.idPrefix}_${turn}_${index}`;
  }

  /** The scripted subagent whose given keys all fit the spec; one with no turns when none does. */
  forAgent(spec: AgentSpec): Driver {
    const entry = (this.script.agents ?? []).find(
      (a) =>
        (a.match === undefined || spec.prompt.includes(a.match)) &&
        (a.type === undefined || a.type === spec.type) &&
        (a.description === undefined || a.description === spec.description),
    );
    const name = entry?.name ?? "agent";
    const uses = (this.agentUses.get(name) ?? 0) + 1;
    this.agentUses.set(name, uses);
    const prefix = `toolu_script_${name.replace(/[^A-Za-z0-9_]/g, "_")}${uses > 1 ? uses : ""}`;
    return new ScriptDriver(
      { turns: entry?.turns ?? [], final: entry?.final ?? "No scripted turns for this subagent." },
      prefix,
    );
  }

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
    const resultOf = (t: number, i: number) => {
      const call = this.script.turns[t]?.calls[i];
      return call ? resultText(request.messages, this.idOf(call, t, i)) : undefined;
    };
    turn.calls.forEach((call, i) => {
      content.push({
        type: "tool_use",
        id: this.idOf(call, index, i),
        name: call.name,
        input: resolveRefs(call.input, resultOf) as Record<string, unknown>,
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
