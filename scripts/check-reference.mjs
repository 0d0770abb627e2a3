#!/usr/bin/env node
// Runs the recorded Claude Code cases in test/fixtures/reference/claude-code/ (their README says where they
// come from) through agent-ci's scripted mode and compares each tool result and the files afterwards with
// what Claude Code returned.
//
//   node scripts/check-reference.mjs [--cli PATH] [--verbose] [name-filter ...]
//
// PATH is agent-ci's CLI entry (default: the package's "bin" in the current directory). It is run as
//   node PATH run --script S.json --workspace DIR --mode bypassPermissions --out OUT --output-format stream-json
// and the tool_result blocks are read from the stream-json `user` events on stdout. The files afterwards
// are the starting files with OUT/patch.diff applied (`git apply`). `$WS` in the reference is /workspace.
// Successful results are compared exactly; for errors only is_error is compared (the wording is yours).
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import crypto from "node:crypto";
import { spawnSync } from "node:child_process";
import { fill, fixtureBytes as bytes } from "./reference-fixtures.mjs";

const args = process.argv.slice(2);
const verbose = args.includes("--verbose");
const cliIdx = args.indexOf("--cli");
const filters = args.filter((a, i) => !a.startsWith("--") && (cliIdx < 0 || i !== cliIdx + 1));
const refDir = path.join(import.meta.dirname, "..", "test", "fixtures", "reference", "claude-code");
let cli = cliIdx >= 0 ? path.resolve(args[cliIdx + 1]) : null;
if (!cli) {
  const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
  const bin = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin || {})[0];
  if (!bin) {
    console.error("no --cli given and package.json has no bin");
    process.exit(2);
  }
  cli = path.resolve(bin);
}

// ---- fixtures (the shapes used in the reference files: reference-fixtures.mjs) ----
const when = (m) => (typeof m === "number" ? new Date(m * 1000) : new Date(m));
function build(ws, c) {
  fs.rmSync(ws, { recursive: true, force: true });
  fs.mkdirSync(ws, { recursive: true });
  const times = [];
  const put = (rel, spec) => {
    const abs = path.join(ws, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    if (spec && typeof spec === "object" && spec.dir) fs.mkdirSync(abs, { recursive: true });
    else fs.writeFileSync(abs, bytes(spec));
    if (spec && typeof spec === "object" && spec.mode) fs.chmodSync(abs, parseInt(spec.mode, 8));
    return abs;
  };
  for (const [rel, spec] of Object.entries(c.files || {})) {
    const abs = put(rel, spec);
    if (spec && typeof spec === "object" && spec.mtime !== undefined) times.push([abs, when(spec.mtime)]);
  }
  for (const g of c.generate || []) {
    const s = g.start ?? 1;
    for (let i = s; i < s + g.count; i++) {
      const abs = put(fill(g.pattern, i, g.pad), { content: fill(g.content ?? "", i, g.pad) });
      if (g.mtime_base !== undefined)
        times.push([abs, new Date(when(g.mtime_base).getTime() + (i - s) * 1000 * (g.mtime_step_s ?? 1))]);
    }
  }
  for (const [abs, d] of times) fs.utimesSync(abs, d, d);
}
function tree(root, rel = "") {
  const out = [];
  for (const e of fs
    .readdirSync(path.join(root, rel), { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))) {
    const p = rel ? rel + "/" + e.name : e.name;
    if (p === ".git" || p.startsWith(".git/")) continue;
    if (e.isDirectory())
      out.push(...tree(root, p)); // a patch cannot carry empty directories: files only
    else
      out.push(
        `${p}|file|${crypto
          .createHash("sha256")
          .update(fs.readFileSync(path.join(root, p)))
          .digest("hex")}`,
      );
  }
  return out;
}

// ---- run ----
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "check-reference-"));
const rows = [];
for (const f of fs
  .readdirSync(refDir)
  .filter((f) => f.endsWith(".json"))
  .sort()) {
  const c = JSON.parse(fs.readFileSync(path.join(refDir, f), "utf8"));
  if (filters.length && !filters.some((x) => c.name.includes(x))) continue;
  const ws = path.join(tmp, "ws", c.name);
  build(ws, c);
  const script = path.join(tmp, c.name + ".json");
  fs.writeFileSync(script, JSON.stringify({ turns: c.turns }).split("$WS").join("/workspace"));
  const out = path.join(tmp, "out", c.name);
  const r = spawnSync(
    "node",
    [
      cli,
      "run",
      "--script",
      script,
      "--workspace",
      ws,
      "--mode",
      "bypassPermissions",
      "--out",
      out,
      "--output-format",
      "stream-json",
    ],
    { encoding: "utf8", timeout: 300000, maxBuffer: 256 << 20 },
  );
  const got = [];
  for (const line of (r.stdout || "").split("\n")) {
    if (!line.startsWith("{")) continue;
    let ev;
    try {
      ev = JSON.parse(line);
    } catch {
      continue;
    }
    if (ev.type === "user" && Array.isArray(ev.message?.content))
      for (const b of ev.message.content) if (b?.type === "tool_result") got.push(b);
  }
  const after = path.join(tmp, "after", c.name);
  build(after, c);
  const patch = path.join(out, "patch.diff");
  if (fs.existsSync(patch) && fs.statSync(patch).size)
    spawnSync("git", ["apply", "--binary", patch], { cwd: after });
  const want = c.tree_after
    .filter((x) => x.type === "file" && !x.path.startsWith(".git/"))
    .map((x) => `${x.path}|${x.type}|${x.sha256 ?? ""}`)
    .sort()
    .join("\n");
  const problems = [];
  if (tree(after).sort().join("\n") !== want) problems.push("files afterwards differ");
  if (got.length !== c.results.length)
    problems.push(
      `${got.length} results for ${c.results.length} calls (exit ${r.status}${r.stderr ? ": " + r.stderr.trim().split("\n").pop().slice(0, 120) : ""})`,
    );
  c.results.forEach((w, i) => {
    const g = got[i];
    if (!g) return;
    if (Boolean(g.is_error) !== Boolean(w.is_error))
      problems.push(
        `call ${i} (${w.tool}): is_error ${Boolean(g.is_error)}, expected ${Boolean(w.is_error)}`,
      );
    else if (!w.is_error) {
      const gc = JSON.stringify(g.content ?? null)
        .split("/workspace")
        .join("$WS");
      if (gc !== JSON.stringify(w.content))
        problems.push(
          `call ${i} (${w.tool}): content differs` +
            (verbose
              ? `\n      got:      ${gc.slice(0, 300)}\n      expected: ${JSON.stringify(w.content).slice(0, 300)}`
              : ""),
        );
    }
  });
  rows.push({ name: c.name, problems });
  console.log(
    `${problems.length ? "FAIL" : "ok  "} ${c.name}${problems.length ? "\n    " + problems.join("\n    ") : ""}`,
  );
}
const okN = rows.filter((r) => !r.problems.length).length;
console.log(`\n${okN}/${rows.length} reference cases match`);
process.exit(okN === rows.length ? 0 : 1);
