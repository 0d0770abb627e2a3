// The layering of src/ as docs/ARCHITECTURE.md states it: the rules are read from the document's tables (one
// definition), every import of every file in src/ is checked against them, and a checker that could not
// fail would pass the planted violations at the end.
import fs from "node:fs";
import { isBuiltin } from "node:module";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { CAPABILITIES } from "../../src/runner/capabilities/index.js";
import { parseRunConfig } from "../../src/runner/config.js";
import { telemetry } from "../../src/telemetry/capability.js";

const root = path.resolve(import.meta.dirname, "../..");
const doc = fs.readFileSync(path.join(root, "docs/ARCHITECTURE.md"), "utf8");

/** The rows of the table between `<!-- name -->` and `<!-- /name -->`, as cells with backticks removed. */
function table(name: string): string[][] {
  const start = doc.indexOf(`<!-- ${name} -->`);
  const end = doc.indexOf(`<!-- /${name} -->`);
  if (start === -1 || end === -1) throw new Error(`docs/ARCHITECTURE.md has no ${name} table`);
  return doc
    .slice(start, end)
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) =>
      line
        .slice(1, -1)
        .split("|")
        .map((cell) => cell.trim().replaceAll("`", "")),
    );
}
const list = (cell: string) => (cell === "—" ? [] : cell.split(",").map((item) => item.trim()));

interface Room {
  name: string;
  /** Folders (ending in `/`) and files of src/. */
  paths: string[];
  mayImport: Set<string>;
}
const ROOMS: Room[] = table("rooms").map(([name, files, mayImport]) => ({
  name: name!,
  paths: list(files!),
  mayImport: new Set(list(mayImport!)),
}));
const PACKAGES = new Map(table("packages").map(([pkg, rooms]) => [pkg!, new Set(list(rooms!))]));
/** Node APIs policy may import: whole modules, or (for a module that also does I/O) only the named pure functions. */
const POLICY_NODE_APIS = new Map<string, Set<string> | "all">([
  ["node:module", "all"],
  ["node:path", "all"],
  ["node:net", new Set(["isIP", "isIPv4", "isIPv6", "BlockList"])],
  ["node:v8", new Set(["setFlagsFromString"])],
]);

/** Folders beside src/ that hold no part of agent-ci: src/ may not import them (the tests, the bench, the build). */
const NOT_SOURCE = ["test/", "bench/", "scripts/"];
/** The build step src/ does import: the modules that carry a bundled program as text call it from source. */
const BUILD_STEPS = new Set(["scripts/embedded.mjs"]);

function roomOf(file: string): string | undefined {
  return ROOMS.find((room) => room.paths.some((p) => (p.endsWith("/") ? file.startsWith(p) : file === p)))
    ?.name;
}

interface Import {
  specifier: string;
  typeOnly: boolean;
  /** The named bindings, when the import names only those (no default, no namespace, no `import()`). */
  names?: string[];
}

/** Every module a file names: imports, re-exports, `import()` and `require()`. */
function importsOf(file: string, text: string): Import[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const found: Import[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        !!clause &&
        (clause.isTypeOnly ||
          (!clause.name &&
            !!clause.namedBindings &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      const named =
        clause && !clause.name && clause.namedBindings && ts.isNamedImports(clause.namedBindings)
          ? clause.namedBindings.elements.map((e) => (e.propertyName ?? e.name).text)
          : undefined;
      found.push({ specifier: node.moduleSpecifier.text, typeOnly, ...(named ? { names: named } : {}) });
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === "require")) &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `node:fs` for `fs` too; `@scope/name` and `name` without their subpaths. */
function packageName(specifier: string): string {
  if (isBuiltin(specifier))
    return specifier.startsWith("node:") ? specifier.split("/")[0]! : `node:${specifier.split("/")[0]}`;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** What breaks the rules, one line per import, for files given as src/-relative path → text. */
function violations(files: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, text] of files) {
    const room = roomOf(file);
    if (!room) {
      problems.push(`${file}: in no room of docs/ARCHITECTURE.md`);
      continue;
    }
    const rules = ROOMS.find((r) => r.name === room)!;
    for (const { specifier, typeOnly, names } of importsOf(file, text)) {
      if (specifier.startsWith(".")) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
        if (!target.startsWith("src/")) {
          if (NOT_SOURCE.some((dir) => target.startsWith(dir)) && !BUILD_STEPS.has(target))
            problems.push(`${file}: imports ${target}, outside agent-ci's sources`);
          continue; // package.json, and the build step named in BUILD_STEPS
        }
        const resolved = target.replace(/\.js$/, ".ts");
        const targetRoom = roomOf(resolved) ?? roomOf(target);
        if (targetRoom === "entry") problems.push(`${file}: imports the entry ${specifier}`);
        else if (targetRoom !== room && !(targetRoom && rules.mayImport.has(targetRoom)))
          problems.push(`${file}: ${room} may not import ${targetRoom ?? "?"} (${specifier})`);
        continue;
      }
      const pkg = packageName(specifier);
      const owners = PACKAGES.get(pkg);
      const typesAreFree = pkg === "@anthropic-ai/sdk";
      if (owners && !owners.has(room) && !(typeOnly && typesAreFree))
        problems.push(`${file}: ${pkg} belongs to ${[...owners].join(", ")}, not ${room}`);
      const pure = POLICY_NODE_APIS.get(pkg);
      if (
        room === "policy" &&
        pkg.startsWith("node:") &&
        pure !== "all" &&
        !(pure && names?.every((name) => pure.has(name)))
      )
        problems.push(
          `${file}: policy is pure, and may not import ${pkg}${names ? ` { ${names.join(", ")} }` : ""}`,
        );
    }
  }
  return problems;
}

