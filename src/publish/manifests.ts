// The files and settings that make a package manager or a build tool run a program, read as the tool reads
// them, for the publish gate: it compares what the tool would read on both sides of the patch (gate-findings.ts),
// never the patch's lines, so an escape (`"post\u0069nstall"`), a key split from its colon, a reformatted file
// or a duplicate key that overrides an earlier one is read for what it means. Each file but yarn 1's .yarnrc is
// parsed by a library: JSON.parse, `ini` (npm's own), `yaml`, smol-toml (TOML 1.0).
//
// Covered: npm, pnpm, yarn and bun (package.json's scripts and the settings that let install scripts run,
// .npmrc, .yarnrc.yml, .yarnrc, pnpm-workspace.yaml, pnpm's and yarn's code files and pnpm's other manifests,
// node-gyp's binding.gyp), Cargo (build.rs, package.build, .cargo/config) and pip (setup.py, pyproject.toml's
// [build-system]). docs/publishing.md says which managers and tools are not.
import { parse as parseIni } from "ini";
import { parse as parseToml } from "smol-toml";
import { parse as parseYaml } from "yaml";
import { LIFECYCLE_SCRIPTS } from "../npm-scripts.js";
import type { FindingKind } from "./options.js";

/** package.json keys hook managers read the git hooks they install from. */
const HOOK_KEYS = ["husky", "simple-git-hooks", "gitHooks", "pre-commit", "pre-push", "lint-staged"];

/**
 * pnpm's settings that let dependencies' install scripts run or name its hooks file, in pnpm-workspace.yaml
 * (pnpm 10 and 11) and in package.json's `pnpm` field (pnpm 10).
 */
const PNPM_SETTINGS = [
  "pnpmfile",
  "globalPnpmfile",
  "scriptShell",
  "nodeOptions",
  "onlyBuiltDependencies",
  "onlyBuiltDependenciesFile",
  "allowBuilds",
  "dangerouslyAllowAllBuilds",
];

/** One setting as its tool reads it: a name, its value (as JSON text) and the kind of finding a change is. */
export interface Setting {
  readonly name: string;
  readonly value: string;
  readonly kind: FindingKind;
}

