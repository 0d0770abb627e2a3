// The setup cache (docs/setup-cache.md): how soon the agent's first tool call begins on a run whose `setup`
// runs (and leaves its snapshot) next to the run after it, which starts from that snapshot. Two real projects
// of two ecosystems, made here:
// - Node.js: an app's dependencies (express, lodash, yargs) and its tooling (typescript, eslint, jest) from the
//   npm registry, locked on the host with `npm install --package-lock-only`; setup is `npm ci`, through the setup phase's
//   egress proxy to the registry (where a TLS-inspecting proxy sits in front of it, the CA file the host's npm
//   trusts is given to the sandbox with --ca-cert, as a user behind one does);
// - Python: a package under src/ with a pyproject.toml; setup makes a virtualenv and runs `pip install -e .`
//   with no index, its build requirements (setuptools, wheel) from a wheelhouse in the repository, taken from
//   Debian's own wheel packages (the host's /usr/share/python-wheels, else `apt-get download`).
// Each round: a run whose setup runs (a miss; the snapshot is written before the agent starts), then the same
// run again (a hit), then a run whose manifest changed (a miss again) that starts its setup with the package
// managers' caches the first left in the engine's volume; then the entries and the volume removed, so the
// next round starts cold again (each round names its own volumes). All through the agent-ci command as a
// user runs it, with a script whose one call uses what setup installed. Time to the first tool call: from the
// process's spawn to the call's start (report.json's startedAt + the call's startOffsetMs).
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDockerClient } from "../src/sandbox/engine/docker-client.js";
import type { SetupCache } from "../src/report/schema-setup-cache.js";
import { PACKAGE_CACHE_PREFIX_ENV } from "../src/sandbox/setup/package-cache.js";
import { node } from "./start.js";
import { summarize, type Row } from "./stats.js";

const ROUNDS = 3;
/** The goal: the second run's first tool call at most a quarter of the first's. */
export const SETUP_CACHE_RATIO_GOAL = 0.25;
export const SETUP_SECTION_PREFIX = "Setup cache: second run";
export const SETUP_FIRST_CALL_ROW = "time to the first tool call: second run (restored) vs first (setup ran)";

interface Project {
  name: string;
  dir: string;
  setup: string;
  /** The one call of the script: it uses what setup installed, and prints `expect`. */
  call: string;
  allow: string;
  expect: string;
  extraArgs: string[];
  /** Changes the key (a manifest's description), not what setup installs. */
  rekey: () => void;
}

const git = (dir: string, ...args: string[]) => execFileSync("git", args, { cwd: dir, stdio: "ignore" });
function commitAll(dir: string): void {
  git(dir, "init", "-q");
  git(dir, "add", "-A");
  git(dir, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "init");
}

function write(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
}

