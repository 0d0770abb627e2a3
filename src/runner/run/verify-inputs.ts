// What verify runs, and whether a patch changed it (docs/attempts.md). Verify runs the patched tree's own
// command: a patch that rewrites package.json's `"test"` to `exit 0` passes it without fixing anything. So a
// patch "changes what verify runs" when it changes
// - a package.json script the command runs: `npm test` → scripts.test with its pretest and posttest, `npm run X`,
//   `yarn X`, `pnpm X`, `bun run X` → X, an install → the install lifecycle scripts, and the scripts those scripts
//   run in turn; the package manager's own settings (.npmrc, .yarnrc.yml, a committed yarn release, pnpm's
//   hooks file, package.json's packageManager);
// - the configuration of a test runner or build tool the command (or one of those scripts) starts, where that
//   tool reads it: jest.config.*, vitest.config.*, .mocharc.*, pytest.ini, pyproject.toml and every conftest.py,
//   Cargo.toml, pom.xml, a Makefile for make, … (TOOLS below), and the package.json fields some read (`jest`);
// - a file a command line names: `bash scripts/check.sh`, `node test/run.js`, `make -f ci.mk`, `--config=x`.
// Test files a runner finds by itself (test/*.test.js) are not counted: adding a test is what a fix does.
//
// One function answers it, from the command, the paths the patch changes and the two trees' package.json files;
// report.json records the answer beside verify's result, the choice between attempts never prefers an attempt
// that changed what verify runs over one that passed without, and the pull request's description names them.
// The command lines (the verify command, the scripts) are split by a small shell-word reader: quotes,
// backslashes, `;`, `&&`, `||`, `|`, `&`, newlines and comments; `cd DIR` moves the relative paths after it;
// `sh -c`, `env`, `npx`, `python -m` and their like are looked through. It reads what a project writes, not
// every shell construct: a path built at run time (`$(…)`, a variable) is not seen.
import path from "node:path";
import { WORKSPACE_ROOT } from "../../sandbox/sandbox.js";
import { NPM_INSTALL_SCRIPTS } from "../../npm-scripts.js";

/** Reads a file of one tree (workspace-relative); undefined when it is absent or cannot be read. */
export type ReadText = (file: string) => Promise<string | undefined>;

export interface VerifyTrees {
  /** Every path the patch changes, both sides of a rename, relative to the workspace. */
  changed: ReadonlySet<string>;
  /** package.json files before the patch (the only files read). */
  before: ReadText;
  /** And after it. */
  after: ReadText;
}

/** A command line this deep in scripts and `sh -c` is not followed further. */
const MAX_DEPTH = 8;
/** At most this many package.json scripts are followed per tree. */
const MAX_SCRIPTS = 200;

const JS = ["js", "cjs", "mjs", "ts", "cts", "mts"];
const named = (base: string, exts: readonly string[]) => exts.map((ext) => `${base}.${ext}`);

interface ToolInputs {
  /** Beside the command's working directory. */
  files?: readonly string[];
  /** A file of this name at any depth (pytest reads every conftest.py). */
  anywhere?: readonly string[];
  /** Anything under these folders of the working directory. */
  under?: readonly string[];
  /** package.json fields the tool reads its configuration from. */
  fields?: readonly string[];
}

const BABEL: ToolInputs = {
  files: [
    ...named("babel.config", ["js", "cjs", "mjs", "json", "cts"]),
    ".babelrc",
    ".babelrc.json",
    ".babelrc.js",
  ],
  fields: ["babel"],
};
const PYTEST: ToolInputs = {
  files: ["pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"],
  anywhere: ["conftest.py"],
};
/** make's own files, beside the folder it runs in (`-C DIR`). */
const MAKE: ToolInputs = { files: ["Makefile", "makefile", "GNUmakefile"] };
const GRADLE: ToolInputs = {
  files: ["settings.gradle", "settings.gradle.kts", "gradle.properties"],
  anywhere: ["build.gradle", "build.gradle.kts"],
  under: ["gradle/"],
};
const MAVEN: ToolInputs = { anywhere: ["pom.xml"], under: [".mvn/"] };

