// Tools called the way a run calls them: through a ToolPipeline over a real DockerSandbox. One harness per
// test file (beforeAll/afterAll); `call` runs one tool call as its own turn, `turn` several as one turn.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Docker from "dockerode";
import { expect } from "vitest";
import {
  ToolPipeline,
  type PipelineOptions,
  type ToolCallRecord,
  type ToolCallRequest,
} from "../../src/runner/loop/pipeline.js";
import { DockerSandbox, newRunId, type DockerSandboxOptions } from "../../src/sandbox/docker-sandbox.js";
import { createRedactor } from "../../src/report/redact.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { ALL_TOOLS } from "../../src/tools/index.js";
import { RunState } from "../../src/tools/state.js";
import type { ToolContent } from "../../src/tools/types.js";
import { makeWorkspace, type FileSpec } from "./workspace.js";
import { tempOut } from "./run-io.js";

export interface ToolHarness {
  runId: string;
  workspace: string;
  outputDir: string;
  sandbox: DockerSandbox;
  state: RunState;
  pipeline: ToolPipeline;
  /** sha256 over the host workspace (names, types, modes, contents, link targets) when the run started. */
  hostHashAtStart: string;
  call(name: string, input: unknown): Promise<ToolCallRecord>;
  turn(calls: Array<{ name: string; input: unknown }>): Promise<ToolCallRecord[]>;
  /** Runs a script in the container directly (setup and inspection, not as the model). */
  sh(script: string): Promise<string>;
  dispose(): Promise<void>;
}

let callSeq = 0;

/** Hashes a host directory tree without following symlinks. */
export function hashTree(root: string): string {
  const hash = crypto.createHash("sha256");
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const abs = path.join(dir, name);
      const rel = path.relative(root, abs);
      const st = fs.lstatSync(abs);
      hash.update(`${rel}\0${st.mode}\0`);
      if (st.isSymbolicLink()) hash.update(`link:${fs.readlinkSync(abs)}\0`);
      else if (st.isDirectory()) walk(abs);
      else if (st.isFile()) hash.update(fs.readFileSync(abs)).update(`\0${st.mtimeMs}\0`);
    }
  };
  walk(root);
  return hash.digest("hex");
}

export async function startHarness(
  files: Record<string, FileSpec>,
  options: {
    git?: boolean;
    sandbox?: Partial<DockerSandboxOptions>;
    pipeline?: Partial<PipelineOptions>;
  } = {},
): Promise<ToolHarness> {
  const workspace = makeWorkspace(files, { git: options.git });
  const outputDir = tempOut();
  const hostHashAtStart = hashTree(workspace);
  const runId = newRunId();
  const sandbox = await DockerSandbox.start({ runId, workspaceDir: workspace, ...options.sandbox });
  const state = new RunState();
  const pipeline = new ToolPipeline({
    allTools: ALL_TOOLS,
    enabledTools: ALL_TOOLS,
    sandbox,
    state,
    outputs: { dir: outputDir, redactor: createRedactor() },
    ...options.pipeline,
  });
  let turnNo = 0;
  const turn = (calls: Array<{ name: string; input: unknown }>) => {
    const requests: ToolCallRequest[] = calls.map((c) => ({
      id: `toolu_${++callSeq}`,
      name: c.name,
      input: c.input,
    }));
    return pipeline.runTurn(turnNo++, requests, new AbortController().signal);
  };
  return {
    runId,
    workspace,
    outputDir,
    sandbox,
    state,
    pipeline,
    hostHashAtStart,
    turn,
    async call(name, input) {
      const [record] = await turn([{ name, input }]);
      return record!;
    },
    async sh(script) {
      const res = await sandbox.exec({ script, timeoutMs: 60_000 });
      if (res.exitCode !== 0)
        throw new Error(`setup script failed (${res.exitCode}): ${script}\n${res.stderr.toString("utf8")}`);
      return res.stdout.toString("utf8");
    },
    async dispose() {
      await sandbox.dispose();
      const left = await new Docker().listContainers({
        all: true,
        filters: { label: [`${LABEL_RUN}=${runId}`] },
      });
      expect(left).toEqual([]);
      // The host checkout is never touched by anything the tools did.
      expect(hashTree(workspace)).toBe(hostHashAtStart);
    },
  };
}

/** The tool_result content as text (content blocks joined). */
export function textOf(content: ToolContent | ToolCallRecord): string {
  const c = typeof content === "object" && !Array.isArray(content) ? content.content : content;
  if (typeof c === "string") return c;
  return c.map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join("\n");
}

/** The result as the API gets it, for compact assertions. */
export function resultOf(record: ToolCallRecord): { isError: boolean; text: string } {
  return { isError: record.isError, text: textOf(record.content) };
}