/** The CA file the host's npm trusts, where it names one (a TLS-inspecting proxy's). */
function npmCaFile(): string | undefined {
  try {
    const file = execFileSync("npm", ["config", "get", "cafile"], { encoding: "utf8" }).trim();
    return file && file !== "null" && file !== "undefined" && fs.existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/** Gives the manifest's `field` a new nonce in its text: a new key, the same packages installed. */
function describeAnew(file: string, field: RegExp): void {
  const text = fs.readFileSync(file, "utf8");
  const nonce = randomBytes(6).toString("hex");
  fs.writeFileSync(
    file,
    text.replace(field, (m) => m.replace(/[0-9a-f]{12}/, nonce)),
  );
}

/** A nonce in each project's manifest makes its key its own: no entry of an earlier bench is found. */
function nodeProject(parent: string, nonce: string): Project {
  const dir = path.join(parent, "node");
  write(dir, {
    ".gitignore": "node_modules/\n",
    "package.json": `${JSON.stringify(
      {
        name: `bench-setup-${nonce}`,
        version: "1.0.0",
        description: `the setup cache's bench (${nonce})`,
        private: true,
        dependencies: { express: "4.21.2", lodash: "4.17.21", yargs: "17.7.2" },
        devDependencies: { typescript: "5.7.3", eslint: "9.17.0", jest: "29.7.0" },
      },
      null,
      2,
    )}\n`,
    "index.js": "const express = require('express');\nmodule.exports = express();\n",
  });
  execFileSync("npm", ["install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: dir,
    stdio: "ignore",
  });
  commitAll(dir);
  const ca = npmCaFile();
  return {
    name: "Node.js, `npm ci` (express, lodash, yargs; typescript, eslint, jest)",
    dir,
    setup: "npm ci --no-audit --no-fund",
    call: `node -e "for (const m of ['express', 'lodash', 'yargs', 'typescript', 'eslint', 'jest']) require(m); console.log('deps ok')"`,
    allow: "Bash(node:*)",
    expect: "deps ok",
    extraArgs: ca ? ["--ca-cert", ca] : [],
    rekey: () => describeAnew(path.join(dir, "package.json"), /"description": "[^"]*"/),
  };
}

/** Debian's wheels of setuptools and wheel: the host's, else fetched from Debian's archive. */
function debianWheels(into: string, scratch: string): void {
  const have = "/usr/share/python-wheels";
  const wanted = (f: string) => /^(setuptools|wheel)-.*\.whl$/.test(f);
  let from = fs.existsSync(have) ? have : "";
  if (!from || fs.readdirSync(from).filter(wanted).length < 2) {
    execFileSync("sh", ["-c", "apt-get download -q python3-setuptools-whl python3-wheel-whl >/dev/null"], {
      cwd: scratch,
    });
    for (const deb of fs.readdirSync(scratch).filter((f) => f.endsWith(".deb")))
      execFileSync("dpkg-deb", ["-x", deb, "root"], { cwd: scratch });
    from = path.join(scratch, "root/usr/share/python-wheels");
  }
  fs.mkdirSync(into, { recursive: true });
  for (const f of fs.readdirSync(from).filter(wanted))
    fs.copyFileSync(path.join(from, f), path.join(into, f));
}

function pythonProject(parent: string, nonce: string): Project {
  const dir = path.join(parent, "python");
  write(dir, {
    ".gitignore": ".venv/\n*.egg-info/\n__pycache__/\n",
    "pyproject.toml": [
      "[build-system]",
      'requires = ["setuptools>=61", "wheel"]',
      'build-backend = "setuptools.build_meta"',
      "",
      "[project]",
      'name = "tinycalc"',
      'version = "0.1.0"',
      `description = "the setup cache's bench (${nonce})"`,
      "",
      "[tool.setuptools.packages.find]",
      'where = ["src"]',
      "",
    ].join("\n"),
    "src/tinycalc/__init__.py": "def add(a, b):\n    return a + b\n",
  });
  const scratch = fs.mkdtempSync(path.join(parent, "deb-"));
  debianWheels(path.join(dir, "wheels"), scratch);
  fs.rmSync(scratch, { recursive: true, force: true });
  commitAll(dir);
  return {
    name: "Python, `pip install -e .` (no index, a wheelhouse)",
    dir,
    setup: "python3 -m venv .venv && .venv/bin/pip install -q --no-index --find-links wheels -e .",
    call: `.venv/bin/python -c "import tinycalc; print('sum', tinycalc.add(2, 3))"`,
    allow: "Bash(.venv/bin/python:*)",
    expect: "sum 5",
    extraArgs: [],
    rekey: () => describeAnew(path.join(dir, "pyproject.toml"), /description = "[^"]*"/),
  };
}

interface RunReport {
  startedAt: string;
  phases?: Array<{ name: string; durationMs: number }>;
  toolCalls: Array<{ startOffsetMs: number; exitCode?: number; resultPreview?: string }>;
  setupCache?: SetupCache;
}

interface Measured {
  firstCallMs: number;
  setupMs: number;
  report: RunReport;
}

async function measuredRun(
  bin: string,
  project: Project,
  script: string,
  out: string,
  env: Record<string, string>,
): Promise<Measured> {
  const spawned = Date.now();
  await node(
    [
      bin,
      "run",
      "--workspace",
      project.dir,
      "--script",
      script,
      "--network",
      "setup",
      "--setup",
      project.setup,
      "--allow",
      project.allow,
      ...project.extraArgs,
      "--out",
      out,
      "--quiet",
    ],
    project.dir,
    env,
  );
  const report = JSON.parse(fs.readFileSync(path.join(out, "report.json"), "utf8")) as RunReport;
  const call = report.toolCalls[0];
  if (!call || call.exitCode !== 0 || !call.resultPreview?.includes(project.expect))
    throw new Error(`setup bench: the call on what setup installed failed: ${JSON.stringify(call)}`);
  return {
    firstCallMs: Date.parse(report.startedAt) + call.startOffsetMs - spawned,
    setupMs: report.phases?.find((p) => p.name === "setup")?.durationMs ?? Number.NaN,
    report,
  };
}

/** How long a run's setup phase spent writing the cache: its snapshot and its package cache. */
const writingMs = (m: Measured): number =>
  (m.report.setupCache?.saved?.ms ?? 0) + (m.report.setupCache?.packageCache?.saved?.ms ?? 0);

/**
 * One project's rounds: the first run (a miss, its snapshot and package cache written), the second (a hit),
 * a third on a changed manifest (a miss with the package cache warm); then the entries and the volume removed.
 */
async function benchProject(
  bin: string,
  project: Project,
  dir: string,
  log: (line: string) => void,
): Promise<Row[]> {
  const docker = createDockerClient();
  const script = path.join(dir, `${path.basename(project.dir)}.script.json`);
  fs.writeFileSync(
    script,
    JSON.stringify({ turns: [[{ name: "Bash", input: { command: project.call } }]], final: "done" }),
  );
  const first: Measured[] = [];
  const second: Measured[] = [];
  const warmMiss: Measured[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const out = (which: string) => path.join(dir, `out-${path.basename(project.dir)}-${i}-${which}`);
    // Each round's volumes are its own: its first run starts with no package cache.
    const env = { [PACKAGE_CACHE_PREFIX_ENV]: `agent-ci-bench-pkg-${randomBytes(4).toString("hex")}` };
    const made: Array<Measured | undefined> = [];
    try {
      const a = await measuredRun(bin, project, script, out("first"), env);
      made.push(a);
      if (a.report.setupCache?.outcome !== "miss" || !a.report.setupCache.saved)
        throw new Error(
          `setup bench: the first run was not a miss that saved its snapshot: ${JSON.stringify(a.report.setupCache)}`,
        );
      const b = await measuredRun(bin, project, script, out("second"), env);
      if (b.report.setupCache?.outcome !== "hit")
        throw new Error(
          `setup bench: the second run did not start from the snapshot: ${b.report.setupCache?.outcome}`,
        );
      first.push(a);
      second.push(b);
      // A setup that caches nothing (pip from a local wheelhouse keeps no wheels) has no warm miss to measure.
      let warm = "";
      if (a.report.setupCache.packageCache?.saved) {
        project.rekey();
        const c = await measuredRun(bin, project, script, out("warm-miss"), env);
        made.push(c);
        if (c.report.setupCache?.outcome !== "miss" || !c.report.setupCache.packageCache?.restored.length)
          throw new Error(
            `setup bench: the run on a changed manifest was not a miss with the package cache restored: ${JSON.stringify(c.report.setupCache?.packageCache)}`,
          );
        warmMiss.push(c);
        warm = `; a miss with the package cache warm ${(c.firstCallMs / 1000).toFixed(1)} s`;
      }
      log(
        `setup: ${project.name}, round ${i + 1}: first call after ${(a.firstCallMs / 1000).toFixed(1)} s, then ${(b.firstCallMs / 1000).toFixed(1)} s${warm}`,
      );
    } finally {
      for (const m of made) {
        const cache = m?.report.setupCache;
        if (cache?.saved) await docker.getImage(cache.saved.tag).remove();
        const volume = cache?.packageCache?.saved?.volume;
        if (volume)
          await docker
            .getVolume(volume)
            .remove()
            .catch(() => undefined);
      }
    }
  }
  const section = `${SETUP_SECTION_PREFIX} (agent-ci column) next to the first (native column): ${project.name}`;
  const bytes = first.map((m) => m.report.setupCache?.saved?.bytes ?? 0);
  return [
    {
      section,
      measurement: SETUP_FIRST_CALL_ROW,
      unit: "ms",
      agentCi: summarize(second.map((m) => m.firstCallMs)),
      native: summarize(first.map((m) => m.firstCallMs)),
      note: `goal ≤ ${SETUP_CACHE_RATIO_GOAL}×; from the process's spawn; ${ROUNDS} rounds`,
    },
    {
      section,
      measurement: "· the first run's first tool call less writing its snapshot and package cache",
      unit: "ms",
      agentCi: null,
      native: summarize(first.map((m) => m.firstCallMs - writingMs(m))),
      note: "a run with --no-setup-cache would wait about this",
    },
    {
      section,
      measurement: "· the setup phase: snapshot restored vs setup run and snapshot written",
      unit: "ms",
      agentCi: summarize(second.map((m) => m.setupMs)),
      native: summarize(first.map((m) => m.setupMs)),
    },
    {
      section,
      measurement: "· of which writing the snapshot (first run)",
      unit: "ms",
      agentCi: null,
      native: summarize(first.map((m) => m.report.setupCache?.saved?.ms ?? Number.NaN)),
      note: `the entry's image ${(summarize(bytes).median / 1e6).toFixed(0)} MB, the base image's layers included`,
    },
    ...warmMissRows(section, first, warmMiss),
  ];
}

