// The setup cache's age rule against an injected clock: an entry is used up to its max age and not after;
// one made "in the future" (another host's clock) is new; one whose time cannot be read is not used.
import { describe, expect, it } from "vitest";
import { ageInDays, DAY_MS, expiredReason } from "../../../src/setup-cache/expiry.js";
import {
  type CacheEntry,
  CacheSelectionError,
  formatEntries,
  selectEntries,
} from "../../../src/sandbox/setup/entries.js";

const made = Date.UTC(2026, 0, 1);

describe("expiredReason", () => {
  it.each([
    ["an hour old", made + 3_600_000, undefined],
    ["exactly 7 days old", made + 7 * DAY_MS, undefined],
    ["7 days and a millisecond old", made + 7 * DAY_MS + 1, /made 7\.0 days ago, past .* max age of 7 days/],
    ["30 days old", made + 30 * DAY_MS, /made 30\.0 days ago/],
    ["made after the reader's now", made - DAY_MS, undefined],
  ])("%s, with a max age of 7 days", (_, now, expected) => {
    const reason = expiredReason(made, now, 7);
    if (expected === undefined) expect(reason).toBeUndefined();
    else expect(reason).toMatch(expected);
  });

  it("follows the max age given: half a day", () => {
    expect(expiredReason(made, made + 0.4 * DAY_MS, 0.5)).toBeUndefined();
    expect(expiredReason(made, made + 0.6 * DAY_MS, 0.5)).toMatch(/0\.6 days ago/);
  });

  it("does not use an entry whose time cannot be read", () => {
    expect(expiredReason(Number.NaN, made, 7)).toMatch(/cannot be read/);
  });

  it("shows an age from the future as none", () => {
    expect(ageInDays(made, made - DAY_MS)).toBe("0.0");
  });
});

const key = (c: string) => c.repeat(64);
const entry = (k: string, ageDays: number, tag?: string | null): CacheEntry => ({
  tag: tag === null ? undefined : (tag ?? `agent-ci-setup:trusted-${k}`),
  image: `sha256:${k}`,
  key: k,
  namespace: "trusted",
  producer: { event: "cli", ref: "refs/heads/main", commit: "0123456789", runId: "r1" },
  bytes: 42e6,
  createdMs: made - ageDays * DAY_MS,
});

describe("cache rm's selection", () => {
  const entries = [
    entry(key("a"), 1),
    entry(key("a"), 2, `agent-ci-setup:pr-3-${key("a")}`),
    entry(`ab${key("c").slice(2)}`, 9),
    entry(key("b"), 8, null),
  ];

  it("a whole key, its start, or its tag names that key's entries", () => {
    for (const given of [key("a"), "aaaaaaaaaaaa", `agent-ci-setup:trusted-${key("a")}`])
      expect(selectEntries(entries, { key: given }).map((e) => e.tag)).toEqual([
        `agent-ci-setup:trusted-${key("a")}`,
        `agent-ci-setup:pr-3-${key("a")}`,
      ]);
  });

  it("refuses a start shared by two keys, and a key that names nothing", () => {
    expect(() => selectEntries(entries, { key: "a" })).toThrow(CacheSelectionError);
    expect(() => selectEntries(entries, { key: "a" })).toThrow(/start of 2 keys/);
    expect(() => selectEntries(entries, { key: "ffff" })).toThrow(/no setup cache entry has the key ffff/);
    expect(() => selectEntries(entries, { key: "" })).toThrow(CacheSelectionError);
  });

  it("--expired takes the entries past the max age at the given now, untagged ones too", () => {
    const old = selectEntries(entries, { expired: true, maxAgeDays: 7, now: made });
    expect(old.map((e) => e.key)).toEqual([`ab${key("c").slice(2)}`, key("b")]);
    expect(selectEntries(entries, { expired: true, maxAgeDays: 30, now: made })).toEqual([]);
    expect(selectEntries(entries, { expired: true, maxAgeDays: 0.5, now: made })).toHaveLength(4);
  });

  it("--all takes every entry", () => {
    expect(selectEntries(entries, { all: true })).toHaveLength(4);
  });
});

describe("cache ls's table", () => {
  it("shows each entry's key, namespace, producer, size and age, and marks the expired", () => {
    const text = formatEntries([entry(key("a"), 1), entry(key("b"), 8, null)], 7, made);
    const [head, first, second] = text.trimEnd().split("\n");
    expect(head).toMatch(/^KEY +NAMESPACE +PRODUCER +SIZE +CREATED$/);
    expect(first).toMatch(/^aaaaaaaaaaaa +trusted +cli main@0123456 run r1 +42\.0 MB +1\.0 days ago$/);
    expect(second).toMatch(/^bbbbbbbbbbbb +trusted \(untagged\) .* 8\.0 days ago \(expired\)$/);
  });

  it("shows a small entry's size in bytes or kB", () => {
    const small = (bytes: number) => formatEntries([{ ...entry(key("a"), 1), bytes }], 7, made);
    expect(small(120)).toMatch(/ 120 B /);
    expect(small(2300)).toMatch(/ 2\.3 kB /);
  });

  it("says when there is none", () => {
    expect(formatEntries([], 7, made)).toBe("no setup cache entries on this engine\n");
  });
});
