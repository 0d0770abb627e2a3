// Generates the benchmark's repositories (deterministic, so every run measures the same tree): source
// files in several languages with the markers the scripted session greps for, a small Python package
// with a failing test to fix, a 2,000-line file to Read, and incompressible binaries — committed as a
// git repository whose objects are packed, as a fresh clone's are.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface RepoOptions {
  /** Every file of the working tree (text + binary), .git not counted. */
  files: number;
  binaryFiles: number;
  /** Approximate bytes of all text files and of all binary files. */
  textBytes: number;
  binaryBytes: number;
  seed?: number;
  /** Where the repository's folder is made (default: the OS temp folder). */
  parent?: string;
  /** Every generated text file this many lines long (textBytes is then ignored); default: sizes spread around the mean. */
  linesPerFile?: number;
}

export interface GeneratedRepo {
  dir: string;
  files: number;
  bytes: number;
  /** Bytes of .git after packing. */
  gitBytes: number;
  /** Relative paths the scripted session and the per-call benchmark use. */
  readTarget: string;
  tsFiles: string[];
  pyFiles: string[];
  goFiles: string[];
  jsonFiles: string[];
  /** Files that define and call `parseConfig` (the rename the session does). */
  parseConfigFiles: string[];
}

export const READ_TARGET = "docs/reference/api-2000.ts";
export const READ_TARGET_LINES = 2000;
/** A line that appears once in the Read target; the per-call Edit flips it back and forth. */
export const EDIT_MARKER = 'export const BENCH_MARKER = "alpha";';
export const EDIT_MARKER_ALT = 'export const BENCH_MARKER = "omega";';
export const GO_MARKER = "// handler: keep in sync with the router table";

const WORDS = (
  "account adapter alias batch buffer cache client config context cursor decode delta digest encode entry event " +
  "filter format frame gateway handler header index inventory ledger loader mapper matrix merge metric module " +
  "network order parser patch payload pipeline policy query queue record render report request resolver router " +
  "sample schema session signal snapshot source stream summary target tenant token tracker update vector worker"
).split(" ");

/** mulberry32: small, fast and deterministic. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Gen {
  constructor(readonly rand: () => number) {}
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.rand() * (hi - lo + 1));
  }
  word(): string {
    return WORDS[this.int(0, WORDS.length - 1)] ?? "item";
  }
  ident(): string {
    const w = this.word();
    return w + this.word().replace(/^./, (c) => c.toUpperCase());
  }
  chance(p: number): boolean {
    return this.rand() < p;
  }
}

function tsBlock(g: Gen, i: number): string {
  const fn = g.ident();
  const a = g.word();
  const b = g.word() + "s";
  const todo = g.chance(0.04) ? " // TODO: handle the empty case" : "";
  const cls = g.chance(0.03)
    ? `\nexport class ${fn.replace(/^./, (c) => c.toUpperCase())}Service {\n  constructor(private readonly ${a}: string) {}\n}\n`
    : "";
  return (
    `/** Computes the ${a} ${g.word()} for the ${g.word()} ${g.word()}. */\n` +
    `export function ${fn}${i}(${a}: number, ${b}: readonly string[]): number {\n` +
    `  const total = ${a} * ${g.int(2, 97)} + ${b}.length;${todo}\n` +
    `  if (total > ${g.int(100, 9999)}) return total - ${g.int(1, 50)};\n` +
    `  return ${b}.reduce((n, s) => n + s.length, total);\n` +
    `}\n${cls}\n`
  );
}

function pyBlock(g: Gen, i: number): string {
  const fn = `${g.word()}_${g.word()}_${i}`;
  const todo = g.chance(0.04) ? "  # TODO: cache this" : "";
  return (
    `def ${fn}(${g.word()}, items):\n` +
    `    """Return the ${g.word()} ${g.word()} of items."""\n` +
    `    total = ${g.int(1, 99)}${todo}\n` +
    `    for item in items:\n` +
    `        total += len(str(item)) * ${g.int(2, 9)}\n` +
    `    return total\n\n\n`
  );
}

function goBlock(g: Gen, i: number): string {
  const name = g.ident().replace(/^./, (c) => c.toUpperCase());
  const todo = g.chance(0.04) ? " // TODO: propagate the context" : "";
  return (
    `// ${name}${i} handles the ${g.word()} ${g.word()}.\n` +
    `func (s *Server) Handle${name}${i}(w http.ResponseWriter, r *http.Request) {\n` +
    `\tcount := len(r.URL.Query()) * ${g.int(2, 40)}${todo}\n` +
    `\tif count > ${g.int(10, 500)} {\n\t\thttp.Error(w, "too many ${g.word()}s", http.StatusBadRequest)\n\t\treturn\n\t}\n` +
    `\tfmt.Fprintf(w, "%d ${g.word()}s\\n", count)\n}\n\n`
  );
}