/** Each file's imports of other files in `files` (type-only included), as their paths. */
function localImports(files: ReadonlyMap<string, string>): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const [file, text] of files) {
    const targets = importsOf(file, text)
      .filter(({ specifier }) => specifier.startsWith("."))
      .map(({ specifier }) =>
        path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)).replace(/\.js$/, ".ts"),
      )
      .filter((target) => files.has(target));
    edges.set(file, targets);
  }
  return edges;
}

/** The folder of `room` (src/runner/, src/sandbox/) a file is in (`model/`, `run/`, …), or `top` for the files beside its door. */
function roomFolder(room: string, file: string): string {
  const rest = file.slice(room.length);
  return rest.includes("/") ? `${rest.split("/")[0]}/` : "top";
}

/** For each folder of `room`, the other folders of it (and `top`) its files import, drawn from the code. */
function folderImports(room: string, files: ReadonlyMap<string, string>): Map<string, string[]> {
  const found = new Map<string, Set<string>>();
  for (const [file, targets] of localImports(files)) {
    if (!file.startsWith(room) || roomFolder(room, file) === "top") continue;
    const from = roomFolder(room, file);
    const into = found.get(from) ?? found.set(from, new Set()).get(from)!;
    for (const target of targets)
      if (target.startsWith(room) && roomFolder(room, target) !== from) into.add(roomFolder(room, target));
  }
  return new Map([...found].map(([folder, into]) => [folder, [...into].sort()]));
}

/** Folders where no import circle may span more than one file: each file can be read after the ones it imports. */
const ACYCLIC = ["src/tools/", "src/runner/"];

/**
 * The import circles of more than one file (type-only imports included) that pass through ACYCLIC, each as
 * its files sorted: the strongly connected components of the import graph (Tarjan's algorithm).
 */
function importCycles(files: ReadonlyMap<string, string>): string[][] {
  const edges = localImports(files);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const target of edges.get(file)!) {
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member);
      component.push(member);
      if (member === file) break;
    }
    if (component.length > 1 && component.some((f) => ACYCLIC.some((dir) => f.startsWith(dir))))
      cycles.push(component.sort());
  };
  for (const file of edges.keys()) if (!index.has(file)) connect(file);
  return cycles;
}

function sourceFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (/\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name))
        files.set(rel, fs.readFileSync(path.join(root, rel), "utf8"));
    }
  };
  walk("src");
  return files;
}

