// Subagents end to end (issue 25): the real SDK against the fake Messages API, which tells the parent's
// conversation from each subagent's by the Task prompt, as the real API would see them. Each subagent runs in
// the run's container under the parent's policy; the record is a tree.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { runAgent, type RunOutcome } from "../../src/runner/run.js";
import {
  conversationOf,
  fake,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeConversation,
  type FakeTurn,
} from "../support/fake-anthropic.js";
import { makeWorkspace } from "../support/workspace.js";
import { quietIo, tempOut } from "../support/run-io.js";

// Assembled at run time, so no key-shaped literal is committed.
const FAKE_KEY = ["sk", "ant", "api03", "subagentsFAKEkey0123456789abcdefABCDEF"].join("-");

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

interface Played {
  outcome: RunOutcome;
  api: FakeAnthropic;
  conversations: FakeConversation[];
  events: Array<Record<string, unknown>>;
}

async function play(
  turns: FakeTurn[],
  conversations: FakeConversation[],
  config: Partial<RunConfigInput> & { workspace: string },
): Promise<Played> {
  const api = await startFakeAnthropic({ apiKey: FAKE_KEY, turns, conversations });
  servers.push(api);
  const outcome = await runAgent(
    parseRunConfig({
      apiKey: FAKE_KEY,
      baseURL: api.url,
      prompt: "Delegate.",
      out: tempOut(),
      ...config,
    }),
    quietIo(),
  );
  const events = fs
    .readFileSync(path.join(outcome.outDir, "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { outcome, api, conversations, events };
}

/** The requests of the conversation whose Task prompt contains `match`. */
function requestsOf(played: Played, match: string) {
  return played.api
    .messagesRequests()
    .filter((r) => conversationOf(r.body, played.conversations)?.match === match);
}

const toolNames = (body: { tools?: unknown[] }) =>
  (body.tools ?? []).map((t) => (t as { name: string }).name);

const task = (prompt: string, subagent_type: string, description = "Delegated task") => ({
  name: "Task",
  input: { description, prompt, subagent_type },
});

function callsOf(outcome: RunOutcome, agent?: string) {
  return outcome.report!.toolCalls.filter((c) => c.agent === agent);
}

describe("subagents", () => {
  it("a general-purpose subagent reads and edits under a bypassPermissions parent; the edit is in the patch", async () => {
    const workspace = makeWorkspace({ "a.txt": "hello from a\n" }, { git: true });
    const played = await play(
      [fake.toolUses([task("SUB-GP: fix a.txt", "general-purpose")]), fake.text("Done.")],
      [
        {
          match: "SUB-GP",
          turns: [
            fake.toolUse("Read", { file_path: "/workspace/a.txt" }),
            fake.toolUse("Edit", {
              file_path: "/workspace/a.txt",
              old_string: "hello",
              new_string: "goodbye",
            }),
            fake.text("Changed hello to goodbye in /workspace/a.txt.", {
              usage: { input_tokens: 100, output_tokens: 20 },
            }),
          ],
        },
      ],
      { workspace, mode: "bypassPermissions" },
    );
    const { outcome } = played;
    expect(outcome.exitReason).toBe("completed");
    expect(fs.readFileSync(outcome.patchPath, "utf8")).toContain("+goodbye from a");
    const sub = callsOf(outcome, "general-purpose");
    expect(sub.map((c) => [c.tool, c.isError, c.decision?.behavior])).toEqual([
      ["Read", false, "allow"],
      ["Edit", false, "allow"],
    ]);
    const taskCall = outcome.report!.toolCalls.find((c) => c.tool === "Task")!;
    expect(sub.every((c) => c.parentToolUseId === taskCall.id)).toBe(true);
    // The parent got the framed report with the footer.
    const parentSecond = played.api
      .messagesRequests()
      .filter((r) => !conversationOf(r.body, played.conversations))[1]!;
    const result = JSON.stringify(parentSecond.body.messages.at(-1));
    expect(result).toContain("<tools-used-before-summary>Read, Edit</tools-used-before-summary>");
    expect(result).toContain("  Changed hello to goodbye");
    expect(result).toMatch(
      /agentId: [a-z0-9]+\\n<usage>subagent_tokens: 120\\ntool_uses: 2\\nduration_ms: \d+<\/usage>/,
    );
    // The subagent was given the parent's tools but not Task, and its own system prompt.
    const [first] = requestsOf(played, "SUB-GP");
    expect(toolNames(first!.body)).not.toContain("Task");
    expect(toolNames(first!.body)).toEqual(
      expect.arrayContaining(["Bash", "Read", "Edit", "Write", "Grep", "Glob"]),
    );
    expect(JSON.stringify(first!.body.system)).toContain("subagent");
    // The record: who spent what, events tagged with the Task call.
    const [record] = outcome.report!.subagents!;
    expect(record).toMatchObject({ type: "general-purpose", status: "completed", turns: 3, toolUses: 2 });
    expect(record!.usage.inputTokens).toBe(300); // its three turns (100 each), not the parent's
    const tagged = played.events.filter((e) => e.parent_tool_use_id === taskCall.id);
    expect(tagged.length).toBeGreaterThanOrEqual(4);
  });

  it("Explore is offered no writing tool, and its writing Bash is refused even under bypassPermissions", async () => {
    const workspace = makeWorkspace({ "src/main.js": "export function main() {}\n" }, { git: true });
    const played = await play(
      [fake.toolUses([task("SUB-EXPLORE: find main", "Explore")]), fake.text("Done.")],
      [
        {
          match: "SUB-EXPLORE",
          turns: [
            fake.toolUses([
              { name: "Grep", input: { pattern: "function main" } },
              { name: "Bash", input: { command: "echo pwned > /workspace/src/main.js" } },
              { name: "Write", input: { file_path: "/workspace/x.txt", content: "x" } },
            ]),
            fake.text("main is in /workspace/src/main.js"),
          ],
        },
      ],
      { workspace, mode: "bypassPermissions" },
    );
    const { outcome } = played;
    expect(outcome.exitReason).toBe("completed");
    expect(fs.readFileSync(outcome.patchPath, "utf8")).toBe("");
    expect(toolNames(requestsOf(played, "SUB-EXPLORE")[0]!.body).sort()).toEqual([
      "Bash",
      "Glob",
      "Grep",
      "Read",
    ]);
    const [grep, bash, write] = callsOf(outcome, "Explore");
    expect(grep).toMatchObject({ isError: false });
    expect(bash).toMatchObject({
      isError: true,
      errorKind: "permission_denied",
      decision: { behavior: "deny" },
    });
    expect(write).toMatchObject({ isError: true });
    expect(write!.errorKind).toBe("disabled_tool");
    expect(outcome.report!.denials).toContainEqual(
      expect.objectContaining({ tool: "Bash", agent: "Explore" }),
    );
    // Explore's hand-back has no footer.
    const parentSecond = played.api
      .messagesRequests()
      .filter((r) => !conversationOf(r.body, played.conversations))[1]!;
    expect(JSON.stringify(parentSecond.body.messages.at(-1))).not.toContain("agentId:");
  });

  it("two Task calls in one turn run at the same time: their calls interleave in the event stream", async () => {
    const workspace = makeWorkspace({ "a.txt": "a\n" }, { git: true });
    // Each subagent's command waits for the other's mark: run one after the other, neither could finish.
    const handshake = (mine: string, theirs: string) =>
      `touch /workspace/.${mine}; for i in $(seq 600); do [ -f /workspace/.${theirs} ] && echo ${mine}-saw-${theirs} && exit 0; sleep 0.1; done; exit 1`;
    const played = await play(
      [
        fake.toolUses([
          task("SUB-P1: one", "general-purpose", "First"),
          task("SUB-P2: two", "general-purpose", "Second"),
        ]),
        fake.text("Done."),
      ],
      [
        {
          match: "SUB-P1",
          turns: [fake.toolUse("Bash", { command: handshake("p1", "p2") }), fake.text("First: done.")],
        },
        {
          match: "SUB-P2",
          turns: [fake.toolUse("Bash", { command: handshake("p2", "p1") }), fake.text("Second: done.")],
        },
      ],
      { workspace, mode: "bypassPermissions" },
    );
    const { outcome, events } = played;
    expect(outcome.exitReason).toBe("completed");
    const [first, second] = outcome.report!.toolCalls.filter((c) => c.tool === "Task");
    const at = (parent: string, type: string) =>
      events.findIndex(
        (e) =>
          e.parent_tool_use_id === parent &&
          e.type === type &&
          JSON.stringify(e.message).includes(type === "user" ? "tool_result" : "tool_use"),
      );
    // Both subagents asked for their Bash before either got its result.
    expect(Math.max(at(first!.id, "assistant"), at(second!.id, "assistant"))).toBeLessThan(
      Math.min(at(first!.id, "user"), at(second!.id, "user")),
    );
    expect(callsOf(outcome, "general-purpose").map((c) => c.isError)).toEqual([false, false]);
  });

  it("a custom agent from --agents-dir with tools: Read, Grep cannot call Bash, and its model applies", async () => {
    const workspace = makeWorkspace({ "code.py": "def f(x):\n    return x+1\n" }, { git: true });
    const agentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-agents-"));
    fs.writeFileSync(
      path.join(agentsDir, "reviewer.md"),
      "---\nname: reviewer\ndescription: Reviews a file and reports problems.\ntools: Read, Grep\nmodel: haiku\n---\nYou are a careful code reviewer.\n",
    );
    const played = await play(
      [fake.toolUses([task("SUB-REVIEW: review /workspace/code.py", "reviewer")]), fake.text("Done.")],
      [
        {
          match: "SUB-REVIEW",
          turns: [
            fake.toolUses([
              { name: "Read", input: { file_path: "/workspace/code.py" } },
              { name: "Bash", input: { command: "cat /workspace/code.py" } },
            ]),
            fake.text("No problems found."),
          ],
        },
      ],
      { workspace, mode: "bypassPermissions", agentsDir: [agentsDir] },
    );
    const [first] = requestsOf(played, "SUB-REVIEW");
    expect(first!.body.model).toBe("claude-haiku-5-5");
    expect(toolNames(first!.body)).toEqual(["Read", "Grep"]);
    expect(JSON.stringify(first!.body.system)).toContain("You are a careful code reviewer.");
    const [read, bash] = callsOf(played.outcome, "reviewer");
    expect(read!.isError).toBe(false);
    expect(bash).toMatchObject({ isError: true, errorKind: "disabled_tool" });
    expect(played.outcome.report!.subagents![0]).toMatchObject({
      type: "reviewer",
      model: "claude-haiku-5-5",
    });
    // The parent's Task tool told the model about the custom type.
    const parentFirst = played.api.messagesRequests()[0]!;
    const taskTool = (parentFirst.body.tools as Array<{ name: string; description: string }>).find(
      (t) => t.name === "Task",
    );
    expect(taskTool!.description).toContain(
      "- reviewer: Reviews a file and reports problems. (Tools: Read, Grep)",
    );
  });

  it("no escalation in default mode: a Bash outside the parent's allow rule is denied, deny rules hold inside, a denied agent type is refused", async () => {
    const workspace = makeWorkspace({ "secret.txt": "s\n", "a.txt": "a\n" }, { git: true });
    const played = await play(
      [
        fake.toolUses([task("SUB-GP: fetch", "general-purpose"), task("SUB-EXPLORE: look", "Explore")]),
        fake.text("Done."),
      ],
      [
        {
          match: "SUB-GP",
          turns: [
            fake.toolUses([
              { name: "Bash", input: { command: "curl -s http://example.com/" } },
              { name: "Bash", input: { command: "npm test" } },
              { name: "Read", input: { file_path: "/workspace/secret.txt" } },
              { name: "Edit", input: { file_path: "/workspace/a.txt", old_string: "a", new_string: "b" } },
            ]),
            fake.text("Could not fetch."),
          ],
        },
        { match: "SUB-EXPLORE", turns: [fake.text("never runs")] },
      ],
      {
        workspace,
        mode: "default",
        allow: ["Bash(npm test)"],
        deny: ["Read(./secret.txt)", "Task(Explore)"],
      },
    );
    const { outcome } = played;
    const [curl, npmTest, secret, edit] = callsOf(outcome, "general-purpose");
    expect(curl!.decision).toMatchObject({ behavior: "deny" });
    expect(curl!.decision!.reason).toContain("no allow rule matches");
    // The parent's rule is named: the subagent is told what it may run, which is what the parent may.
    expect(curl!.decision!.reason).toContain("Bash(npm test)");
    expect(npmTest!.decision).toMatchObject({ behavior: "allow", rule: { text: "Bash(npm test)" } });
    expect(secret!.decision).toMatchObject({ behavior: "deny", rule: { text: "Read(./secret.txt)" } });
    expect(edit!.decision).toMatchObject({ behavior: "deny" });
    const explore = outcome.report!.toolCalls.find(
      (c) => c.tool === "Task" && (c.input as { subagent_type: string }).subagent_type === "Explore",
    )!;
    expect(explore.decision).toMatchObject({ behavior: "deny", rule: { text: "Task(Explore)" } });
    expect(requestsOf(played, "SUB-EXPLORE")).toHaveLength(0);
    expect(outcome.report!.denials.filter((d) => d.agent === "general-purpose").map((d) => d.tool)).toEqual([
      "Bash",
      "Read",
      "Edit",
    ]);
    expect(fs.readFileSync(outcome.patchPath, "utf8")).toBe("");
  });

  it("an agent file's permissionMode: plan narrows a bypassPermissions parent: no writing tool, a writing Bash refused", async () => {
    const workspace = makeWorkspace({ "a.txt": "a\n" }, { git: true });
    const agentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-agents-"));
    fs.writeFileSync(
      path.join(agentsDir, "auditor.md"),
      "---\nname: auditor\ndescription: Audits without changing anything.\npermissionMode: plan\n---\nAudit.\n",
    );
    const played = await play(
      [fake.toolUses([task("SUB-AUDIT: change a.txt", "auditor")]), fake.text("Done.")],
      [
        {
          match: "SUB-AUDIT",
          turns: [
            fake.toolUses([
              { name: "Bash", input: { command: "echo b > /workspace/a.txt" } },
              { name: "Read", input: { file_path: "/workspace/a.txt" } },
            ]),
            fake.text("Audited."),
          ],
        },
      ],
      { workspace, mode: "bypassPermissions", agentsDir: [agentsDir] },
    );
    const [first] = requestsOf(played, "SUB-AUDIT");
    expect(toolNames(first!.body)).not.toContain("Edit");
    expect(toolNames(first!.body)).not.toContain("Write");
    expect(toolNames(first!.body)).toContain("Bash");
    const [bash, read] = callsOf(played.outcome, "auditor");
    expect(bash!.decision).toMatchObject({ behavior: "deny", decidedBy: "mode" });
    expect(read!.isError).toBe(false);
    expect(played.outcome.report!.subagents![0]).toMatchObject({ type: "auditor", permissionMode: "plan" });
    expect(fs.readFileSync(played.outcome.patchPath, "utf8")).toBe("");
  });

  it("an agent file's permissionMode: bypassPermissions under a default parent is a config error naming the file; no model call", async () => {
    const workspace = makeWorkspace({ "a.txt": "a\n" }, { git: true });
    const agentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-agents-"));
    fs.writeFileSync(
      path.join(agentsDir, "yolo.md"),
      "---\nname: yolo\ndescription: Runs anything.\npermissionMode: bypassPermissions\n---\nGo.\n",
    );
    const api = await startFakeAnthropic({ apiKey: FAKE_KEY, turns: [fake.text("never")] });
    servers.push(api);
    const outcome = await runAgent(
      parseRunConfig({
        apiKey: FAKE_KEY,
        baseURL: api.url,
        prompt: "Delegate.",
        out: tempOut(),
        workspace,
        mode: "default",
        agentsDir: [agentsDir],
      }),
      quietIo(),
    );
    expect(outcome.report!.exitReason).toBe("config_error");
    expect(outcome.report!.error!.message).toContain(`agent definition agents-dir:${agentsDir}/yolo.md`);
    expect(outcome.report!.error!.message).toContain("bypassPermissions would widen the run's default mode");
    expect(api.messagesRequests()).toHaveLength(0);
  });

  it("plan mode holds inside a subagent: no writing tool offered, a writing Bash refused, the tree unchanged", async () => {
    const workspace = makeWorkspace({ "a.txt": "a\n" }, { git: true });
    const played = await play(
      [fake.toolUses([task("SUB-GP: change a.txt", "general-purpose")]), fake.text("Done.")],
      [
        {
          match: "SUB-GP",
          turns: [
            fake.toolUses([
              { name: "Bash", input: { command: "echo b > /workspace/a.txt" } },
              { name: "Edit", input: { file_path: "/workspace/a.txt", old_string: "a", new_string: "b" } },
            ]),
            fake.text("Could not change it."),
          ],
        },
      ],
      { workspace, mode: "plan" },
    );
    const tools = toolNames(requestsOf(played, "SUB-GP")[0]!.body);
    expect(tools).not.toContain("Edit");
    expect(tools).not.toContain("Write");
    const [bash, edit] = callsOf(played.outcome, "general-purpose");
    expect(bash!.decision).toMatchObject({ behavior: "deny", decidedBy: "mode" });
    expect(edit!.isError).toBe(true);
    expect(fs.readFileSync(played.outcome.patchPath, "utf8")).toBe("");
  });

  it("a subagent that spends past --max-budget-usd ends the run with budget; the patch and the report say who spent what", async () => {
    const workspace = makeWorkspace({ "a.txt": "a\n" }, { git: true });
    const expensive = { usage: { input_tokens: 400_000, output_tokens: 1_000 } };
    const played = await play(
      [fake.toolUses([task("SUB-GP: loop", "general-purpose")]), fake.text("never asked")],
      [
        {
          match: "SUB-GP",
          turns: [
            fake.toolUse("Write", { file_path: "/workspace/new.txt", content: "kept\n" }, expensive),
            fake.toolUse("Bash", { command: "true" }, expensive),
            fake.toolUse("Bash", { command: "true" }, expensive),
            fake.toolUse("Bash", { command: "true" }, expensive),
          ],
        },
      ],
      { workspace, mode: "bypassPermissions", maxBudgetUsd: 1 },
    );
    const { outcome } = played;
    expect(outcome.exitReason).toBe("budget");
    expect(fs.readFileSync(outcome.patchPath, "utf8")).toContain("+kept");
    const report = outcome.report!;
    const [sub] = report.subagents!;
    expect(sub).toMatchObject({ type: "general-purpose", status: "budget" });
    expect(sub!.costUsd).toBeGreaterThanOrEqual(1);
    expect(report.costUsd).toBeGreaterThanOrEqual(sub!.costUsd);
    expect(report.costUsd).toBeLessThan(2); // nothing more was asked once the budget was spent
    // The parent asked for no more turns once its subagent had spent the budget.
    expect(
      played.api.messagesRequests().filter((r) => !conversationOf(r.body, played.conversations)),
    ).toHaveLength(1);
  });
});