function mdBlock(g: Gen): string {
  const words = Array.from({ length: g.int(30, 80) }, () => g.word()).join(" ");
  const todo = g.chance(0.04) ? "\n\nTODO: document the failure modes." : "";
  return `## The ${g.word()} ${g.word()}\n\n${words}.${todo}\n\n`;
}

function jsonFile(g: Gen, bytes: number): string {
  const entries: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const e = `  "${g.word()}_${i}": { "enabled": ${g.chance(0.5)}, "limit": ${g.int(1, 5000)}, "label": "${g.word()} ${g.word()}" }`;
    entries.push(e);
    size += e.length + 2;
  }
  return `{\n${entries.join(",\n")}\n}\n`;
}

function textFile(g: Gen, ext: string, bytes: number, header: string): string {
  if (ext === "json") return jsonFile(g, bytes);
  const parts = [header];
  let size = header.length;
  const start = ext === "go" ? 'package handlers\n\nimport (\n\t"fmt"\n\t"net/http"\n)\n\n' : "";
  parts.push(start);
  size += start.length;
  for (let i = 0; size < bytes; i++) {
    const block =
      ext === "ts" ? tsBlock(g, i) : ext === "py" ? pyBlock(g, i) : ext === "go" ? goBlock(g, i) : mdBlock(g);
    parts.push(block);
    size += block.length;
  }
  return parts.join("");
}

/** The first `n` lines of `text`, each ended by a newline. */
function firstLines(text: string, n: number): string {
  return text.split("\n").slice(0, n).join("\n") + "\n";
}

/** The 2,000-line file the Read benchmark reads: short lines, one unique marker line. */
function readTarget(g: Gen): string {
  const lines: string[] = [];
  for (let i = 1; lines.length < READ_TARGET_LINES - 1; i++) {
    if (i === 1000) lines.push(EDIT_MARKER);
    else if (i % 10 === 1) lines.push(`// section ${i}: ${g.word()} ${g.word()}`);
    else lines.push(`export const ${g.word()}${i} = ${g.int(0, 99999)}; // ${g.word()}`);
  }
  return lines.join("\n") + "\n";
}

const CALC_CORE = `"""Small numeric helpers used by the reports."""


def mean(values):
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / (len(values) - 1)


def clamp(x, lo, hi):
    return max(lo, min(x, hi))


def median(values):
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2
`;

const CALC_STATS = `"""Running statistics."""
from calc.core import mean


def spread(values):
    return max(values) - min(values)


def variance(values):
    m = mean(values)
    return sum((v - m) ** 2 for v in values) / len(values)
`;

const TEST_CORE = `import unittest

from calc.core import clamp, mean, median


class CoreTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_clamp(self):
        self.assertEqual(clamp(12, 0, 10), 10)

    def test_median(self):
        self.assertEqual(median([3, 1, 2]), 2)


if __name__ == "__main__":
    unittest.main()
`;

function testModule(i: number): string {
  return `import unittest

from calc.core import clamp, median


class Module${i}Test(unittest.TestCase):
${Array.from(
  { length: 8 },
  (_, k) => `    def test_case_${k}(self):
        values = [(n * ${k + 3}) % ${97 + i} for n in range(4000)]
        self.assertEqual(clamp(median(values), 0, 1000), median(values))
`,
).join("\n")}
`;
}

function gitRun(dir: string, ...args: string[]): void {
  execFileSync(
    "git",
    ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "core.fsmonitor=false", ...args],
    {
      cwd: dir,
      stdio: "pipe",
      maxBuffer: 1 << 26,
    },
  );
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}