export interface SettingsFile {
  /** Which files, by their path in the repository. */
  readonly path: RegExp;
  /** How its tool reads it, for the finding of a file it cannot read. */
  readonly readAs: string;
  /** The settings of interest the text gives; undefined when the tool could not read it either. */
  read(text: string): Setting[] | undefined;
  /** The finding for a setting added or changed. */
  describe(setting: Setting): string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const json = (value: unknown): string => JSON.stringify(value) ?? "undefined";

function packageJson(text: string): Setting[] | undefined {
  let manifest: unknown;
  try {
    // npm reads package.json with JSON.parse, a byte-order mark stripped first (json-parse-even-better-errors).
    manifest = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch {
    return undefined;
  }
  if (!isObject(manifest)) return undefined;
  const scripts = isObject(manifest.scripts) ? manifest.scripts : {};
  const pnpm = isObject(manifest.pnpm) ? manifest.pnpm : {};
  const lifecycle: FindingKind = "lifecycle_script";
  return [
    ...LIFECYCLE_SCRIPTS.filter((name) => Object.hasOwn(scripts, name)).map((name) => ({
      name,
      value: json(scripts[name]),
      kind: lifecycle,
    })),
    // `gypfile: false` is what keeps npm from running `node-gyp rebuild` when a binding.gyp is there.
    ...(Object.hasOwn(manifest, "gypfile")
      ? [{ name: "gypfile", value: json(manifest.gypfile), kind: lifecycle }]
      : []),
    // Bun runs the install scripts of the dependencies listed here.
    ...(Object.hasOwn(manifest, "trustedDependencies")
      ? [{ name: "trustedDependencies", value: json(manifest.trustedDependencies), kind: lifecycle }]
      : []),
    ...PNPM_SETTINGS.filter((key) => Object.hasOwn(pnpm, key)).map((key) => ({
      name: `pnpm.${key}`,
      value: json(pnpm[key]),
      kind: lifecycle,
    })),
    ...HOOK_KEYS.filter((key) => Object.hasOwn(manifest, key)).map((key) => ({
      name: key,
      value: json(manifest[key]),
      kind: "git_hook" as const,
    })),
  ];
}

/**
 * npm's settings that name a program it runs (node-gyp, script-shell, git, shell, node-options, onload-script,
 * init-module) and pnpm's that name its hooks file (pnpmfile, global-pnpmfile).
 */
const NPMRC_SETTINGS = new Set([
  "node-gyp",
  "script-shell",
  "git",
  "shell",
  "node-options",
  "onload-script",
  "init-module",
  "pnpmfile",
  "global-pnpmfile",
]);

/**
 * The setting an .npmrc key (as `ini` decodes it) may be, or undefined when it is none of NPMRC_SETTINGS. npm's
 * config loader (@npmcli/config, loadObject) replaces environment variables in each key before it reads it
 * (`${VAR}`, and `${VAR?}`, empty when unset: `${UNSET?}script-shell` is script-shell); the gate cannot know
 * the environment npm will run in, so a key holding `${` may be any setting and is one of interest. Read wider
 * than npm: any case, `_` for `-`.
 */
function npmrcSetting(key: string): string | undefined {
  const name = key.toLowerCase().replace(/_/g, "-");
  return NPMRC_SETTINGS.has(name) || key.includes("${") ? name : undefined;
}

/**
 * .npmrc through `ini`'s parse, as npm's config loader calls it (quotes, `;` and `#` comments, `key[]` arrays,
 * `[section]` tables), up to INI_TOML_MAX_CHARS. npm reads the top level; the gate reads the sections' keys
 * too, each setting's value the list of where it is (top level or a section) and what (a section as `{}`,
 * which no value is), so a setting moved from a section to the top level is a change.
 */
function npmrc(text: string): Setting[] | undefined {
  if (text.length > INI_TOML_MAX_CHARS) return undefined;
  const found = new Map<string, unknown[]>();
  const tables: Array<{ nested: boolean; table: Record<string, unknown> }> = [
    { nested: false, table: parseIni(text) },
  ];
  for (let i = 0; i < tables.length; i++) {
    const next = tables[i] as (typeof tables)[number];
    for (const [key, value] of Object.entries(next.table)) {
      const name = npmrcSetting(key);
      const section = isObject(value);
      if (name !== undefined) {
        const places = found.get(name) ?? [];
        places.push([next.nested ? "section" : "top", section ? {} : value]);
        found.set(name, places);
      }
      if (section) tables.push({ nested: true, table: value });
    }
  }
  return [...found].map(([name, places]) => ({ name, value: json(places), kind: "lifecycle_script" }));
}

/** yarn 1's .yarnrc: a key (quoted with JSON escapes, or bare) and its value, one a line. */
function yarnrc(text: string): Setting[] {
  const values = new Map<string, string>();
  for (const line of text.split(/[\r\n]+/)) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const quoted = /^"((?:[^"\\]|\\.)*)"/.exec(trimmed);
    let key = quoted?.[0] ?? /^\S+/.exec(trimmed)?.[0] ?? "";
    if (quoted)
      try {
        key = String(JSON.parse(key));
      } catch {
        key = quoted[1] ?? key;
      }
    const name = key.replace(/^--/, "").toLowerCase();
    if (name === "yarn-path") values.set(name, trimmed.slice((quoted?.[0] ?? key).length).trim());
  }
  return [...values].map(([name, value]) => ({ name, value: json(value), kind: "lifecycle_script" }));
}

/**
 * YAML settings files are read up to this size: the YAML parser's time grows faster than the text's length
 * (a second for 512 KiB of one line here), and these files are a few lines long; a larger one is a file the gate
 * does not read, so a finding.
 */
