/**
 * The one table of Claude models: each model's ids on the API, Amazon Bedrock and Google Vertex AI, the aliases
 * (sonnet, opus, haiku), and the prices the cost of a turn is estimated with.
 *
 * Prices are USD per million tokens, taken on 2026-11-22 from Anthropic's pricing page
 * (platform.claude.com/docs/en/about-claude/pricing) and the per-model overview pages
 * (platform.claude.com/docs/en/models/<model>/overview). One note on a disagreement between sources:
 * the Sonnet 5.5 overview page still showed a $0.20 cache read while several price trackers that
 * re-read the live pricing page in October 2026 report a cut to $0.10 from 2026-10-07; the table uses
 * $0.10. Cache writes are the 5-minute (`ephemeral`) rate, the only TTL agent-ci asks for.
 *
 * A model id that is not in the table is priced by its family (opus, sonnet, haiku, fable, mythos),
 * and an id without a known family at the Sonnet 4.x rate; both are flagged `estimated`. The family
 * fallbacks lean to the higher of a family's recent prices, so a `--max-budget-usd` cap errs on the
 * side of stopping early rather than overspending.
 */
import type { TurnUsage } from "./driver.js";

/** The model agent-ci uses when none is given (the `model` option's default): the current Claude Sonnet. */
import { DEFAULT_MODEL } from "../../options/values.js";
export { DEFAULT_MODEL };

/** The small, fast model that reads WebFetch's pages unless another is configured: the current Haiku. */
export const DEFAULT_SMALL_FAST_MODEL = "claude-haiku-5-5";

/** USD per web search the API's `web_search` server tool runs ($10 per 1,000), on top of the tokens. */
export const WEB_SEARCH_USD = 10 / 1000;

/** The date the prices below were read. */
export const PRICES_AS_OF = "2026-11-22";

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** 5-minute cache write. */
  cacheWrite: number;
  /** Cache hit or refresh. */
  cacheRead: number;
}

/**
 * One model as each provider names it. `id` is the API's name without a date (the table's key); `bedrock` is
 * the Bedrock base model id (a run adds the inference profile's geography, `us.` / `eu.` …, from the region);
 * `vertex` is the Vertex AI model id.
 */
export interface ModelIds {
  id: string;
  bedrock: string;
  vertex: string;
  /**
   * Bedrock serves the models before Claude 4.7 on its own API version only (`bedrock-2023-05-31`); the SDK's
   * default version is refused there.
   */
  bedrockLegacyVersion?: boolean;
}

interface PriceEntry {
  /** The models this price is exactly for. */
  models: readonly ModelIds[];
  price: ModelPrice;
  /** Prompts (input + cache reads + cache writes) above `thresholdTokens` are billed at `price` instead. */
  longPrompt?: { thresholdTokens: number; price: ModelPrice };
}

/** The API version Bedrock takes for the models before Claude 4.7. */
export const BEDROCK_LEGACY_API_VERSION = "bedrock-2023-05-31";

/**
 * A model's ids. Undated models (Claude 4.6 and later) are `anthropic.<id>` on Bedrock and `<id>` on Vertex;
 * dated ones are `anthropic.<api-id>-<date>-v1:0` and `<api-id>@<date>`, where the API's id may be shorter than
 * the table's (`claude-opus-4-0` is `claude-opus-4-20250514`).
 */
function model(id: string, dated?: { date: string; apiId?: string; bedrockVersion?: string }): ModelIds {
  if (!dated) return { id, bedrock: `anthropic.${id}`, vertex: id };
  const base = dated.apiId ?? id;
  return {
    id,
    bedrock: `anthropic.${base}-${dated.date}-${dated.bedrockVersion ?? "v1:0"}`,
    vertex: `${base}@${dated.date}`,
    bedrockLegacyVersion: true,
  };
}

const price = (input: number, cacheWrite: number, cacheRead: number, output: number): ModelPrice => ({
  input,
  output,
  cacheWrite,
  cacheRead,
});