export function generateRepo(options: RepoOptions): GeneratedRepo {
  const g = new Gen(prng(options.seed ?? 20240601));
  const dir = fs.mkdtempSync(path.join(options.parent ?? os.tmpdir(), "agent-ci-bench-repo-"));
  let bytes = 0;
  const write = (rel: string, data: string | Buffer) => {
    const abs = path.join(dir, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, data);
    bytes += typeof data === "string" ? Buffer.byteLength(data) : data.length;
  };
  const fixed: Record<string, string> = {
    "README.md":
      "# bench-service\n\nA generated repository for agent-ci's benchmark.\n\n## Tests\n\n    python3 -m unittest discover -s tests -q\n",
    ".gitignore": "node_modules/\nbuild/\n*.log\n__pycache__/\n",
    "package.json":
      JSON.stringify(
        { name: "bench-service", version: "1.0.0", private: true, scripts: { test: "python3 -m unittest" } },
        null,
        2,
      ) + "\n",
    "calc/__init__.py": "",
    "calc/core.py": CALC_CORE,
    "calc/stats.py": CALC_STATS,
    "tests/__init__.py": "",
    "tests/test_core.py": TEST_CORE,
    [READ_TARGET]: readTarget(g),
  };
  for (let i = 0; i < 6; i++) fixed[`tests/test_module_${i}.py`] = testModule(i);
  for (const [rel, data] of Object.entries(fixed)) write(rel, data);

  const textFiles = options.files - options.binaryFiles - Object.keys(fixed).length;
  const perText = options.textBytes / textFiles;
  const byExt: Record<string, string[]> = { ts: [], py: [], go: [], md: [], json: [] };
  const exts = ["ts", "ts", "ts", "ts", "py", "py", "py", "go", "md", "json"];
  const parseConfigFiles: string[] = [];
  for (let i = 0; i < textFiles; i++) {
    const ext = exts[i % exts.length] ?? "ts";
    const rel = `src/pkg${String(i % 40).padStart(2, "0")}/mod${Math.floor(i / 40) % 8}/${g.word()}_${i}.${ext}`;
    // Sizes spread from a fifth to about three times the mean, as real source files are.
    const size = Math.round(perText * (0.2 + 1.6 * g.rand() ** 2 * 1.5));
    let header = ext === "py" ? `# ${rel}\n` : ext === "md" ? `# ${g.word()} ${g.word()}\n\n` : `// ${rel}\n`;
    if (ext === "ts" && i % 97 === 3) {
      parseConfigFiles.push(rel);
      header +=
        `export function parseConfig(text: string): Record<string, string> {\n` +
        `  return Object.fromEntries(text.split("\\n").map((l) => l.split("=") as [string, string]));\n}\n` +
        `export const defaults${i} = parseConfig("mode=fast");\n\n`;
    }
    if (ext === "go" && byExt.go?.length === 0) header += `${GO_MARKER}\n`;
    const text = textFile(g, ext, options.linesPerFile ? options.linesPerFile * 120 : size, header);
    write(rel, options.linesPerFile ? firstLines(text, options.linesPerFile) : text);
    byExt[ext]?.push(rel);
  }
  const binExts = ["png", "woff2", "bin", "jpg"];
  const perBinary = options.binaryBytes / Math.max(1, options.binaryFiles);
  for (let i = 0; i < options.binaryFiles; i++) {
    const ext = binExts[i % binExts.length] ?? "bin";
    const size = Math.round(perBinary * (0.3 + 1.4 * g.rand()));
    write(`assets/${ext}/asset_${i}.${ext}`, crypto.randomBytes(size));
  }

  gitRun(dir, "init", "-q", "-b", "main");
  gitRun(dir, "add", "-A");
  gitRun(dir, "commit", "-q", "-m", "initial import");
  // A clone's objects are packed; 5,000 loose objects would double the files to copy.
  gitRun(dir, "repack", "-a", "-d", "-q", "--window=0");
  gitRun(dir, "prune-packed");
  return {
    dir,
    files: options.files,
    bytes,
    gitBytes: dirBytes(path.join(dir, ".git")),
    readTarget: READ_TARGET,
    tsFiles: byExt.ts ?? [],
    pyFiles: byExt.py ?? [],
    goFiles: byExt.go ?? [],
    jsonFiles: byExt.json ?? [],
    parseConfigFiles,
  };
}
