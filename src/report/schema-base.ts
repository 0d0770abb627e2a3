// The smallest pieces of report.json's schema, shared by its parts (schema.ts, schema-agent-tools.ts).
import { z } from "zod";

export const IsoDateTime = z.iso.datetime({ offset: true });
export const NonNegativeInt = z.number().int().nonnegative();
export const Milliseconds = z.number().nonnegative().describe("Milliseconds.");

export const TokenUsage = z
  .object({
    inputTokens: NonNegativeInt,
    outputTokens: NonNegativeInt,
    cacheCreationInputTokens: NonNegativeInt,
    cacheReadInputTokens: NonNegativeInt,
  })
  .meta({ id: "TokenUsage" });
export type TokenUsage = z.infer<typeof TokenUsage>;