const PRICE_TABLE: readonly PriceEntry[] = [
  { models: [model("claude-fable-5-1"), model("claude-mythos-5-1")], price: price(10, 12.5, 0.25, 50) },
  { models: [model("claude-fable-5"), model("claude-mythos-5")], price: price(10, 12.5, 1, 50) },
  { models: [model("claude-opus-5-5")], price: price(4, 5, 0.2, 20) },
  {
    models: [
      model("claude-opus-5"),
      model("claude-opus-4-8"),
      model("claude-opus-4-7"),
      { ...model("claude-opus-4-6"), bedrock: "anthropic.claude-opus-4-6-v1", bedrockLegacyVersion: true },
      model("claude-opus-4-5", { date: "20251101" }),
    ],
    price: price(5, 6.25, 0.5, 25),
  },
  {
    models: [
      model("claude-opus-4-1", { date: "20250805" }),
      model("claude-opus-4-0", { date: "20250514", apiId: "claude-opus-4" }),
      model("claude-opus-4", { date: "20250514" }),
      model("claude-3-opus", { date: "20240229" }),
    ],
    price: price(15, 18.75, 1.5, 75),
  },
  { models: [model("claude-sonnet-5-5")], price: price(2, 2.5, 0.1, 10) },
  { models: [model("claude-sonnet-5")], price: price(2, 2.5, 0.2, 10) },
  {
    models: [
      { ...model("claude-sonnet-4-6"), bedrockLegacyVersion: true },
      model("claude-sonnet-4-5", { date: "20250929" }),
      model("claude-sonnet-4-0", { date: "20250514", apiId: "claude-sonnet-4" }),
      model("claude-sonnet-4", { date: "20250514" }),
      model("claude-3-7-sonnet", { date: "20250219" }),
      {
        ...model("claude-3-5-sonnet", { date: "20241022", bedrockVersion: "v2:0" }),
        vertex: "claude-3-5-sonnet-v2@20241022",
      },
    ],
    price: price(3, 3.75, 0.3, 15),
  },
  {
    models: [model("claude-haiku-5-5")],
    price: price(0.1, 0.125, 0.01, 0.5),
    longPrompt: { thresholdTokens: 100_000, price: price(0.5, 0.625, 0.05, 2.5) },
  },
  { models: [model("claude-haiku-4-5", { date: "20251001" })], price: price(1, 1.25, 0.1, 5) },
  { models: [model("claude-3-5-haiku", { date: "20241022" })], price: price(0.8, 1, 0.08, 4) },
  { models: [model("claude-3-haiku", { date: "20240307" })], price: price(0.25, 0.3, 0.03, 1.25) },
];

/** Every model in the table, by its id. */
const MODELS: ReadonlyMap<string, ModelIds> = new Map(
  PRICE_TABLE.flatMap((entry) => entry.models.map((ids): [string, ModelIds] => [ids.id, ids])),
);

/** Short names a run, a subagent definition or a Task call may use for the current models, as Claude Code's. */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: DEFAULT_MODEL,
  opus: "claude-opus-5-5",
  haiku: DEFAULT_SMALL_FAST_MODEL,
};

/** The model an alias names, or the name itself. */
export function resolveModelAlias(name: string): string {
  return MODEL_ALIASES[name] ?? name;
}

/** Family fallbacks for ids not in the table (the higher recent price of each family). */
const FAMILY_FALLBACK: ReadonlyArray<{ family: string; price: ModelPrice }> = [
  { family: "fable", price: price(10, 12.5, 1, 50) },
  { family: "mythos", price: price(10, 12.5, 1, 50) },
  { family: "opus", price: price(5, 6.25, 0.5, 25) },
  { family: "sonnet", price: price(3, 3.75, 0.3, 15) },
  { family: "haiku", price: price(1, 1.25, 0.1, 5) },
];

const UNKNOWN_MODEL_PRICE = price(3, 3.75, 0.3, 15);

export interface PriceLookup {
  price: ModelPrice;
  /** What the model was priced as: a table id, `family:<name>`, or `fallback:sonnet`. */
  pricedAs: string;
  /** True when the model id is not in the table and a family or default price was used. */
  estimated: boolean;
}

export interface CostEstimate {
  usd: number;
  pricedAs: string;
  estimated: boolean;
}

/**
 * Reduces a model id as the API, Bedrock or Vertex spell it to the table's form:
 * `us.anthropic.claude-sonnet-4-5-20250929-v1:0` → `claude-sonnet-4-5`,
 * `claude-sonnet-4-5@20250929` → `claude-sonnet-4-5`, `claude-3-5-sonnet-v2@20241022` → `claude-3-5-sonnet`,
 * `claude-opus-4-6[1m]` → `claude-opus-4-6`.
 */