/** What the tools a verify command commonly starts read, by program name (`python -m NAME` too). */
const TOOLS: Readonly<Record<string, ToolInputs>> = {
  jest: {
    files: [...named("jest.config", [...JS, "json"]), ...(BABEL.files ?? [])],
    fields: ["jest", "babel"],
  },
  vitest: {
    files: [
      ...named("vitest.config", JS),
      ...named("vite.config", JS),
      ...named("vitest.workspace", [...JS, "json"]),
    ],
  },
  mocha: {
    files: named(".mocharc", ["js", "cjs", "mjs", "json", "jsonc", "yml", "yaml"]),
    fields: ["mocha"],
  },
  ava: { files: named("ava.config", ["js", "cjs", "mjs"]), fields: ["ava"] },
  tap: { files: [".taprc"], fields: ["tap"] },
  playwright: { files: named("playwright.config", JS) },
  cypress: { files: named("cypress.config", JS) },
  karma: { files: named("karma.conf", ["js", "cjs", "ts"]) },
  tsc: { files: ["tsconfig.json"] },
  eslint: {
    files: [
      ...named("eslint.config", JS),
      ...named(".eslintrc", ["js", "cjs", "json", "yml", "yaml"]),
      ".eslintrc",
    ],
    fields: ["eslintConfig"],
  },
  pytest: PYTEST,
  "py.test": PYTEST,
  tox: { files: ["tox.ini", "pyproject.toml", "setup.cfg"] },
  nox: { files: ["noxfile.py"] },
  cargo: { files: [".cargo/config.toml", ".cargo/config"], anywhere: ["Cargo.toml", "build.rs"] },
  just: { files: ["justfile", "Justfile", ".justfile"] },
  rake: { files: ["Rakefile", "rakefile"] },
  rspec: { files: [".rspec"] },
  mvn: MAVEN,
  mvnw: MAVEN,
  gradle: GRADLE,
  gradlew: GRADLE,
  phpunit: { files: ["phpunit.xml", "phpunit.xml.dist"] },
  composer: { files: ["composer.json"] },
};

/** Each package manager's own settings, beside the package it runs. */
const MANAGERS: Readonly<Record<string, ToolInputs>> = {
  npm: { files: [".npmrc"] },
  pnpm: {
    files: [".npmrc", ".pnpmfile.cjs", ".pnpmfile.mjs", "pnpm-workspace.yaml"],
    fields: ["packageManager"],
  },
  yarn: {
    files: [".yarnrc", ".yarnrc.yml", ".pnp.cjs", ".pnp.loader.mjs"],
    under: [".yarn/releases/", ".yarn/plugins/"],
    fields: ["packageManager"],
  },
  bun: { files: ["bunfig.toml"] },
};

/** `npm SUB` that runs the script of the same name. */
const NPM_LIFECYCLE = new Set(["test", "start", "stop", "restart"]);
const NPM_ALIASES: Readonly<Record<string, string>> = { t: "test", tst: "test" };
const INSTALLS = new Set(["install", "i", "ci", "add", "isntall", "in"]);
/** Programs that run the rest of their arguments as a command, with their options that take a value. */
const WRAPPERS: Readonly<Record<string, ReadonlySet<string>>> = {
  env: new Set(["-u", "--unset", "-C", "--chdir"]),
  time: new Set(["-f", "-o"]),
  nice: new Set(["-n"]),
  nohup: new Set(),
  exec: new Set(["-a"]),
  command: new Set(),
  timeout: new Set(["-s", "--signal", "-k", "--kill-after"]),
  "xvfb-run": new Set(["-n", "-s", "-e", "-f", "-p"]),
  stdbuf: new Set(["-i", "-o", "-e"]),
};
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh"]);

// ------------------------------------------------------------------------------------ shell words

/**
 * The simple commands of a shell line, as argv lists: quotes and backslashes undone, split at `;`, `&`, `|`,
 * `&&`, `||`, newlines and parentheses, comments dropped, redirection operators dropped (their targets kept as
 * words). One pass over the text.
 */
