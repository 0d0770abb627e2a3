// The CLI's bundle is split so that a command loads only what it runs (scripts/build.mjs): `--version` loads
// no bundle, `--help` no run machinery, and a run loads the model SDKs, the MCP SDK, turndown, x509,
// secretlint, dockerode, ajv and WebFetch's fetcher only where it uses them. Checked on a fresh build by what
// each chunk statically imports (esbuild names every module it bundles in a `// path` line), not by timing.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
let out: string;

/** The chunks a file loads before it runs: itself and its static imports, transitively. */
function staticClosure(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = fs.readFileSync(path.join(out, file), "utf8");
    for (const m of text.matchAll(/^(?:import|export)\b[^;"]*?(?:from\s*)?"\.\/([^"]+\.js)"/gm)) visit(m[1]!);
  };
  visit(entry);
  return [...seen];
}

/**
 * The modules bundled into these chunks, as esbuild names them (`node_modules/zod/v4/…`, `src/cli.ts`); a
 * node_modules reached through a link outside the checkout (`../other/node_modules/…`) counts the same.
 */
function modulesOf(files: readonly string[]): string[] {
  return files.flatMap((file) =>
    [
      ...fs
        .readFileSync(path.join(out, file), "utf8")
        .matchAll(/^\/\/ (?:(?:\.\.\/)+[^/\s]+\/)?((?:node_modules|src)\/\S+)$/gm),
    ].map((m) => m[1]!),
  );
}

const packagesIn = (modules: readonly string[], names: readonly string[]) =>
  names.filter((name) => modules.some((m) => m.startsWith(`node_modules/${name}/`)));

/** What a run loads only when it uses it. */
const LOADED_WHEN_USED = [
  "@anthropic-ai/sdk",
  "@anthropic-ai/bedrock-sdk",
  "@anthropic-ai/vertex-sdk",
  "@aws-sdk/credential-providers",
  "google-auth-library",
  "@modelcontextprotocol/sdk",
  "turndown",
  "@peculiar/x509",
  "@secretlint/core",
  "dockerode",
  "web-tree-sitter",
  // --output-schema's validator (and the MCP tools' schema check).
  "ajv",
];

describe("dist/cli.js in chunks", () => {
  beforeAll(() => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-chunks-"));
    execFileSync(process.execPath, [path.join(root, "scripts/build.mjs"), "--outdir", out], {
      cwd: root,
      stdio: "pipe",
    });
    // The bundle's own answer to --version (commander's), for the test of bin/agent-ci.js's.
    fs.writeFileSync(
      path.join(out, "cli-version.mjs"),
      'const { main } = await import("./cli.js");\nawait main([process.argv[0], "agent-ci", process.argv[2]]);\n',
    );
  }, 300_000);

  it("--version and --help load no run machinery: no model or cloud SDK, no zod, no engine client", () => {
    const modules = modulesOf(staticClosure("cli.js"));
    expect(modules).toContain("src/cli.ts");
    expect(
      modules.filter((m) => m.startsWith("src/runner/run") || m.startsWith("src/sandbox/docker")),
    ).toEqual([]);
    // Nor the publish gate's readers of package managers' settings (YAML, ini, TOML).
    expect(packagesIn(modules, [...LOADED_WHEN_USED, "zod", "yaml", "ajv", "ini", "smol-toml"])).toEqual([]);
  });

  it("a run loads the model SDKs, the MCP SDK, turndown, x509, secretlint, dockerode and the Bash parser only where it uses them", () => {
    const runChunk = fs
      .readdirSync(out)
      .find((f) => f.startsWith("cli-chunk-") && modulesOf([f]).includes("src/runner/run.ts"));
    expect(runChunk, "no chunk holds src/runner/run.ts").toBeDefined();
    expect(packagesIn(modulesOf(staticClosure(runChunk!)), LOADED_WHEN_USED)).toEqual([]);
    // Still bundled (the package has no dependencies), in the chunks loaded when they are used.
    const everything = modulesOf(fs.readdirSync(out).filter((f) => f.startsWith("cli")));
    expect(packagesIn(everything, LOADED_WHEN_USED)).toEqual(LOADED_WHEN_USED);
  });

  it("a run's start loads none of Node's https, tls, zlib and dns: WebFetch's fetcher comes with its first call", () => {
    const runChunk = fs
      .readdirSync(out)
      .find((f) => f.startsWith("cli-chunk-") && modulesOf([f]).includes("src/runner/run.ts"));
    const builtins = staticClosure(runChunk!).flatMap((file) =>
      [
        ...fs.readFileSync(path.join(out, file), "utf8").matchAll(/^import\b[^;"]*?from\s*"(node:[^"]+)"/gm),
      ].map((m) => m[1]!),
    );
    expect(builtins).toContain("node:fs");
    expect(builtins.filter((b) => ["node:https", "node:tls", "node:zlib", "node:dns"].includes(b))).toEqual(
      [],
    );
    expect(modulesOf(staticClosure(runChunk!))).not.toContain("src/tools/web-fetch-page.ts");
  });

  it("the bundle's StructuredOutputSpec loads ajv when given a schema, and checks both drafts with it", async () => {
    const chunk = fs
      .readdirSync(out)
      .find(
        (f) => f.startsWith("cli-chunk-") && modulesOf([f]).includes("src/runner/model/structured-output.ts"),
      );
    const { StructuredOutputSpec: Spec } = (await import(
      pathToFileURL(path.join(out, chunk!)).href
    )) as typeof import("../../src/runner/model/structured-output.js");
    for (const $schema of [
      "https://json-schema.org/draft/2020-12/schema",
      "http://json-schema.org/draft-07/schema#",
    ]) {
      const spec = await Spec.compile({ $schema, type: "object", required: ["a"] }, "s.json");
      expect([spec.check({ a: 1 }).valid, spec.check({}).valid]).toEqual([true, false]);
    }
  });

  it("the engine client requires its ssh:// transport (ssh2) on the first use, not when it loads", () => {
    const modem = fs
      .readdirSync(out)
      .filter(
        (f) =>
          f.startsWith("cli-chunk-") && modulesOf([f]).includes("node_modules/docker-modem/lib/modem.js"),
      )
      .map((f) => fs.readFileSync(path.join(out, f), "utf8"));
    expect(modem).toHaveLength(1);
    expect(modem[0]).toMatch(/ssh = function\(options\) \{\s*return require_ssh\(\)\(options\);/);
    expect(modem[0]).not.toMatch(/ssh = require_ssh\(\)/);
  });

  it("zod is bundled with its English messages only (the locales nothing calls are left out)", () => {
    const locales = modulesOf(fs.readdirSync(out).filter((f) => f.startsWith("cli"))).filter((m) =>
      m.startsWith("node_modules/zod/v4/locales/"),
    );
    expect([...new Set(locales)].sort()).toEqual([
      "node_modules/zod/v4/locales/en.js",
      "node_modules/zod/v4/locales/index.js",
    ]);
  });

  it("--version is answered by bin/agent-ci.js without the bundle, as the bundle answers it", () => {
    // The command's file with its package.json and no dist/ beside it: nothing of the bundle can load.
    const alone = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-bin-"));
    fs.mkdirSync(path.join(alone, "bin"));
    fs.copyFileSync(path.join(root, "bin/agent-ci.js"), path.join(alone, "bin/agent-ci.js"));
    fs.copyFileSync(path.join(root, "package.json"), path.join(alone, "package.json"));
    const answer = (file: string, flag: string) =>
      execFileSync(process.execPath, [file, flag], { encoding: "utf8", stdio: "pipe" });
    const bundled = answer(path.join(out, "cli-version.mjs"), "--version");
    expect(bundled).toMatch(/^\d+\.\d+\.\d+\S*\n$/);
    for (const flag of ["--version", "-V"])
      expect(answer(path.join(alone, "bin/agent-ci.js"), flag)).toBe(bundled);
    fs.rmSync(alone, { recursive: true, force: true });
  });
});
