// The Actions' bundles as a job downloads them: dist/ as committed (test/action/dist.test.ts holds that it is what
// a fresh build makes, so these figures are a fresh build's too, without building again). Each entry loads only
// what its imports reach (scripts/bundles.mjs follows them), under the ceilings there; the choose Action carries
// no runner, engine client or model SDK; a run's start parses none of what only some runs use; the chunks and
// source maps are committed; and a stack in the Action's log names src/ files and lines through the maps.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ACTION_CHUNK_PREFIX,
  ACTION_ENTRIES,
  bundleSizes,
  closure,
  committedFiles,
  loadedAtStart,
  modulesOf,
} from "../../scripts/bundles.mjs";

const root = path.resolve(import.meta.dirname, "../..");
const dist = path.join(root, "dist");
const MB = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;

const packagesIn = <T extends string | RegExp>(modules: readonly string[], names: readonly T[]) =>
  names.filter((name) =>
    modules.some((m) => (typeof name === "string" ? m.startsWith(`node_modules/${name}/`) : name.test(m))),
  );

/** What a run of the Action loads only when it uses it (as the CLI does, test/unit/cli-chunks.test.ts, and the Action's own). */
const ACTION_LOADS_WHEN_USED = [
  "@anthropic-ai/sdk",
  "@anthropic-ai/bedrock-sdk",
  "@anthropic-ai/vertex-sdk",
  "@aws-sdk/credential-providers",
  "@modelcontextprotocol/sdk",
  "turndown",
  "@peculiar/x509",
  "dockerode",
  "web-tree-sitter",
  "ajv",
  // The artifact's upload at the run's end, and the clouds' OIDC exchanges (aws_role_to_assume,
  // gcp_workload_identity_provider).
  "@actions/artifact",
  "@aws-sdk/client-sts",
  "google-auth-library",
];
/** Telemetry's SDK and exporters: only with CLAUDE_CODE_ENABLE_TELEMETRY=1 (not bundled until telemetry is). */
const TELEMETRY_SDK = [/^node_modules\/@opentelemetry\/(sdk-|exporter-)/, /^node_modules\/@grpc\//];

describe("the Actions' bundles in dist/", () => {
  it("each entry and dist/ are under their ceilings: choose ≤ 1 MB, the Action ≤ half of its single file", () => {
    const sizes = bundleSizes(dist);
    expect(sizes.entries.map((e) => e.name)).toEqual(Object.keys(ACTION_ENTRIES));
    for (const entry of sizes.entries) {
      expect(entry.files.length, `${entry.entry} loads no chunk`).toBeGreaterThan(1);
      expect(entry.bytes, `${entry.entry} and its chunks: ${MB(entry.bytes)}`).toBeLessThanOrEqual(
        entry.ceiling,
      );
    }
    expect(sizes.committedBytes, `dist/'s committed files: ${MB(sizes.committedBytes)}`).toBeLessThanOrEqual(
      sizes.ceiling,
    );
  });

  it("the choose Action carries the report and the choice, not the runner, the engine client or the model SDKs", () => {
    const modules = modulesOf(dist, closure(dist, "choose.js", { dynamic: true }));
    expect(modules).toContain("src/runner/capabilities/attempts/write-chosen.ts");
    expect(modules).toContain("src/report/write-files.ts");
    expect(
      modules.filter(
        (m) =>
          /^src\/(sandbox|tools|mcp|review)\//.test(m) ||
          /^src\/runner\/(run|loop|model|agents|instructions)[/.]/.test(m) ||
          m === "src/runner/capabilities/attempts/run-attempts.ts",
      ),
    ).toEqual([]);
    expect(
      packagesIn(modules, [...ACTION_LOADS_WHEN_USED, "yaml", "tldts", "tar-stream", "@actions/github"]),
    ).toEqual([]);
  });

  it("the Action's start parses none of what only some runs use: SDKs, MCP, the artifact client, the clouds' exchanges, telemetry", () => {
    const atStart = modulesOf(dist, loadedAtStart(dist, "index.js"));
    expect(atStart).toContain("src/action/main.ts");
    expect(packagesIn(atStart, [...ACTION_LOADS_WHEN_USED, ...TELEMETRY_SDK])).toEqual([]);
    // Still bundled, in the chunks a run loads when it uses them.
    const everything = modulesOf(dist, closure(dist, "index.js", { dynamic: true }));
    expect(packagesIn(everything, ACTION_LOADS_WHEN_USED)).toEqual(ACTION_LOADS_WHEN_USED);
  });

  it("every chunk in dist/ is one an Action can load (a stub of an unused module aside)", () => {
    // esbuild writes a chunk for an import() whose importer it then leaves out: committed, downloaded, never run.
    const loadable = new Set(
      Object.keys(ACTION_ENTRIES).flatMap((name) => closure(dist, `${name}.js`, { dynamic: true })),
    );
    const orphans = fs
      .readdirSync(dist)
      .filter((f) => f.startsWith(ACTION_CHUNK_PREFIX) && f.endsWith(".js") && !loadable.has(f))
      .filter((f) => !modulesOf(dist, [f]).every((m) => m.startsWith("unused:")));
    expect(orphans.map((f) => `${f}: ${modulesOf(dist, [f]).slice(0, 3).join(", ")}`)).toEqual([]);
  });

  it("every file an Action loads is committed, with its source map", () => {
    const committed = committedFiles(dist);
    for (const name of Object.keys(ACTION_ENTRIES)) {
      const files = closure(dist, `${name}.js`, { dynamic: true });
      const missing = files.flatMap((f) => [f, `${f}.map`]).filter((f) => !committed.includes(f));
      expect(missing, `${name}.js`).toEqual([]);
    }
  });

  it("a stack in the Action's log names src/ files and lines (the source maps beside the minified chunks)", () => {
    // A failure the Action reports before it reads anything else: no repository in the environment. With the
    // runner's debug logging on, the log shows the error's stack.
    const context = fs.readFileSync(path.join(root, "src/github/context.ts"), "utf8").split("\n");
    const line = context.findIndex(
      (l, i) =>
        l.includes("throw new ContextError(") && context[i + 1]?.includes("GITHUB_REPOSITORY is not set"),
    );
    expect(line, "src/github/context.ts throws no ContextError for GITHUB_REPOSITORY").toBeGreaterThan(-1);
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-stack-"));
    const child = spawnSync(process.execPath, [path.join(dist, "index.js")], {
      cwd,
      env: { PATH: process.env.PATH ?? "", RUNNER_DEBUG: "1" },
      encoding: "utf8",
    });
    fs.rmSync(cwd, { recursive: true, force: true });
    expect(child.status, child.stderr).toBe(1);
    expect(child.stdout).toContain("::error::agent-ci: ContextError: GITHUB_REPOSITORY is not set");
    const frames = child.stdout.split("\n").filter((l) => /^\s+at /.test(l));
    expect(frames[0]).toMatch(
      new RegExp(
        `[(\\s]${path.join(root, "src/github/context.ts").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:${line + 1}:\\d+\\)?$`,
      ),
    );
    expect(frames.some((f) => f.includes(`${path.join(root, "src/action/main.ts")}:`))).toBe(true);
  });

  it("without the runner's debug logging the failure is its message alone, no stack", () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-stack-"));
    const out = spawnSync(process.execPath, [path.join(dist, "index.js")], {
      cwd,
      env: { PATH: process.env.PATH ?? "" },
      encoding: "utf8",
    });
    fs.rmSync(cwd, { recursive: true, force: true });
    expect(out.stdout).toContain("::error::agent-ci: ContextError: GITHUB_REPOSITORY is not set");
    expect(out.stdout).not.toMatch(/^\s+at /m);
  });
});
