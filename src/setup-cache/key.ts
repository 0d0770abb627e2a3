// The setup cache's key: what a snapshot of a finished setup depends on, hashed with SHA-256. Two runs with
// the same key would have run the same setup commands, in the same image, on the same lockfiles and
// manifests, with the same environment, network and platform, so the second may start where the first's
// setup ended. What is not in the key (the source files) is copied in fresh on every run.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ConfigError } from "../errors.js";

/** Bumped whenever what a snapshot holds, or how it is restored, changes: older entries then never match. */
export const SETUP_CACHE_FORMAT = 1;

/**
 * The files setup commands read to decide what they install, per ecosystem, looked for at the workspace's top
 * (`setup_cache_key_files` names others). A name ending in `*` matches by prefix and `.txt` suffix
 * (requirements-dev.txt).
 */
export const KEY_FILES_BY_ECOSYSTEM: Readonly<Record<string, readonly string[]>> = {
  node: [
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "bun.lock",
    "bun.lockb",
    ".nvmrc",
    ".node-version",
  ],
  python: [
    "requirements*",
    "constraints*",
    "pyproject.toml",
    "poetry.lock",
    "uv.lock",
    "Pipfile",
    "Pipfile.lock",
    "setup.py",
    "setup.cfg",
    ".python-version",
  ],
  rust: ["Cargo.toml", "Cargo.lock", "rust-toolchain", "rust-toolchain.toml"],
  go: ["go.mod", "go.sum", "go.work", "go.work.sum"],
  ruby: ["Gemfile", "Gemfile.lock", ".ruby-version"],
  php: ["composer.json", "composer.lock"],
};

/** One key file as the key saw it: its path in the workspace and the SHA-256 of its bytes (null: absent). */
export interface KeyFile {
  path: string;
  sha256: string | null;
}

/** One variable of setup's environment: its name and the SHA-256 of its value (the value is never recorded). */
export interface KeyEnv {
  name: string;
  sha256: string;
}

/** Everything the key is made of, as report.json records it. */
export interface SetupKeyInputs {
  format: number;
  /** The image setup ran in, by its content id (sha256:…), not its name. */
  baseImage: string;
  setup: readonly string[];
  files: readonly KeyFile[];
  env: readonly KeyEnv[];
  /** The setup phase's network: its policy and, through the egress proxy, what it reaches and injects. */
  network: string;
  /** The image's architecture, the runtime and the Node.js setup's commands find. */
  platform: string;
}

const sha256 = (data: string | Buffer) => crypto.createHash("sha256").update(data).digest("hex");

function matchesKeyName(pattern: string, name: string): boolean {
  if (!pattern.endsWith("*")) return pattern === name;
  return name.startsWith(pattern.slice(0, -1)) && name.endsWith(".txt");
}

/** The key files at the workspace's top, found by the names of `KEY_FILES_BY_ECOSYSTEM`, in name order. */
export function detectKeyFiles(workspaceDir: string): string[] {
  const patterns = Object.values(KEY_FILES_BY_ECOSYSTEM).flat();
  let names: string[];
  try {
    names = fs.readdirSync(workspaceDir);
  } catch {
    return [];
  }
  return names.filter((name) => patterns.some((p) => matchesKeyName(p, name))).sort();
}

/**
 * Reads each key file (`given`, else the detected ones) and hashes its bytes. A given path must stay inside the
 * workspace; a symlink is hashed as its target's text (what it points to is not followed out of the tree).
 */
export function readKeyFiles(workspaceDir: string, given?: readonly string[]): KeyFile[] {
  const root = path.resolve(workspaceDir);
  const paths = given?.length ? [...new Set(given)].sort() : detectKeyFiles(root);
  return paths.map((rel) => {
    const abs = path.resolve(root, rel);
    if (abs !== root && !abs.startsWith(`${root}${path.sep}`))
      throw new ConfigError(`setup_cache_key_files: ${rel} is outside the workspace`);
    const st = fs.lstatSync(abs, { throwIfNoEntry: false });
    const shown = path.relative(root, abs).split(path.sep).join("/");
    if (!st) return { path: shown, sha256: null };
    if (st.isSymbolicLink()) return { path: shown, sha256: sha256(`symlink:${fs.readlinkSync(abs)}`) };
    if (!st.isFile()) return { path: shown, sha256: null };
    return { path: shown, sha256: sha256(fs.readFileSync(abs)) };
  });
}

/** Setup's environment as the key holds it: names with their values' hashes, in name order. */
export function keyEnv(env: Readonly<Record<string, string>> | undefined): KeyEnv[] {
  return Object.entries(env ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => ({ name, sha256: sha256(value) }));
}

/** The key: SHA-256 over the inputs' canonical JSON (field order fixed here, lists in the order given). */
export function setupKey(inputs: SetupKeyInputs): string {
  return sha256(
    JSON.stringify([
      inputs.format,
      inputs.baseImage,
      inputs.setup,
      inputs.files.map((f) => [f.path, f.sha256]),
      inputs.env.map((e) => [e.name, e.sha256]),
      inputs.network,
      inputs.platform,
    ]),
  );
}
