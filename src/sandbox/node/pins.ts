// The Node.js version a project pins, read from its workspace as the version managers read their own files:
// .nvmrc as nvm does, .node-version as nodenv does, .tool-versions as asdf does, package.json's volta.node as
// Volta does. The first file of that list that names a version wins. What the text then means (a version, a
// range, an alias) is resolve.ts's; here it is only found. The files are the workspace's, which on a pull
// request is its head: they are data, read bounded, and a symbolic link is followed only inside the workspace.
import fs from "node:fs";
import path from "node:path";
import { isInside } from "../../policy/inside-root.js";
import { NODE_SOURCES } from "../../report/schema.js";

export { NODE_SOURCES };
export type NodeSource = (typeof NODE_SOURCES)[number];

/** A pin found in the workspace: the file, and the version text as the file's tool reads it. */
export interface ProjectPin {
  source: Extract<NodeSource, ".nvmrc" | ".node-version" | ".tool-versions" | "volta">;
  /** The file it was read from, relative to the workspace. */
  file: string;
  spec: string;
}

/** A pin file that says something its tool would refuse: the run stops with this, naming the file. */
export class PinFileError extends Error {
  override readonly name = "PinFileError";
}

/** No version file of a real project is longer; a longer one is read this far (package.json: whole, bounded). */
const VERSION_FILE_MAX_BYTES = 4096;
const PACKAGE_JSON_MAX_BYTES = 4 * 2 ** 20;

/**
 * nvm's reading (nvm_process_nvmrc): `#` starts a comment, each line is trimmed and blank lines dropped;
 * `key=value` lines are settings for other tools (a `node=` key is refused), and exactly one bare line must
 * remain: the version. Undefined: the file names none (nvm warns of an empty .nvmrc and uses no version).
 * One difference: nvm reads `>=18` as a setting `>` (and refuses the file); actions/setup-node, which reads
 * .nvmrc for a job, takes it as a range, and so does this: a key is a word.
 */
export function parseNvmrc(text: string): string | undefined {
  const lines = text
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter((line) => line !== "");
  if (!lines.length) return undefined;
  const keys = new Set<string>();
  let bare: string | undefined;
  for (const line of lines) {
    const eq = line.indexOf("=");
    const key = line.slice(0, Math.max(eq, 0)).trim();
    if (eq > 0 && /^[A-Za-z_][\w.-]*$/.test(key)) {
      if (key === "node" || keys.has(key))
        throw new PinFileError(`a ${key === "node" ? "node=" : "repeated"} key is not allowed`);
      keys.add(key);
    } else if (bare !== undefined) {
      throw new PinFileError("more than one version line (nvm reads exactly one)");
    } else {
      bare = line;
    }
  }
  if (bare === undefined) throw new PinFileError("no version line, only key=value settings");
  return bare;
}

/**
 * nodenv's reading (nodenv-version-file-read): the first word of the file's first 1024 bytes, words split by
 * spaces, tabs, newlines and carriage returns. nodenv also takes the version with a `v`, `node-` or `node-v`
 * in front; `..` in it is refused.
 */
export function parseNodeVersionFile(text: string): string | undefined {
  const word = /^[ \t\r\n]*([^ \t\r\n]+)/.exec(text.slice(0, 1024))?.[1];
  if (word === undefined) return undefined;
  if (word.includes("..")) throw new PinFileError("a version with `..` in it (nodenv refuses it)");
  return word.replace(/^node-/, "");
}

/** asdf-nodejs's tool name in .tool-versions (mise reads `node` too). */
const TOOL_VERSIONS_NAMES = ["nodejs", "node"];

/**
 * asdf's reading (toolversions.go): per line, `#` starts a comment and the rest is split on spaces; the first
 * line whose first word names the tool holds its versions, the first of which is used (the others are
 * fallbacks asdf tries when the first is not installed). `ref:` and `path:` versions (built from source, or
 * a folder on the machine) have no meaning here.
 */