/** A miss with the package cache warm against a cold one, where the project's setup caches anything. */
function warmMissRows(section: string, first: Measured[], warmMiss: Measured[]): Row[] {
  if (!warmMiss.length) return [];
  const restored = warmMiss.map((m) =>
    (m.report.setupCache?.packageCache?.restored ?? []).reduce((sum, r) => sum + r.bytes, 0),
  );
  return [
    {
      section,
      measurement:
        "· a miss (changed manifest) with the package cache warm vs a cold miss: first tool call, less writing the cache",
      unit: "ms",
      agentCi: summarize(warmMiss.map((m) => m.firstCallMs - writingMs(m))),
      native: summarize(first.map((m) => m.firstCallMs - writingMs(m))),
      note: `the package cache restored: ${(summarize(restored).median / 1e6).toFixed(1)} MB`,
    },
  ];
}

export async function benchSetupCache(repoRoot: string, log: (line: string) => void): Promise<Row[]> {
  const bin = path.join(repoRoot, "bin/agent-ci.js");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-bench-setup-"));
  try {
    const nonce = randomBytes(6).toString("hex");
    log("setup: making the projects (an npm lockfile from the registry, Debian's wheels)");
    const projects = [nodeProject(dir, nonce), pythonProject(dir, nonce)];
    // The images made or pulled before the first timed run: a run with no setup on the first project.
    const warm = path.join(dir, "warm.script.json");
    fs.writeFileSync(warm, JSON.stringify({ turns: [], final: "done" }));
    await node(
      [
        bin,
        "run",
        "--workspace",
        projects[0]!.dir,
        "--script",
        warm,
        "--out",
        path.join(dir, "warm"),
        "--quiet",
      ],
      dir,
    );
    const rows: Row[] = [];
    for (const project of projects) {
      log(
        `setup: ${project.name}: ${ROUNDS} rounds of a first run (setup), a second (restored) and a miss with the package cache warm`,
      );
      rows.push(...(await benchProject(bin, project, dir, log)));
    }
    return rows;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