export const YAML_MAX_CHARS = 64 * 1024;

/**
 * ini and TOML settings files are read up to this size: `ini` and smol-toml take seconds a megabyte on some
 * texts (8 MiB of `[s1.x]` section headers: 15 s in ini, 10 s in smol-toml here, twice that for 16 MiB), and
 * .npmrc, pyproject.toml and Cargo.toml are a few kilobytes long; a larger one is a finding.
 */
export const INI_TOML_MAX_CHARS = 1024 * 1024;

/** A size limit as the findings say it. */
const sizeText = (chars: number): string =>
  chars >= 1024 * 1024 ? `${chars / (1024 * 1024)} MiB` : `${chars / 1024} KiB`;

/**
 * A YAML file's top-level keys of interest; undefined when it does not parse (duplicate keys included) or is
 * over YAML_MAX_CHARS. Merge keys (`<<: *defaults`) are merged, as js-yaml, which pnpm reads with, does.
 */
function yamlSettings(names: readonly string[]): (text: string) => Setting[] | undefined {
  return (text) => {
    if (text.length > YAML_MAX_CHARS) return undefined;
    let doc: unknown;
    try {
      doc = parseYaml(text, { merge: true });
    } catch {
      return undefined;
    }
    if (doc === null || doc === undefined) return [];
    if (!isObject(doc)) return undefined;
    const settings: Setting[] = [];
    for (const name of names.filter((key) => Object.hasOwn(doc, key))) {
      let value: string;
      try {
        value = json(doc[name]);
      } catch {
        return undefined;
      }
      settings.push({ name, value, kind: "lifecycle_script" });
    }
    return settings;
  };
}

/**
 * A TOML value in a form two values share only when they are equal: a string as itself, anything else as its
 * type and contents (so a date never equals the string of its digits, nor an integer a float), a table's keys
 * sorted, so a table laid out anew or in another order is the same table.
 */
function tomlValue(value: unknown): unknown {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return ["array", value.map(tomlValue)];
  if (value instanceof Date) return ["datetime", value.toISOString()];
  if (isObject(value))
    return [
      "table",
      Object.keys(value)
        .sort()
        .map((key) => [key, tomlValue(value[key])]),
    ];
  return [typeof value, String(value)];
}

/**
 * The values at `paths` of a TOML file parsed with smol-toml (TOML 1.0, as pip's tomllib and Cargo's toml read
 * it: escapes, dotted keys, a table written anywhere in the file): a table's keys one by one, another value as
 * one setting. Undefined when the file does not parse, is over INI_TOML_MAX_CHARS, or a table nests too deep
 * to compare.
 */
function tomlSettings(paths: ReadonlyArray<readonly string[]>): (text: string) => Setting[] | undefined {
  return (text) => {
    if (text.length > INI_TOML_MAX_CHARS) return undefined;
    try {
      const doc = parseToml(text, { integersAsBigInt: true });
      const settings: Setting[] = [];
      for (const path of paths) {
        let value: unknown = doc;
        for (const part of path)
          value =
            isObject(value) && !(value instanceof Date) && Object.hasOwn(value, part)
              ? value[part]
              : undefined;
        if (value === undefined) continue;
        const name = path.join(".");
        const entries =
          isObject(value) && !(value instanceof Date)
            ? Object.entries(value).map(([key, v]) => [`${name}.${key}`, v] as const)
            : [[name, value] as const];
        for (const [key, v] of entries)
          settings.push({ name: key, value: JSON.stringify(tomlValue(v)), kind: "lifecycle_script" });
      }
      return settings;
    } catch {
      return undefined;
    }
  };
}

const setting = (file: string, effect: string) => (s: Setting) =>
  `${file} "${s.name}" added or changed (${effect})`;