export function normalizeModelId(model: string): string {
  let id = model.trim().toLowerCase();
  const claudeAt = id.indexOf("claude-");
  if (claudeAt > 0) id = id.slice(claudeAt);
  id = id.replace(/\[[^\]]*\]$/, "");
  id = id.replace(/-v\d+(:\d+)?$/, "");
  id = id.replace(/[@-](\d{8}|latest)$/, "");
  // Vertex puts a version before the date: claude-3-5-sonnet-v2@20241022.
  return id.replace(/-v\d+$/, "");
}

/** A model's ids on each provider, by any of its names (an alias, a dated API id, a provider's id). */
export function modelIdsFor(model: string): ModelIds | undefined {
  return MODELS.get(normalizeModelId(resolveModelAlias(model)));
}

/** The price of one model, with whether it had to be estimated. */
export function priceFor(model: string, promptTokens = 0): PriceLookup {
  const id = normalizeModelId(model);
  const entry = PRICE_TABLE.find((candidate) => candidate.models.some((ids) => ids.id === id));
  if (entry) {
    const long = entry.longPrompt;
    const useLong = long !== undefined && promptTokens > long.thresholdTokens;
    return { price: useLong ? long.price : entry.price, pricedAs: id, estimated: false };
  }
  const family = FAMILY_FALLBACK.find((candidate) => id.includes(candidate.family));
  if (family) return { price: family.price, pricedAs: `family:${family.family}`, estimated: true };
  return { price: UNKNOWN_MODEL_PRICE, pricedAs: "fallback:sonnet", estimated: true };
}

/**
 * The USD cost of one turn's usage. Call it per turn and sum the results: a price that depends on the
 * prompt's length (Haiku 5.5 above 100k tokens) is decided per request.
 */
export function costUsd(model: string, usage: TurnUsage): CostEstimate {
  const promptTokens = usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens;
  const lookup = priceFor(model, promptTokens);
  const { input, output, cacheWrite, cacheRead } = lookup.price;
  const usd =
    (usage.inputTokens * input +
      usage.outputTokens * output +
      usage.cacheCreationInputTokens * cacheWrite +
      usage.cacheReadInputTokens * cacheRead) /
    1_000_000;
  return { usd, pricedAs: lookup.pricedAs, estimated: lookup.estimated };
}

/**
 * How the API itself keeps a long conversation inside a model's window (the beta Messages API's
 * `context_management` edits), per model: `compact` is server-side compaction (`compact_20260112`, first on
 * Opus 4.6 and Sonnet 4.6, and every model after them); `clear_tool_uses` clears old tool results
 * (`clear_tool_uses_20250919`, the Claude 4 models). A model in neither list (Claude 3.x, an id agent-ci does
 * not know) gets agent-ci's own clearing, which needs nothing from the API.
 */
export type ApiContextEdit = "compact" | "clear_tool_uses";

const API_CONTEXT_EDITS: ReadonlyArray<{ edit: ApiContextEdit; ids: readonly string[] }> = [
  {
    edit: "compact",
    ids: [
      "claude-fable-5-1",
      "claude-mythos-5-1",
      "claude-fable-5",
      "claude-mythos-5",
      "claude-opus-5-5",
      "claude-opus-5",
      "claude-opus-4-8",
      "claude-opus-4-7",
      "claude-opus-4-6",
      "claude-sonnet-5-5",
      "claude-sonnet-5",
      "claude-sonnet-4-6",
    ],
  },
  {
    edit: "clear_tool_uses",
    ids: [
      "claude-opus-4-5",
      "claude-opus-4-1",
      "claude-opus-4-0",
      "claude-opus-4",
      "claude-sonnet-4-5",
      "claude-sonnet-4-0",
      "claude-sonnet-4",
      "claude-haiku-5-5",
      "claude-haiku-4-5",
    ],
  },
];

/** The `anthropic-beta` value each edit needs. */
export const API_CONTEXT_EDIT_BETAS: Record<ApiContextEdit, string> = {
  compact: "compact-2026-01-12",
  clear_tool_uses: "context-management-2025-06-27",
};

/** The API-side context edit a model supports, or undefined (agent-ci clears old results itself). */
export function apiContextEditFor(model: string): ApiContextEdit | undefined {
  const id = normalizeModelId(model);
  return API_CONTEXT_EDITS.find((entry) => entry.ids.includes(id))?.edit;
}