describe("the layering of src/ (docs/ARCHITECTURE.md)", () => {
  it("reads the rooms and the packages from the document", () => {
    expect(ROOMS.map((r) => r.name)).toEqual(
      expect.arrayContaining([
        "shared",
        "policy",
        "sandbox",
        "tools",
        "runner",
        "github",
        "publish",
        "review",
      ]),
    );
    for (const room of ROOMS)
      for (const other of room.mayImport)
        expect(
          ROOMS.map((r) => r.name),
          `${room.name} → ${other}`,
        ).toContain(other);
    expect(PACKAGES.get("dockerode")).toEqual(new Set(["sandbox"]));
  });

  it("holds for every import in src/", () => {
    const files = sourceFiles();
    expect(files.size).toBeGreaterThan(100);
    expect(violations(files)).toEqual([]);
  });

  it.each([
    ["runner", "src/runner/"],
    ["sandbox", "src/sandbox/"],
  ])("draws the %s's folders and the imports between them as the code has them", (name, room) => {
    const documented = new Map(table(name).map(([folder, imports]) => [folder!, list(imports!).sort()]));
    const drawn = folderImports(room, sourceFiles());
    const folders = fs
      .readdirSync(path.join(root, room), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${entry.name}/`);
    expect([...documented.keys()].sort(), `docs/ARCHITECTURE.md's ${name} table lists every folder`).toEqual(
      folders.sort(),
    );
    for (const folder of folders)
      expect(documented.get(folder), `what ${room}${folder} imports, in docs/ARCHITECTURE.md`).toEqual(
        drawn.get(folder) ?? [],
      );
  });

  it("has no import circle of more than one file in src/tools/ or src/runner/", () => {
    expect(importCycles(sourceFiles())).toEqual([]);
  });

  it("finds a circle through several files, type-only imports included", () => {
    const planted = new Map([
      ["src/tools/a.ts", 'import type { B } from "./b.js";\nimport { self } from "./a.js";'],
      ["src/tools/b.ts", 'export { c } from "./c.js";'],
      ["src/tools/c.ts", 'const a = await import("./a.js");\nimport { d } from "../runner/d.js";'],
      ["src/runner/d.ts", 'import { e } from "./e.js";'],
      ["src/runner/e.ts", 'import type { D } from "./d.js";'],
      ["src/policy/f.ts", 'import { g } from "./g.js";'],
      ["src/policy/g.ts", 'import { f } from "./f.js";'],
    ]);
    expect(importCycles(planted)).toEqual(
      expect.arrayContaining([
        ["src/tools/a.ts", "src/tools/b.ts", "src/tools/c.ts"],
        ["src/runner/d.ts", "src/runner/e.ts"],
      ]),
    );
    expect(importCycles(planted)).toHaveLength(2);
  });

  it("catches an import that breaks a rule", () => {
    const planted = new Map([
      [
        "src/policy/x.ts",
        'import { spawn } from "node:child_process";\nimport type { X } from "../sandbox/sandbox.js";\nimport { isIP, connect } from "node:net";\nimport { isIPv6 } from "node:net";\nimport net from "node:net";',
      ],
      ["src/tools/x.ts", 'import Docker from "dockerode";\nexport { y } from "../runner/run.js";'],
      ["src/report/x.ts", 'const m = await import("../action/main.js");'],
      ["src/publish/x.ts", 'import type { RunConfig } from "../runner/config.js";'],
      ["src/review/x.ts", 'import { ConfigError } from "../action/inputs.js";'],
      ["src/sandbox/x.cjs", 'const cp = require("child_process");\nconst a = require("@anthropic-ai/sdk");'],
      ["src/github/x.ts", 'import { prepare } from "../action/prepare.js";'],
      ["src/runner/x.ts", 'import { run } from "../index.js";'],
      [
        "src/runner/y.ts",
        'import { fake } from "../../test/support/fake-sandbox.js";\nimport type { B } from "../../bench/run.js";\nexport { build } from "../../scripts/build.mjs";\nimport { bundleEmbedded } from "../../scripts/embedded.mjs";\nimport pkg from "../../package.json";',
      ],
      ["src/elsewhere.ts", "export {};"],
    ]);
    expect(violations(planted)).toEqual([
      "src/policy/x.ts: node:child_process belongs to sandbox, runner, shared, not policy",
      "src/policy/x.ts: policy is pure, and may not import node:child_process { spawn }",
      "src/policy/x.ts: policy may not import sandbox (../sandbox/sandbox.js)",
      "src/policy/x.ts: policy is pure, and may not import node:net { isIP, connect }",
      "src/policy/x.ts: policy is pure, and may not import node:net",
      "src/tools/x.ts: dockerode belongs to sandbox, not tools",
      "src/tools/x.ts: tools may not import runner (../runner/run.js)",
      "src/report/x.ts: report may not import action (../action/main.js)",
      "src/publish/x.ts: publish may not import runner (../runner/config.js)",
      "src/review/x.ts: review may not import action (../action/inputs.js)",
      "src/sandbox/x.cjs: @anthropic-ai/sdk belongs to runner, not sandbox",
      "src/github/x.ts: github may not import action (../action/prepare.js)",
      "src/runner/x.ts: imports the entry ../index.js",
      "src/runner/y.ts: imports test/support/fake-sandbox.js, outside agent-ci's sources",
      "src/runner/y.ts: imports bench/run.js, outside agent-ci's sources",
      "src/runner/y.ts: imports scripts/build.mjs, outside agent-ci's sources",
      "src/elsewhere.ts: in no room of docs/ARCHITECTURE.md",
    ]);
    // Type-only imports of the model API's shapes are free; a value import is not.
    expect(
      violations(new Map([["src/tools/y.ts", 'import type Anthropic from "@anthropic-ai/sdk";']])),
    ).toEqual([]);
  });
});