export const SETTINGS_FILES: readonly SettingsFile[] = [
  {
    path: /(?:^|\/)package\.json$/,
    readAs: "JSON, as npm, pnpm and yarn read it",
    read: packageJson,
    describe: (s) =>
      s.kind === "git_hook"
        ? `package.json "${s.name}" (git hooks) added or changed`
        : (LIFECYCLE_SCRIPTS as readonly string[]).includes(s.name)
          ? `package.json lifecycle script "${s.name}" added or changed`
          : s.name === "gypfile"
            ? `package.json "gypfile" added or changed (with a binding.gyp, npm runs node-gyp rebuild on install)`
            : `package.json "${s.name}" added or changed (it lets install scripts run, or names code pnpm runs)`,
  },
  {
    path: /(?:^|\/)\.npmrc$/,
    readAs: `ini of at most ${sizeText(INI_TOML_MAX_CHARS)}, as npm and pnpm read it`,
    read: npmrc,
    describe: setting(".npmrc", "npm or pnpm runs the program it names"),
  },
  {
    path: /(?:^|\/)\.yarnrc\.yml$/,
    readAs: `YAML of at most ${sizeText(YAML_MAX_CHARS)}, as yarn reads it`,
    read: yamlSettings(["yarnPath", "plugins", "injectEnvironmentFiles"]),
    describe: setting(".yarnrc.yml", "yarn runs the code it names"),
  },
  {
    path: /(?:^|\/)\.yarnrc$/,
    readAs: "yarn 1's .yarnrc",
    read: yarnrc,
    describe: setting(".yarnrc", "yarn 1 runs the code it names"),
  },
  {
    path: /(?:^|\/)pnpm-workspace\.yaml$/,
    readAs: `YAML of at most ${sizeText(YAML_MAX_CHARS)}, as pnpm reads it`,
    read: yamlSettings(PNPM_SETTINGS),
    describe: setting(
      "pnpm-workspace.yaml",
      "pnpm runs the code it names, or lets dependencies' install scripts run",
    ),
  },
  {
    path: /(?:^|\/)pyproject\.toml$/,
    readAs: `TOML of at most ${sizeText(INI_TOML_MAX_CHARS)}, as pip reads it`,
    read: tomlSettings([["build-system"]]),
    describe: setting("pyproject.toml", "[build-system]: pip installs and runs the build backend it names"),
  },
  {
    path: /(?:^|\/)Cargo\.toml$/,
    readAs: `TOML of at most ${sizeText(INI_TOML_MAX_CHARS)}, as Cargo reads it`,
    read: tomlSettings([
      ["package", "build"],
      ["project", "build"],
    ]),
    describe: setting("Cargo.toml", "cargo build compiles and runs the build script it names"),
  },
];

/** Files a package manager or build tool runs as code, or that tell it what to run: any change is a finding. */
export const CODE_FILES: ReadonlyArray<{ path: RegExp; detail: string }> = [
  {
    path: /(?:^|\/)(?:\.pnpmfile\.[cm]?js|pnpmfile\.js|\.yarn\/(?:releases|plugins)\/.+)$/,
    detail: "a file the package manager runs as code",
  },
  {
    path: /(?:^|\/)package\.(?:yaml|json5)$/,
    detail: "a manifest pnpm reads in place of package.json: its scripts run on install",
  },
  {
    path: /(?:^|\/)(?:binding\.gyp|[^/]*\.gypi)$/,
    detail:
      "node-gyp build configuration: npm runs node-gyp rebuild on install, and its actions run any program",
  },
  { path: /(?:^|\/)build\.rs$/, detail: "a Cargo build script: cargo build runs it" },
  {
    path: /(?:^|\/)\.cargo\/config(?:\.toml)?$/,
    detail: "Cargo configuration: its runner, rustc-wrapper and aliases run programs",
  },
  { path: /(?:^|\/)setup\.py$/, detail: "setup.py: pip runs it to build or install the package" },
];