export function shellCommands(text: string): string[][] {
  const commands: string[][] = [];
  let argv: string[] = [];
  let word = "";
  let inWord = false;
  const endWord = () => {
    if (inWord) argv.push(word);
    word = "";
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (argv.length) commands.push(argv);
    argv = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? "";
    if (c === "'") {
      const close = text.indexOf("'", i + 1);
      const end = close === -1 ? text.length : close;
      word += text.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      inWord = true;
      for (i += 1; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === "\\" && /["\\$`\n]/.test(text[i + 1] ?? "")) i += 1;
        word += text[i] ?? "";
      }
    } else if (c === "\\") {
      if (text[i + 1] !== "\n") word += text[i + 1] ?? "";
      inWord = inWord || text[i + 1] !== "\n";
      i += 1;
    } else if (c === "#" && !inWord) {
      const newline = text.indexOf("\n", i);
      i = newline === -1 ? text.length : newline - 1;
    } else if (";&|()\n".includes(c)) {
      endCommand();
    } else if (c === "<" || c === ">") {
      // `2>` and `>&2`: the descriptor digits before and the `&` after are the operator's, not words.
      if (/^\d+$/.test(word)) inWord = false;
      endWord();
      while (/[<>&]/.test(text[i + 1] ?? "")) i += 1;
      while (/\d|-/.test(text[i + 1] ?? "") && text[i] === "&") i += 1;
    } else if (c === " " || c === "\t" || c === "\r") {
      endWord();
    } else {
      word += c;
      inWord = true;
    }
  }
  endCommand();
  return commands;
}

// ------------------------------------------------------------------------------------ one tree

/** What verify runs in one tree: the changed paths that would count, and the package.json fields it reads. */
interface Reached {
  files: Set<string>;
  anywhere: Set<string>;
  under: Set<string>;
  /** "dir/package.json" → the field paths read from it (`scripts.test`, `jest`). */
  fields: Map<string, Set<string>>;
}

type PackageJson = Record<string, unknown> | undefined;

class Walk {
  readonly reached: Reached = { files: new Set(), anywhere: new Set(), under: new Set(), fields: new Map() };
  private readonly packages = new Map<string, Promise<PackageJson>>();
  private readonly scripts = new Set<string>();

  constructor(private readonly read: ReadText) {}

  /** Every simple command of a shell line run in `cwd` (undefined: outside the workspace). */
  async line(text: string, cwd: string | undefined, depth: number): Promise<void> {
    if (depth > MAX_DEPTH) return;
    for (const argv of shellCommands(text)) {
      if (argv[0] === "cd") {
        cwd = join(cwd, argv[1] ?? "/");
        continue;
      }
      await this.command(argv, cwd, depth);
    }
  }

  private tool(inputs: ToolInputs, cwd: string): void {
    for (const file of inputs.files ?? []) this.reached.files.add(join(cwd, file) ?? file);
    for (const name of inputs.anywhere ?? []) this.reached.anywhere.add(name);
    for (const dir of inputs.under ?? []) this.reached.under.add(join(cwd, dir) ?? dir);
    for (const field of inputs.fields ?? []) this.field(cwd, field);
  }

  private field(cwd: string, field: string): void {
    const pkg = join(cwd, "package.json") ?? "package.json";
    const set = this.reached.fields.get(pkg) ?? new Set<string>();
    set.add(field);
    this.reached.fields.set(pkg, set);
  }

  private packageJson(cwd: string): Promise<PackageJson> {
    const file = join(cwd, "package.json") ?? "package.json";
    let parsed = this.packages.get(file);
    if (!parsed) {
      parsed = this.read(file).then((text) => parsePackage(text));
      this.packages.set(file, parsed);
    }
    return parsed;
  }

  /** Runs package.json scripts `names` of the package in `cwd`, following what each runs. */
  private async runScripts(cwd: string, names: readonly string[], depth: number): Promise<void> {
    const pkg = await this.packageJson(cwd);
    for (const name of names) {
      this.field(cwd, `scripts.${name}`);
      const key = `${cwd}\0${name}`;
      if (this.scripts.has(key) || this.scripts.size >= MAX_SCRIPTS) continue;
      this.scripts.add(key);
      const script = scriptsOf(pkg)[name];
      if (typeof script === "string") await this.line(script, cwd, depth + 1);
    }
  }

  private async command(words: string[], cwd: string | undefined, depth: number): Promise<void> {
    const first = words.findIndex((w) => !ASSIGNMENT.test(w));
    const argv = first === -1 ? [] : words.slice(first);
    if (!argv.length || cwd === undefined || depth > MAX_DEPTH) return;
    // Every word that may be a path: the command line names it.
    for (const word of argv) {
      const value = /^--?[A-Za-z][\w-]*=(.+)$/.exec(word)?.[1] ?? word;
      if (value.startsWith("-") || /[*?[\]$`{}]/.test(value)) continue;
      const file = join(cwd, value);
      if (file) this.reached.files.add(file);
    }
    const program = path.posix.basename(argv[0] ?? "");
    const args = argv.slice(1);
    const valued = WRAPPERS[program];
    if (valued) {
      let i = 0;
      while (i < args.length && ((args[i] ?? "").startsWith("-") || ASSIGNMENT.test(args[i] ?? "")))
        i += valued.has(args[i] ?? "") ? 2 : 1;
      // timeout's duration comes before the command.
      await this.command(args.slice(program === "timeout" ? i + 1 : i), cwd, depth + 1);
      return;
    }
    if (SHELLS.has(program)) {
      const c = args.findIndex((a) => /^-[a-z]*c[a-z]*$/.test(a));
      if (c !== -1 && args[c + 1] !== undefined) await this.line(args[c + 1] ?? "", cwd, depth + 1);
      return;
    }
    if (/^python[\d.]*$/.test(program)) {
      const m = args.indexOf("-m");
      if (m !== -1 && args[m + 1]) await this.command(args.slice(m + 1), cwd, depth + 1);
      return;
    }
    if (program === "make" || program === "gmake") {
      const dir = args.findIndex((a) => a === "-C" || a === "--directory");
      this.tool(MAKE, dir === -1 ? cwd : (join(cwd, args[dir + 1] ?? ".") ?? cwd));
      return;
    }
    const tool = TOOLS[program];
    if (tool) this.tool(tool, cwd);
    await this.packageManager(program, args, cwd, depth);
  }

  /** npm, npx, yarn, pnpm, bun and bunx: the scripts they run, and the program they start. */
  private async packageManager(program: string, args: string[], cwd: string, depth: number): Promise<void> {
    const manager =
      program === "npx" ? "npm" : program === "bunx" ? "bun" : program === "pnpx" ? "pnpm" : program;
    const settings = MANAGERS[manager];
    if (!settings) return;
    // Options before the subcommand; `--prefix`, `-C`, `--dir` and `--cwd` move the package.
    let dir = cwd;
    const rest: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const arg = args[i] ?? "";
      if (rest.length || !arg.startsWith("-")) rest.push(arg);
      else if (["--prefix", "-C", "--dir", "--cwd"].includes(arg)) dir = join(cwd, args[++i] ?? ".") ?? cwd;
      else if (/^--(?:prefix|dir|cwd)=/.test(arg)) dir = join(cwd, arg.slice(arg.indexOf("=") + 1)) ?? cwd;
    }
    this.tool(settings, dir);
    const exec = async (words: string[]) => {
      const bin = words.filter((w) => w !== "--");
      const start = bin.findIndex((w) => !w.startsWith("-"));
      if (start !== -1) await this.command(bin.slice(start), dir, depth + 1);
    };
    if (program === "npx" || program === "bunx" || program === "pnpx") return exec(rest);
    const [sub = "", ...more] = rest;
    const script = (name: string) => this.runScripts(dir, [`pre${name}`, name, `post${name}`], depth);
    if (!sub || INSTALLS.has(sub)) return this.runScripts(dir, NPM_INSTALL_SCRIPTS, depth);
    if (["exec", "x", "dlx"].includes(sub)) return exec(more);
    if (["run", "run-script", "rum", "urn"].includes(sub)) {
      const name = more.find((w) => !w.startsWith("-"));
      return name ? script(name) : undefined;
    }
    if (manager === "npm") {
      const name = NPM_ALIASES[sub] ?? sub;
      return NPM_LIFECYCLE.has(name) ? script(name) : undefined;
    }
    if (manager === "bun" && sub === "test") return;
    // yarn, pnpm and bun run a script by its name, else a program of that name.
    await script(sub);
    await this.command([sub, ...more], dir, depth + 1);
  }
}

/**
 * A path a command gave, relative to the workspace: joined with `cwd` when relative, the part below the
 * workspace's mount when absolute; undefined when it is elsewhere (or `cwd` is).
 */
function join(cwd: string | undefined, given: string): string | undefined {
  if (cwd === undefined) return undefined;
  if (given === WORKSPACE_ROOT || given.startsWith(`${WORKSPACE_ROOT}/`))
    return normalize(given.slice(WORKSPACE_ROOT.length + 1));
  if (given.startsWith("/") || given.startsWith("~")) return undefined;
  return normalize(cwd ? `${cwd}/${given}` : given);
}

function normalize(file: string): string | undefined {
  const clean = path.posix.normalize(file).replace(/\/$/, "");
  if (clean === ".." || clean.startsWith("../")) return undefined;
  return clean === "." ? "" : clean;
}

function parsePackage(text: string | undefined): PackageJson {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function scriptsOf(pkg: PackageJson): Record<string, unknown> {
  const scripts = pkg?.scripts;
  return typeof scripts === "object" && scripts !== null ? (scripts as Record<string, unknown>) : {};
}

/** A field of package.json by its dotted path (`scripts.test`), as JSON text; "" when it is absent. */
function fieldText(pkg: PackageJson, field: string): string {
  const dot = field.indexOf(".");
  const value =
    dot === -1
      ? pkg?.[field]
      : (pkg?.[field.slice(0, dot)] as Record<string, unknown> | undefined)?.[field.slice(dot + 1)];
  return value === undefined ? "" : JSON.stringify(value);
}

async function reach(command: string, read: ReadText): Promise<Reached> {
  const walk = new Walk(read);
  await walk.line(command, "", 0);
  return walk.reached;
}

/**
 * What of what verify runs the patch changed, named for a reader: a path (`vitest.config.ts`, `Makefile`,
 * `scripts/check.sh`) or a package.json field (`package.json scripts.test`); sorted, empty when nothing.
 * Both trees are walked (a patch can make the command reach something new), and a field either reaches is
 * compared between them.
 */
export async function changedVerifyInputs(command: string, trees: VerifyTrees): Promise<string[]> {
  const [before, after] = await Promise.all([reach(command, trees.before), reach(command, trees.after)]);
  const found = new Set<string>();
  const reached = (file: string) =>
    [before, after].some(
      (r) =>
        r.files.has(file) ||
        r.anywhere.has(path.posix.basename(file)) ||
        [...r.under].some((dir) => file.startsWith(dir.endsWith("/") ? dir : `${dir}/`)),
    );
  for (const file of trees.changed) if (reached(file)) found.add(file);
  const packages = new Set([...before.fields.keys(), ...after.fields.keys()]);
  for (const pkg of packages) {
    if (!trees.changed.has(pkg)) continue;
    const [old, now] = await Promise.all([trees.before(pkg), trees.after(pkg)]).then((texts) =>
      texts.map(parsePackage),
    );
    const fields = new Set([...(before.fields.get(pkg) ?? []), ...(after.fields.get(pkg) ?? [])]);
    for (const field of fields)
      if (fieldText(old, field) !== fieldText(now, field)) found.add(`${pkg} ${field}`);
  }
  return [...found].sort();
}
