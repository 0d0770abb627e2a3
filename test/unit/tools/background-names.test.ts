// The background-task tools under every name Claude Code gave them: one definition each (TaskOutput,
// KillShell), the other names aliases from the tool catalogue, never advertised to the model.
import { describe, expect, it } from "vitest";
import { aliasesOf, toolEntry } from "../../../src/policy/tool-catalog.js";
import { allowAll, contentText, findTool, ToolPipeline } from "../../../src/runner/loop/pipeline.js";
import { ALL_TOOLS, apiToolDefinitions } from "../../../src/tools/index.js";
import { RunState } from "../../../src/tools/state.js";
import { FakeSandbox } from "../../support/fake-sandbox.js";

describe("background-task tool names", () => {
  it("answer BashOutput with TaskOutput and TaskStop and KillBash with KillShell, as the catalogue says", () => {
    expect(findTool(ALL_TOOLS, "BashOutput")?.name).toBe("TaskOutput");
    expect(findTool(ALL_TOOLS, "TaskStop")?.name).toBe("KillShell");
    expect(findTool(ALL_TOOLS, "KillBash")?.name).toBe("KillShell");
    for (const tool of ALL_TOOLS) {
      expect(tool.aliases ?? []).toEqual(aliasesOf(tool.name));
      for (const alias of tool.aliases ?? []) expect(toolEntry(alias)?.aliasOf).toBe(tool.name);
    }
  });

  it("advertise only the seeds' inputs: task_id, block and timeout; shell_id", () => {
    const api = apiToolDefinitions(ALL_TOOLS);
    const names = api.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["TaskOutput", "KillShell"]));
    expect(names).not.toEqual(expect.arrayContaining(["BashOutput"]));
    expect(names).not.toContain("TaskStop");
    const props = (name: string) =>
      Object.keys((api.find((t) => t.name === name)!.input_schema.properties ?? {}) as object);
    expect(props("TaskOutput")).toEqual(["task_id", "block", "timeout"]);
    expect(props("KillShell")).toEqual(["shell_id"]);
  });

  it("answer an id nobody started in the vocabulary of the name called", async () => {
    const pipeline = new ToolPipeline({
      allTools: ALL_TOOLS,
      enabledTools: ALL_TOOLS,
      sandbox: new FakeSandbox({}),
      state: new RunState(),
      gate: allowAll,
    });
    const calls = [
      { id: "t1", name: "TaskOutput", input: { task_id: "x9" } },
      { id: "t2", name: "BashOutput", input: { bash_id: "x9" } },
      { id: "t3", name: "TaskStop", input: { task_id: "x9" } },
      { id: "t4", name: "KillShell", input: { shell_id: "x9" } },
      { id: "t5", name: "TaskOutput", input: { task_id: "x9", bash_id: "x9" } },
    ];
    const records = await pipeline.runTurn(0, calls, new AbortController().signal);
    const texts = records.map((r) => contentText(r.content));
    expect(records.every((r) => r.isError)).toBe(true);
    expect(texts[0]).toContain("No task found with ID: x9");
    expect(texts[1]).toContain("No background shell with ID x9");
    expect(texts[2]).toContain("No task found with ID: x9");
    expect(texts[3]).toContain("No background shell with ID x9");
    expect(records[4]!.stage).toBe("parse");
  });
});
