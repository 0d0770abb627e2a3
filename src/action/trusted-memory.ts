// The project's memory for an Action run, from the revision it trusts. On pull-request events (project_memory
// `base`, the default there) the memory files are read at the base revision through the API — the PR head's
// CLAUDE.md and rules are the change under review, data the agent may read with its tools, never its
// instructions: the base's tree is listed, its memory files (every CLAUDE.md, CLAUDE.local.md and
// .claude/rules/*.md) and the files they import are written into a folder that mirrors the repository, and the
// runner reads that folder instead of the checkout. Elsewhere the checkout's memory is used (`workspace`).
// The `memory` input's files are the workflow's own: read like the other trusted inputs.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { GitHubApiError, type GitHubApi } from "../github/api.js";
import type { GitHubContext } from "../github/context.js";
import {
  importsOf,
  isMemoryPath,
  MAX_IMPORT_DEPTH,
  MAX_MEMORY_FILES,
} from "../runner/instructions/memory/memory-files.js";
import type { RunConfigInput } from "../runner/config.js";
import { readTrustedFile, repoRelative, TrustedFileError, type TrustedFileOptions } from "./event-content.js";
import { ActionInputError, type ActionInputs } from "./inputs.js";

export type ActionMemory = Pick<
  RunConfigInput,
  "projectMemory" | "projectMemoryDir" | "projectMemoryRevision" | "memoryFile"
>;

export interface ActionMemoryOptions {
  inputs: Pick<ActionInputs, "project_memory" | "memory">;
  ctx: GitHubContext;
  api?: GitHubApi;
  workspace: string;
  /** Set on pull-request events: the trusted (base) revision (`pullRequestBase`). */
  base: TrustedFileOptions["base"];
  tempDir: string;
  log: (line: string) => void;
  warn: (line: string) => void;
}

const TreeListing = z.object({
  truncated: z.boolean().optional(),
  tree: z.array(z.object({ path: z.string(), type: z.string() })),
});

/** The base revision's memory files and their imports, written under `dir`; returns how many. */
async function copyBaseMemory(options: ActionMemoryOptions, ref: string, dir: string): Promise<number> {
  const { api, ctx } = options;
  if (!api)
    throw new ActionInputError(
      "project_memory: base reads the base revision's memory through the API, which needs github_token",
    );
  let listing: z.infer<typeof TreeListing>;
  try {
    listing = TreeListing.parse(
      (
        await api.call(
          "GET /repos/{owner}/{repo}/git/trees/{tree_sha}",
          { owner: ctx.owner, repo: ctx.repo, tree_sha: ref, recursive: "1" },
          { what: "listing the base revision's files", permission: "contents: read" },
        )
      ).data,
    );
  } catch (e) {
    if (!(e instanceof GitHubApiError) && !(e instanceof z.ZodError)) throw e;
    // Never the checkout instead: without the base's memory the model is told none.
    options.warn(
      `project_memory: the base revision's files could not be listed (${e instanceof GitHubApiError ? e.message : "an unexpected answer"}), so the model is told no project memory`,
    );
    return 0;
  }
  if (listing.truncated)
    options.warn(
      `project_memory: the base revision's file list is truncated by the API; memory files past it are not read`,
    );
  const files = new Set(listing.tree.filter((e) => e.type === "blob").map((e) => e.path));
  const queue = [...files]
    .filter(isMemoryPath)
    .sort()
    .map((rel) => ({ rel, depth: 0 }));
  const copied = new Set<string>();
  while (queue.length && copied.size < MAX_MEMORY_FILES) {
    const { rel, depth } = queue.shift()!;
    if (copied.has(rel) || repoRelative(rel) !== rel) continue;
    copied.add(rel);
    let text: string;
    try {
      ({ text } = await readTrustedFile({
        value: rel,
        input: "project_memory",
        workspace: options.workspace,
        base: { ref },
        api,
        ctx,
      }));
    } catch (e) {
      if (!(e instanceof TrustedFileError)) throw e;
      options.warn(`project_memory: ${rel} at base is left out: ${e.message}`);
      continue;
    }
    const target = path.join(dir, rel);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, text, { mode: 0o600 });
    if (depth < MAX_IMPORT_DEPTH)
      for (const imported of importsOf(text, rel))
        if (files.has(imported) && !copied.has(imported)) queue.push({ rel: imported, depth: depth + 1 });
  }
  return copied.size;
}

/** The memory fields of the run's configuration, reading what the base revision holds where it must. */
export async function actionMemory(options: ActionMemoryOptions): Promise<ActionMemory> {
  const { inputs, base } = options;
  const ref = base?.ref;
  const source = inputs.project_memory ?? (base ? "base" : "workspace");
  const memoryFile: string[] = [];
  for (const value of inputs.memory) {
    const rel = repoRelative(value);
    const { text, from } = await readTrustedFile({
      value,
      input: "memory",
      workspace: options.workspace,
      base,
      api: options.api,
      ctx: options.ctx,
    });
    const file = path.join(
      options.tempDir,
      "memory-files",
      String(memoryFile.length),
      path.basename(rel ?? value),
    );
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text, { mode: 0o600 });
    memoryFile.push(file);
    options.log(`memory: read from ${from}`);
  }
  if (source === "none") return { projectMemory: false, memoryFile };
  if (source === "workspace") {
    if (base)
      options.warn(
        "project_memory: workspace on a pull-request event: the model is told the PR head's CLAUDE.md and rules",
      );
    return { projectMemory: true, memoryFile };
  }
  if (!ref)
    throw new ActionInputError(
      "project_memory: base needs a pull request (or workflow_run) event, whose base revision is known; use workspace or none here",
    );
  const dir = path.join(options.tempDir, "project-memory");
  fs.mkdirSync(dir, { recursive: true });
  const count = await copyBaseMemory(options, ref, dir);
  const revision = `base ${ref.slice(0, 12)}`;
  options.log(`project_memory: ${count} file(s) read from ${revision}, not from the checkout`);
  return { projectMemory: true, projectMemoryDir: dir, projectMemoryRevision: revision, memoryFile };
}
