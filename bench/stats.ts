// Timing and summary helpers for the benchmark: medians and p95 over samples, and the Markdown table the
// Performance section of docs/benchmarks.md shows.

import { execFileSync } from "node:child_process";

/**
 * The Node.js that runs the `agent-ci` command in the bench (its own processes: the start-up rows, the cold
 * starts, the attempts): AGENT_CI_BENCH_NODE when set (`scripts/bench-node.sh` fetches the toolbelt's), else
 * the bench's own. Its `node -e 0` is the start-up rows' floor.
 */
export const CLI_NODE = process.env.AGENT_CI_BENCH_NODE || process.execPath;

/** CLI_NODE's version (`v24.21.0`). */
export function cliNodeVersion(): string {
  return CLI_NODE === process.execPath
    ? process.version
    : execFileSync(CLI_NODE, ["--version"], { encoding: "utf8" }).trim();
}

export interface Summary {
  n: number;
  median: number;
  p95: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile of samples (any order). */
export function percentile(samples: readonly number[], p: number): number {
  if (!samples.length) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  return {
    n: sorted.length,
    median,
    p95: percentile(sorted, 95),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/**
 * Milliseconds one call of `fn` takes; when it resolves with `{ selfMs }` (an operation timed where it
 * ran, e.g. in the native worker), that figure.
 */
export async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  const value = await fn();
  const self = (value as { selfMs?: unknown } | null | undefined)?.selfMs;
  return typeof self === "number" ? self : performance.now() - t0;
}

/**
 * Runs `a` and `b` alternately (so that drift on a busy machine hits both sides alike), after `warmup`
 * untimed rounds, and returns the samples of each.
 */
export async function paired(
  reps: number,
  warmup: number,
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<{ a: number[]; b: number[] }> {
  for (let i = 0; i < warmup; i++) {
    await a();
    await b();
  }
  const out = { a: [] as number[], b: [] as number[] };
  for (let i = 0; i < reps; i++) {
    out.a.push(await timeMs(a));
    out.b.push(await timeMs(b));
  }
  return out;
}

/** MB: bytes, shown in millions (the sizes of files). */
export type Unit = "ms" | "calls/s" | "MiB" | "MB";

/** One line of the results table. `agentCi` and `native` are medians (ms) unless `unit` says otherwise. */
export interface Row {
  section: string;
  measurement: string;
  unit: Unit;
  agentCi: Summary | number | null;
  native: Summary | number | null;
  note?: string;
}

/** A row whose two columns are both summaries of samples. */
export function summarized(row: Row | undefined): row is Row & { agentCi: Summary; native: Summary } {
  return (
    typeof row?.agentCi === "object" &&
    row.agentCi !== null &&
    typeof row.native === "object" &&
    row.native !== null
  );
}

function value(cell: Summary | number | null): number | null {
  if (cell === null) return null;
  return typeof cell === "number" ? cell : cell.median;
}

/** Milliseconds added, with their sign: +1.2, -0.1. */
export function signedMs(ms: number): string {
  return `${ms >= 0 ? "+" : "-"}${Math.abs(ms).toFixed(1)}`;
}

export function addedMs(row: Row): number | null {
  const a = value(row.agentCi);
  const n = value(row.native);
  if (row.unit !== "ms" || a === null || n === null) return null;
  return a - n;
}

/** agent-ci over native; for throughput (higher is better) native over agent-ci, so > 1 always means slower. */
export function ratio(row: Row): number | null {
  const a = value(row.agentCi);
  const n = value(row.native);
  if (a === null || n === null || a === 0 || n === 0) return null;
  return row.unit === "calls/s" ? n / a : a / n;
}

function fmt(v: number, unit: Unit): string {
  if (unit === "calls/s") return `${v.toFixed(1)} calls/s`;
  if (unit === "MiB") return `${v.toFixed(0)} MiB`;
  if (unit === "MB") return `${(v / 1e6).toFixed(2)} MB`;
  if (Math.abs(v) >= 1000) return `${(v / 1000).toFixed(2)} s`;
  if (Math.abs(v) >= 100) return `${v.toFixed(0)} ms`;
  return `${v.toFixed(1)} ms`;
}

function cell(c: Summary | number | null, unit: Unit): string {
  if (c === null) return "—";
  if (typeof c === "number") return fmt(c, unit);
  return c.n > 2 ? `${fmt(c.median, unit)} (p95 ${fmt(c.p95, unit)})` : fmt(c.median, unit);
}

/** A table cell's text: a `|` in it (a shell pipeline) would end the cell. */
const escapeCell = (text: string) => text.replace(/\|/g, "\\|");

export function markdownTable(rows: readonly Row[]): string {
  const lines = [
    "| measurement | agent-ci | native | added ms | ratio | notes |",
    "|---|---|---|---|---|---|",
  ];
  let section = "";
  for (const row of rows) {
    if (row.section !== section) {
      section = row.section;
      lines.push(`| **${section}** | | | | | |`);
    }
    const added = addedMs(row);
    const r = ratio(row);
    lines.push(
      [
        "",
        ` ${escapeCell(row.measurement)} `,
        ` ${cell(row.agentCi, row.unit)} `,
        ` ${cell(row.native, row.unit)} `,
        ` ${added === null ? "—" : signedMs(added)} `,
        ` ${r === null ? "—" : `${r.toFixed(2)}×`} `,
        ` ${escapeCell(row.note ?? "")} `,
        "",
      ].join("|"),
    );
  }
  return lines.join("\n");
}
