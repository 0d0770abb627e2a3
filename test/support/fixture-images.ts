// The user images the toolbelt tests run in (test/fixtures/images/*/Dockerfile), built from Debian
// packages on this engine and tagged by a hash of their Dockerfile and base image, like agent-ci's own.
import type Docker from "dockerode";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  baseImageFor,
  type BuildRecipe,
  DEFAULT_BASE_IMAGE,
  defaultImageTag,
  ensureBuilt,
  folderFiles,
  imageExists,
  recipeTag,
} from "../../src/sandbox/image/image.js";
import { ensureToolbelt } from "../../src/sandbox/image/toolbelt.js";
import { bundleServer } from "./mcp-bundle.mjs";

export const FIXTURE_IMAGES = ["go", "python", "busybox", "tmp-755", "tmp-symlink", "tmp-owned"] as const;
export type FixtureImage = (typeof FIXTURE_IMAGES)[number];

const IMAGES_DIR = fileURLToPath(new URL("../fixtures/images/", import.meta.url));

export function fixtureRecipe(name: FixtureImage): BuildRecipe {
  return {
    what: `the ${name} test image`,
    repository: `agent-ci-test-${name}`,
    files: folderFiles(path.join(IMAGES_DIR, name)),
    baseImage: DEFAULT_BASE_IMAGE,
    label: `test-${name}`,
  };
}

export function fixtureImageTag(name: FixtureImage): string {
  return recipeTag(fixtureRecipe(name));
}

export async function ensureFixtureImages(docker: Docker, progress?: (line: string) => void): Promise<void> {
  for (const name of FIXTURE_IMAGES) await ensureBuilt(docker, fixtureRecipe(name), progress);
  await ensureMcpImage(docker, progress);
}

/**
 * An image of another architecture than this engine's, run under qemu-user-static emulation: Debian's base
 * for it, made by scripts/test.sh (`AGENT_CI_BASE_ARCH=arm64 bash scripts/ensure-engine.sh`), which also
 * registers the emulator. Its toolbelt is built here, under emulation, when the base is there; a run builds
 * it itself otherwise.
 */
export const FOREIGN_ARCHITECTURE = "arm64";
export const foreignImage = (): string => baseImageFor(FOREIGN_ARCHITECTURE);

export async function ensureForeignToolbelt(
  docker: Docker,
  progress?: (line: string) => void,
): Promise<void> {
  if (await imageExists(docker, foreignImage()))
    await ensureToolbelt(docker, progress, { architecture: FOREIGN_ARCHITECTURE });
}

/** The MCP servers bundled into the MCP test image: name → entry (the npm packages' own bins, and the probe). */
const MCP_SERVERS: Record<string, string> = {
  everything: "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
  filesystem: "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
  memory: "node_modules/@modelcontextprotocol/server-memory/dist/index.js",
  // Prints a banner to stdout before it speaks JSON-RPC; reads its package.json beside its bin at start.
  "code-runner": "node_modules/mcp-server-code-runner/dist/cli.js",
  probe: "test/fixtures/mcp/probe-server.mjs",
};
/** Files a bundled server reads at run time, by their path in its package: server → files. */
const MCP_SERVER_FILES: Record<string, string[]> = {
  "code-runner": ["package.json"],
};
/**
 * Servers copied as installed rather than bundled (their code finds its own files at run time): folder
 * in the image → the installed package. Their text files only (icons, fonts and wasm they need for pages,
 * not to start and list tools, are left out).
 */
const MCP_PACKAGES: Record<string, string> = {
  playwright: "node_modules/@playwright/mcp",
};

/** A folder's files, recursively, that are UTF-8 text: relative path → content. */
function textFilesUnder(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    try {
      files[path.relative(dir, full)] = utf8.decode(fs.readFileSync(full));
    } catch {
      // not text: left out
    }
  }
  return files;
}

/** A stdio MCP server in Python, installed in the MCP test image as the module `srv`. */
export const PYTHON_SERVER = "test/fixtures/mcp/srv.py";

/**
 * The MCP test image's recipe: each server bundled with its dependencies into one file (esbuild, from the
 * installed packages: no registry at build time), the everything server's docs beside it (it reads them at
 * run time), and the Python server as a module, on the default sandbox image, which has Node.js and Python.
 */
export async function mcpFixtureRecipe(): Promise<BuildRecipe> {
  const files: Record<string, string> = {
    Dockerfile: fs.readFileSync(path.join(IMAGES_DIR, "../mcp/Dockerfile"), "utf8"),
  };
  for (const [name, entry] of Object.entries(MCP_SERVERS)) {
    files[`mcp/${name}/dist/index.mjs`] = await bundleServer(path.resolve(entry));
    for (const file of MCP_SERVER_FILES[name] ?? [])
      files[`mcp/${name}/${file}`] = fs.readFileSync(path.resolve(entry, "../..", file), "utf8");
  }
  for (const [name, dir] of Object.entries(MCP_PACKAGES))
    for (const [file, content] of Object.entries(textFilesUnder(path.resolve(dir))))
      files[`mcp/${name}/${file}`] = content;
  const docs = path.resolve("node_modules/@modelcontextprotocol/server-everything/dist/docs");
  files["mcp/python/srv.py"] = fs.readFileSync(PYTHON_SERVER, "utf8");
  for (const doc of fs.readdirSync(docs).sort())
    files[`mcp/everything/docs/${doc}`] = fs.readFileSync(path.join(docs, doc), "utf8");
  return {
    what: "the MCP test image",
    repository: "agent-ci-test-mcp",
    files,
    baseImage: defaultImageTag(),
    label: "test-mcp",
  };
}

/** Builds the MCP test image unless it exists; returns its tag. */
export async function ensureMcpImage(docker: Docker, progress?: (line: string) => void): Promise<string> {
  return ensureBuilt(docker, await mcpFixtureRecipe(), progress);
}