/**
 * The files that run the stages, hold what they share and build the record: they call the capabilities through
 * their list only.
 */
const STAGES = (file: string) =>
  ["run-stages.ts", "new-context.ts", "run-services.ts", "first-turn.ts"].some(
    (name) => file === `src/runner/run/${name}`,
  ) ||
  file === "src/runner/run.ts" ||
  file.startsWith("src/runner/record/");
/** What only a capability may name: its folder, and the subject modules capabilities adapt. */
const CAPABILITY_SUBJECTS = [
  "src/runner/capabilities/",
  "src/mcp/",
  "src/runner/hooks/",
  "src/runner/agents/subagents.ts",
  "src/tools/web-",
  "src/runner/instructions/memory/",
  "src/sandbox/setup/",
  "src/sandbox/egress/",
  "src/telemetry/",
];
/** The list and the shape, which the stages do import. */
const CAPABILITY_DOORS = new Set([
  "src/runner/capabilities/index.ts",
  "src/runner/capabilities/capability.ts",
]);
/** Each import by which a stage file names a capability's folder or subject, as `file → target`. */
function stageNamings(files: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of files) {
    if (!STAGES(file)) continue;
    for (const { specifier } of importsOf(file, text)) {
      if (!specifier.startsWith(".")) continue;
      const target = path.posix
        .normalize(path.posix.join(path.posix.dirname(file), specifier))
        .replace(/\.js$/, ".ts");
      if (CAPABILITY_DOORS.has(target)) continue;
      if (CAPABILITY_SUBJECTS.some((subject) => target.startsWith(subject)))
        found.push(`${file} → ${target}`);
    }
  }
  return found;
}

describe("the capabilities (docs/ARCHITECTURE.md, Capabilities)", () => {
  it("are the table's rows: each its folder, its options and the hooks it takes", () => {
    const folder = path.join(root, "src/runner/capabilities");
    const rows = table("capabilities").map(([name, dir, options, hooks]) => ({
      name,
      dir,
      options: list(options!),
      hooks: list(hooks!),
    }));
    // Each capability's part of a run (a run with no MCP servers: the part's hooks are the same in every run).
    const config = parseRunConfig({ workspace: root, script: "script.json" });
    // Then those an entry gives each run (RunIO's `capabilities`), each where its room keeps it.
    const given = [
      { capability: telemetry({ env: {}, warn: () => undefined }), dir: "telemetry/capability.ts" },
    ];
    expect(rows).toEqual(
      [
        ...CAPABILITIES.map((capability) => ({ capability, dir: `capabilities/${capability.name}/` })),
        ...given,
      ].map(({ capability: { name, options, forRun }, dir }) => ({
        name,
        dir,
        options: [...options],
        hooks: Object.keys(forRun(config)),
      })),
    );
    const folders = fs
      .readdirSync(folder, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.sort()).toEqual(CAPABILITIES.map((c) => c.name).sort());
  });

  it("are named by no stage file, but through their list", () => {
    const found = stageNamings(sourceFiles());
    expect(found).toEqual([]);
  });

  it("catches a stage file that names a capability", () => {
    const planted = new Map([
      [
        "src/runner/run.ts",
        'import { mcp } from "./capabilities/mcp/mcp.js";\nimport { CAPABILITIES } from "./capabilities/index.js";',
      ],
      ["src/runner/record/x.ts", 'import type { HookRun } from "../hooks/hooks.js";'],
      ["src/runner/run/run-stages.ts", 'const t = await import("../../telemetry/index.js");'],
      ["src/runner/run/other.ts", 'import { startHooks } from "../hooks/hooks.js";'],
    ]);
    expect(stageNamings(planted)).toEqual([
      "src/runner/run.ts → src/runner/capabilities/mcp/mcp.ts",
      "src/runner/record/x.ts → src/runner/hooks/hooks.ts",
      "src/runner/run/run-stages.ts → src/telemetry/index.ts",
    ]);
  });
});