export function parseToolVersions(text: string): string | undefined {
  for (const line of text.split("\n")) {
    const tokens = (line.split("#", 1)[0] ?? "")
      .split(" ")
      .map((token) => token.trim())
      .filter(Boolean);
    if (tokens.length < 2 || !TOOL_VERSIONS_NAMES.includes(tokens[0] ?? "")) continue;
    const version = tokens[1] ?? "";
    if (/^(ref|path):/.test(version))
      throw new PinFileError(`${tokens[0]} ${version.split(":", 1)[0]}: versions are asdf's own builds`);
    return version;
  }
  return undefined;
}

/**
 * Volta's reading (project/serial.rs): package.json's `volta.node`, a string. Volta takes an exact version
 * only; `volta.extends` (another package.json's toolchain) is not followed here.
 */
export function parseVoltaNode(text: string): string | undefined {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    // Not JSON: Volta would stop; the project's own npm says so when the agent runs it.
    return undefined;
  }
  if (typeof manifest !== "object" || manifest === null) return undefined;
  const volta = (manifest as { volta?: unknown }).volta;
  if (typeof volta !== "object" || volta === null) return undefined;
  const node = (volta as { node?: unknown }).node;
  if (node === undefined) return undefined;
  if (typeof node !== "string") throw new PinFileError("volta.node is not a string");
  return node.trim();
}

/** The pin files, in the order they are looked for. */
const PIN_FILES: ReadonlyArray<{
  source: ProjectPin["source"];
  file: string;
  parse: (text: string) => string | undefined;
  maxBytes: number;
}> = [
  { source: ".nvmrc", file: ".nvmrc", parse: parseNvmrc, maxBytes: VERSION_FILE_MAX_BYTES },
  {
    source: ".node-version",
    file: ".node-version",
    parse: parseNodeVersionFile,
    maxBytes: VERSION_FILE_MAX_BYTES,
  },
  {
    source: ".tool-versions",
    file: ".tool-versions",
    parse: parseToolVersions,
    maxBytes: VERSION_FILE_MAX_BYTES * 16,
  },
  { source: "volta", file: "package.json", parse: parseVoltaNode, maxBytes: PACKAGE_JSON_MAX_BYTES },
];

/**
 * A workspace file's text, or undefined when there is none: a regular file, or a symbolic link to one inside
 * the workspace (a link out of it is never read on the host). Read up to `maxBytes`.
 */
function readWorkspaceFile(workspace: string, file: string, maxBytes: number): string | undefined {
  const abs = path.join(workspace, file);
  let real: string;
  try {
    real = fs.realpathSync(abs);
  } catch {
    return undefined;
  }
  if (!isInside(real, fs.realpathSync(workspace))) throw new PinFileError("a link out of the workspace");
  let fd: number;
  try {
    fd = fs.openSync(real, "r");
  } catch {
    return undefined;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return undefined;
    const buffer = Buffer.alloc(maxBytes);
    const read = fs.readSync(fd, buffer, 0, maxBytes, 0);
    return buffer.subarray(0, read).toString("utf8");
  } finally {
    fs.closeSync(fd);
  }
}

/** The project's pin: the first of its files that names a version, or undefined when none does. */
export function readProjectPin(workspace: string): ProjectPin | undefined {
  for (const { source, file, parse, maxBytes } of PIN_FILES) {
    let spec: string | undefined;
    try {
      const text = readWorkspaceFile(workspace, file, maxBytes);
      spec = text === undefined ? undefined : parse(text);
    } catch (e) {
      if (!(e instanceof PinFileError)) throw e;
      throw new PinFileError(`the workspace's ${describePinFile(source)}: ${e.message}`);
    }
    if (spec) return { source, file, spec };
  }
  return undefined;
}

/** How a pin's file is named in messages. */
export function describePinFile(source: ProjectPin["source"]): string {
  return source === "volta" ? "package.json volta.node" : source;
}
