#!/usr/bin/env node
// Generates docs/RELIABILITY.md from the test results: never edit that file by hand.
//
// Inputs:
// - test-results/vitest.json (written by `npm test`, scripts/test.sh): every test's result, and the meta the
//   adversarial harness records per test (escapes, secrets leaked, containers leaked, tool calls, fuzz stats);
// - the `ROWS` tables of test/adversarial/*.test.ts, read from their source with the TypeScript parser (never
//   run): each RELIABILITY.md checklist row is tested there, covered by named tests elsewhere, or does not
//   apply (with the reason);
// - bench/results.json (`npm run bench`) for the load figures, if it exists; test-results/load.json too.
//
// Usage: node scripts/reliability-report.mjs [--results test-results/vitest.json] [--out docs/RELIABILITY.md]
// A results file without any adversarial test (a partial run such as `npm test test/unit`) leaves the
// document as it is.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ADVERSARIAL_DIR = "test/adversarial";

const GROUPS = {
  P: "Path escapes",
  T: "Tool input errors",
  C: "Command faults",
  D: "Container faults",
  R: "Permission-policy bypass attempts",
  S: "Secrets",
  M: "Model and API faults",
  G: "GitHub API and Action faults",
  U: "Untrusted content and prompt injection",
  A: "Subagents",
  X: "MCP servers",
  W: "Web",
  B: "Trust boundaries of the newer surfaces",
};
/** Groups whose failures are escapes: something got past a boundary. */
const ESCAPE_GROUPS = new Set(["P", "R", "U", "B"]);

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

const resultsPath = path.resolve(ROOT, arg("--results", "test-results/vitest.json"));
const outPath = path.resolve(ROOT, arg("--out", "docs/RELIABILITY.md"));

// ------------------------------------------------------------------------------------------------------
// ROWS tables, read as data from the test files' syntax tree

/** Evaluates a literal expression (arrays, objects, strings, numbers, booleans, and consts of the same file). */
function evaluate(node, consts, seen = new Set()) {
  if (
    ts.isAsExpression(node) ||
    ts.isSatisfiesExpression(node) ||
    ts.isParenthesizedExpression(node) ||
    ts.isTypeAssertionExpression(node)
  ) {
    return evaluate(node.expression, consts, seen);
  }
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (ts.isArrayLiteralExpression(node)) return node.elements.map((e) => evaluate(e, consts, seen));
  if (ts.isObjectLiteralExpression(node)) {
    const out = {};
    for (const prop of node.properties) {
      if (ts.isPropertyAssignment(prop))
        out[prop.name.getText().replace(/^["']|["']$/g, "")] = evaluate(prop.initializer, consts, seen);
      else if (ts.isShorthandPropertyAssignment(prop))
        out[prop.name.text] = evaluate(prop.name, consts, seen);
      else throw new Error(`unsupported property in ROWS: ${prop.getText()}`);
    }
    return out;
  }
  if (ts.isIdentifier(node)) {
    const init = consts.get(node.text);
    if (!init || seen.has(node.text))
      throw new Error(`ROWS refers to ${node.text}, which is not a literal const of the same file`);
    return evaluate(init, consts, new Set([...seen, node.text]));
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    return evaluate(node.left, consts, seen) + evaluate(node.right, consts, seen);
  }
  throw new Error(
    `ROWS must be a plain literal; found ${ts.SyntaxKind[node.kind]}: ${node.getText().slice(0, 80)}`,
  );
}

function rowsOf(file) {
  const text = fs.readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const consts = new Map();
  let rows;
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const decl of statement.declarationList.declarations) {
      if (!ts.isIdentifier(decl.name) || !decl.initializer) continue;
      consts.set(decl.name.text, decl.initializer);
      if (decl.name.text === "ROWS") rows = decl.initializer;
    }
  }
  if (!rows) return [];
  return evaluate(rows, consts).map((row) => ({ ...row, file: path.relative(ROOT, file) }));
}

function allRows() {
  const dir = path.join(ROOT, ADVERSARIAL_DIR);
  const rows = [];
  for (const name of fs.readdirSync(dir).sort()) {
    if (name.endsWith(".test.ts")) rows.push(...rowsOf(path.join(dir, name)));
  }
  // A row may be listed by more than one file (D4 has its own engine-restart file): merge them.
  const byId = new Map();
  for (const row of rows) {
    const seen = byId.get(row.id);
    if (!seen) byId.set(row.id, { ...row, files: [row.file] });
    else seen.files.push(row.file);
  }
  const order = (id) => [Object.keys(GROUPS).indexOf(id[0]), Number(id.slice(1))];
  return [...byId.values()].sort((a, b) => {
    const [ga, na] = order(a.id);
    const [gb, nb] = order(b.id);
    return ga - gb || na - nb;
  });
}

// ------------------------------------------------------------------------------------------------------
// Test results

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

function flatten(results) {
  const tests = [];
  for (const file of results.testResults ?? []) {
    const rel = path.relative(ROOT, file.name);
    for (const t of file.assertionResults ?? [])
      tests.push({
        file: rel,
        title: t.title ?? "",
        fullName: t.fullName ?? "",
        status: t.status,
        meta: t.meta ?? {},
        failure: (t.failureMessages ?? [])[0] ?? "",
      });
  }
  return tests;
}

const statusOf = (tests) => {
  if (!tests.length) return "not run";
  if (tests.some((t) => t.status === "failed")) return "fail";
  if (tests.every((t) => t.status === "passed")) return "pass";
  return tests.some((t) => t.status === "passed") ? "pass (some skipped)" : "skipped";
};

function firstLine(message) {
  return (
    message
      .replace(/\u001b\[[0-9;]*m/g, "")
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l && !l.startsWith("at ")) ?? ""
  );
}

// ------------------------------------------------------------------------------------------------------
// Load figures

function loadFigures() {
  const bench = readJson(path.join(ROOT, "bench/results.json"));
  const lines = [];
  const load = bench?.load;
  if (load) {
    const levels = Array.isArray(load) ? load : Array.isArray(load.levels) ? load.levels : [load];
    for (const l of levels) {
      const n = l.n ?? l.N ?? l.level ?? "?";
      const throughput = l.throughput ?? l.callsPerSecond ?? l.callsPerS;
      const p95 = l.p95 ?? l.p95Ms ?? l.latencyP95Ms;
      lines.push(
        `| ${n} | ${fmt(throughput, 1)} calls/s | ${fmt(p95, 0)} ms | bench/results.json \`load\` (${bench.generatedAt ?? "undated"}) |`,
      );
    }
  } else if (bench?.rows) {
    const byN = new Map();
    for (const row of bench.rows) {
      const m = /^N=(\d+): (throughput|per-call latency p95)/.exec(row.measurement ?? "");
      if (!m || !String(row.section ?? "").startsWith("Load")) continue;
      const entry = byN.get(m[1]) ?? {};
      const value = typeof row.agentCi === "number" ? row.agentCi : row.agentCi?.median;
      if (m[2] === "throughput") entry.throughput = value;
      else entry.p95 = value;
      byN.set(m[1], entry);
    }
    for (const [n, e] of byN)
      lines.push(
        `| ${n} | ${fmt(e.throughput, 1)} calls/s | ${fmt(e.p95, 0)} ms | bench/results.json load rows (${bench.generatedAt ?? "undated"}) |`,
      );
  }
  const loadTest = readJson(path.join(ROOT, "test-results/load.json"));
  if (loadTest?.n) {
    lines.push(
      `| ${loadTest.n} | ${fmt(loadTest.callsPerSecond, 1)} calls/s | not measured | test/engines/load.test.ts (${loadTest.completed}/${loadTest.n} runs completed, ${loadTest.calls} calls, agent-ci RSS peak ${loadTest.rssPeakMiB} MiB) |`,
    );
  }
  if (!lines.length)
    return "Load: not measured in this run (no `load` in bench/results.json; run `npm run bench`).";
  return ["| N concurrent runs | Throughput | p95 per call | Source |", "|---|---|---|---|", ...lines].join(
    "\n",
  );
}

function fmt(value, digits) {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(digits) : "—";
}

// ------------------------------------------------------------------------------------------------------
// The document

function cell(text) {
  return String(text).replace(/\|/g, "\\|").replace(/\n/g, " ");
}

function main() {
  const results = readJson(resultsPath);
  if (!results) {
    console.error(
      `reliability-report: no test results at ${path.relative(ROOT, resultsPath)}; run npm test first`,
    );
    process.exit(1);
  }
  // A row may be covered by a unit test: the unit project's results are written beside these
  // (scripts/test.sh), and count for the covering tests only.
  const unitResults = readJson(path.join(path.dirname(resultsPath), "vitest-unit.json"));
  const tests = [...flatten(results), ...(unitResults ? flatten(unitResults) : [])];
  const adversarial = tests.filter((t) => t.file.startsWith(`${ADVERSARIAL_DIR}/`));
  if (!adversarial.length) {
    console.error(
      `reliability-report: ${path.relative(ROOT, resultsPath)} has no ${ADVERSARIAL_DIR} results (a partial run); ${path.relative(ROOT, outPath)} left as it is`,
    );
    return;
  }
  const rows = allRows();
  const rowTests = (row) =>
    adversarial.filter((t) => row.files.includes(t.file) && t.title.startsWith(`${row.id} `));
  const coveringTests = (row) =>
    (row.covered ?? []).flatMap((ref) =>
      tests.filter(
        (t) => t.file === ref.file && (t.title.includes(ref.test) || t.fullName.includes(ref.test)),
      ),
    );

  const perRow = rows.map((row) => {
    const group = row.id[0];
    const kind = row.kind ?? (group === "D" || group === "M" || group === "G" ? "fault" : "input");
    if (row.na)
      return { row, group, kind, how: "n/a", tests: [], status: "n/a", where: `not applicable: ${row.na}` };
    if (row.covered) {
      const found = coveringTests(row);
      const where = row.covered.map((ref) => `${ref.file} › “${ref.test}”`).join("; ");
      return {
        row,
        group,
        kind,
        how: "covered",
        tests: found,
        status: statusOf(found),
        where: `covered by ${where}`,
      };
    }
    const found = rowTests(row);
    const where =
      [...new Set(found.map((t) => `${t.file} › “${t.title}”`))].join("; ") || row.files.join(", ");
    return { row, group, kind, how: "here", tests: found, status: statusOf(found), where };
  });

  const sum = (list, key) => list.reduce((n, t) => n + (t.meta?.agentCi?.[key] ?? 0), 0);
  const fuzz = adversarial.find((t) => t.meta?.fuzz)?.meta.fuzz;
  const fuzzTest = adversarial.find((t) => t.title.startsWith("R fuzz"));

  const groupLines = [];
  const totals = {
    rows: 0,
    here: 0,
    covered: 0,
    na: 0,
    inputsTried: 0,
    inputsPassed: 0,
    faultsInjected: 0,
    faultsSurvived: 0,
    calls: 0,
    escapes: 0,
    secrets: 0,
    containers: 0,
  };
  for (const [group, title] of Object.entries(GROUPS)) {
    const entries = perRow.filter((e) => e.group === group);
    const ran = entries.flatMap((e) => e.tests.map((t) => ({ ...t, kind: e.kind })));
    const ours = ran.filter((t) => t.file.startsWith(`${ADVERSARIAL_DIR}/`));
    const inputs = ran.filter((t) => t.kind === "input");
    const faults = ran.filter((t) => t.kind === "fault");
    const failedHere = entries
      .filter((e) => e.how === "here")
      .flatMap((e) => e.tests)
      .filter((t) => t.status === "failed").length;
    const fuzzFailed = group === "R" && fuzzTest?.status === "failed" ? 1 : 0;
    const escapes = sum(ours, "escapes") + (ESCAPE_GROUPS.has(group) ? failedHere + fuzzFailed : 0);
    const g = {
      rows: entries.length,
      here: entries.filter((e) => e.how === "here").length,
      covered: entries.filter((e) => e.how === "covered").length,
      na: entries.filter((e) => e.how === "n/a").length,
      inputsTried: inputs.length,
      inputsPassed: inputs.filter((t) => t.status === "passed").length,
      faultsInjected: faults.length,
      faultsSurvived: faults.filter((t) => t.status === "passed").length,
      calls: sum(ours, "toolCalls"),
      escapes,
      secrets: sum(ours, "secretsLeaked"),
      containers: sum(ours, "containersLeaked"),
    };
    for (const key of Object.keys(totals)) totals[key] += g[key];
    groupLines.push(
      `| ${group} | ${title} | ${g.rows} | ${g.here} / ${g.covered} / ${g.na} | ${g.inputsPassed} / ${g.inputsTried} | ${g.faultsSurvived} / ${g.faultsInjected} | ${g.calls} | ${g.escapes} | ${g.secrets} | ${g.containers} |`,
    );
  }
  // The harness counts of tests that belong to no row (there are none today; kept honest if added).
  const rowless = adversarial.filter((t) => !perRow.some((e) => e.tests.includes(t)));
  totals.escapes += sum(rowless, "escapes");
  totals.secrets += sum(rowless, "secretsLeaked");
  totals.containers += sum(rowless, "containersLeaked");

  const open = perRow.filter((e) => e.status === "fail");
  const fuzzViolations = fuzzTest?.status === "failed" ? firstLine(fuzzTest.failure) : "";
  const notRun = perRow.filter((e) => e.status === "not run");
  const rowLines = perRow.map((e) => {
    const result =
      e.status === "fail"
        ? `**fail**: ${cell(firstLine(e.tests.find((t) => t.status === "failed")?.failure ?? "")).slice(0, 200)}`
        : e.status;
    return `| ${e.row.id} | ${cell(e.row.what)} | ${e.kind} | ${cell(e.where)} | ${result} |`;
  });

  const generatedAt = new Date().toISOString();
  const started = results.startTime ? new Date(results.startTime).toISOString() : "unknown";
  const doc = [
    "# Reliability: figures from the last test run",
    "",
    `<!-- Generated by scripts/reliability-report.mjs from ${path.relative(ROOT, resultsPath)} at ${generatedAt}. Do not edit by hand: run \`npm test\`. -->`,
    "",
    `The checklist is the rows of \`test/adversarial/*.test.ts\`: the design notes' RELIABILITY.md, in ${Object.keys(GROUPS).length} groups of bad inputs and faults (${Object.keys(GROUPS).join(", ")}), with the rows later trust reviews added (group B from B10).`,
    `Each row is tested in \`test/adversarial/\` through the entry points users use (the \`agent-ci\` CLI with \`--script\` on the real`,
    "Docker engine, `runAgent` with the real SDK against a local fake Messages API), covered by named tests elsewhere, or marked not",
    "applicable with the reason. After every adversarial test a shared harness checks that a host sentinel directory and the host",
    "workspace are byte-identical, that no container or volume of the run is left, that report.json validates and every tool_use has",
    "exactly one tool_result, that no planted fake secret appears in any output, and that plan mode changed nothing.",
    "",
    `Test run started ${started}: ${results.numPassedTests ?? 0} passed, ${results.numFailedTests ?? 0} failed, ${results.numPendingTests ?? 0} skipped (all suites).`,
    "",
    "## Summary",
    "",
    `- Checklist rows: ${totals.rows} (tested here ${totals.here}, covered elsewhere ${totals.covered}, not applicable ${totals.na})`,
    `- Bad inputs tried / passed: ${totals.inputsTried} / ${totals.inputsPassed} (test cases; each tries one or more inputs)`,
    `- Faults injected / survived: ${totals.faultsInjected} / ${totals.faultsSurvived}`,
    `- Tool calls made by the adversarial runs: ${totals.calls}`,
    `- Escapes found: ${totals.escapes}${totals.escapes ? " (see Open findings)" : ""}`,
    `- Secrets leaked: ${totals.secrets}`,
    `- Containers leaked: ${totals.containers}`,
    fuzz
      ? `- Bash matcher fuzz: ${fuzz.tried} random command lines (seed ${fuzz.seed}), ${fuzz.allowed} allowed, ${fuzz.subcommandsChecked} simple commands re-checked, ${fuzz.violations} violation(s)`
      : "- Bash matcher fuzz: not run",
    `- Rows not run in this run: ${notRun.length ? notRun.map((e) => e.row.id).join(", ") : "none"}`,
    "",
    "## Per group",
    "",
    "| | Group | Rows | Here / covered / n/a | Bad inputs passed / tried | Faults survived / injected | Tool calls | Escapes | Secrets leaked | Containers leaked |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...groupLines,
    "",
    "## Load",
    "",
    loadFigures(),
    "",
    "## Open findings",
    "",
    open.length
      ? [
          ...open.map(
            (e) =>
              `- **${e.row.id}** ${e.row.what}: ${firstLine(e.tests.find((t) => t.status === "failed")?.failure ?? "")}`,
          ),
          ...(fuzzViolations ? [`- **R fuzz**: ${fuzzViolations.slice(0, 400)}`] : []),
        ].join("\n")
      : "None: every row that ran passed.",
    "",
    "## Every row",
    "",
    "| Row | Bad input or fault | Kind | Test | Result |",
    "|---|---|---|---|---|",
    ...rowLines,
    "",
    "## How the figures are made",
    "",
    "- *Bad inputs* and *faults* count test cases of the rows of that kind (a test tries several inputs; the tool calls column counts",
    "  those). A covered row counts the covering tests. The fuzzed command lines are counted apart, in the Bash matcher fuzz line.",
    "- *Escapes* are host changes the harness saw (sentinel or workspace) and failed tests of the path, policy and untrusted-content",
    "  groups, the Bash matcher fuzz included: each is something that got past a boundary.",
    "- *Secrets leaked* and *containers leaked* are the harness's own counts after each test.",
    "- Load comes from `bench/results.json` (`npm run bench`) and `test-results/load.json` (test/engines/load.test.ts) when present.",
    "",
  ].join("\n");
  fs.mkdirSync(path.dirname(outPath), { recursive: true });
  fs.writeFileSync(outPath, doc);
  console.error(
    `reliability-report: ${path.relative(ROOT, outPath)}: ${totals.rows} rows, inputs ${totals.inputsPassed}/${totals.inputsTried}, faults ${totals.faultsSurvived}/${totals.faultsInjected}, escapes ${totals.escapes}, secrets ${totals.secrets}, containers ${totals.containers}`,
  );
}

main();
