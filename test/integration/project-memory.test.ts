// Claude Code 2.1.328's recorded project-memory cases (test/fixtures/reference/claude-code-memory, README there),
// played through the CLI against the fake Messages API: at every recorded turn of every conversation (the
// main one and each subagent's), the memory files that reached the model must be the recorded ones — the same
// `Contents of …` labels with the same text, in the same order, at the same turn, nothing extra, nothing twice —
// and the first request must carry the git snapshot (branch, main branch, status, commits) and the
// environment facts as recorded. The wording around them is agent-ci's own.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  conversationOf,
  fake,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeConversation,
  type FakeTurn,
  type MessagesBody,
} from "../support/fake-anthropic.js";
import { writeFiles } from "../support/workspace.js";
import { runCli } from "../support/cli-process.js";
import { tempOut } from "../support/run-io.js";

const REFERENCE = path.resolve("test/fixtures/reference/claude-code-memory");
const FAKE_KEY = ["sk", "ant", "api03", "memoryFAKEkey0123456789abcdefABCDEF"].join("-");

interface Call {
  name: string;
  input: Record<string, unknown>;
}
interface Block {
  type: string;
  text?: string;
  content?: unknown;
}
interface Message {
  role: string;
  content: string | Block[];
}
interface RecordedRequest {
  conv: string;
  turn: number;
  system?: string;
  messages?: Message[];
  last_user?: Block[];
}
interface Case {
  name: string;
  files: Record<string, string>;
  git?: true | { message: string; dirty: Record<string, string> };
  turns: Call[][];
  agents?: Array<{ name: string; match: string; turns: Call[][]; final: string }>;
  requests: RecordedRequest[];
}

const ws = (text: string) => text.split("$WS").join("/workspace");
const cases = fs
  .readdirSync(REFERENCE)
  .filter((f) => /^memory-.*\.json$/.test(f))
  .sort()
  .map((f) => JSON.parse(fs.readFileSync(path.join(REFERENCE, f), "utf8")) as Case);

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** The case's workspace: its files, committed by Ada on `main` when it is a repository, then its dirty files. */
function caseWorkspace(c: Case): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-memory-ws-"));
  writeFiles(dir, c.files);
  if (!c.git) return dir;
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=Ada", "-c", "user.email=ada@example.com", ...args], {
      cwd: dir,
      stdio: "pipe",
    });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-qm", c.git === true ? "Initial commit" : c.git.message);
  if (c.git !== true) writeFiles(dir, c.git.dirty);
  return dir;
}

function turnOf(calls: Call[], turn: number, prefix: string): FakeTurn {
  return fake.toolUses(
    calls.map((call, i) => ({
      name: call.name,
      input: JSON.parse(ws(JSON.stringify(call.input))) as Record<string, unknown>,
      id: `${prefix}_${turn}_${i}`,
    })),
  );
}

const textsOf = (blocks: string | Block[]): string[] =>
  typeof blocks === "string"
    ? [blocks]
    : blocks.filter((b) => b.type === "text" && typeof b.text === "string").map((b) => b.text!);

/** Every memory file in these text blocks, in order: its `Contents of …` line and its text. */
function memoryOf(texts: string[]): Array<{ label: string; text: string }> {
  const files: Array<{ label: string; text: string }> = [];
  for (const block of texts) {
    if (!block.startsWith("<system-reminder>") || !block.includes("\nContents of ")) continue;
    const inner = block.replace(/^<system-reminder>\n/, "").replace(/\n<\/system-reminder>\n?$/, "");
    const parts = inner.split(/^(Contents of \S+(?: \([^)\n]*\))?:)\n\n/m);
    for (let i = 1; i < parts.length; i += 2)
      files.push({ label: parts[i]!, text: parts[i + 1]!.replace(/\n+$/, "") });
  }
  return files;
}

/** The git snapshot's facts in these blocks (commit hashes left out), or undefined. */
function gitOf(texts: string[]) {
  const block = texts.find((t) => t.includes("# gitStatus"));
  if (!block) return undefined;
  const field = (re: RegExp) => re.exec(block)?.[1];
  return {
    branch: field(/^Current branch: (.*)$/m),
    mainBranch: field(/^Main branch[^:\n]*: (.*)$/m),
    status: field(/\nStatus:\n([\s\S]*?)\n\nRecent commits:/),
    commits: field(/\nRecent commits:\n([\s\S]*?)\n\n/)
      ?.split("\n")
      .map((line) => line.replace(/^[0-9a-f]{7,} /, "")),
  };
}

/** The environment facts Claude Code lists, as `name: value`. */
function environmentOf(text: string): Record<string, string> {
  const facts: Record<string, string> = {};
  for (const name of ["Primary working directory", "Is a git repository", "Platform"]) {
    const value = new RegExp(`^ - ${name}: (.*)$`, "m").exec(text)?.[1];
    if (value !== undefined) facts[name] = value.trim();
  }
  return facts;
}

describe("the recorded project-memory cases, through the CLI", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const workspace = caseWorkspace(c);
    const conversations: FakeConversation[] = (c.agents ?? []).map((agent) => ({
      match: agent.match,
      turns: [
        ...agent.turns.map((turn, t) => turnOf(turn, t, `toolu_mem_${agent.name}`)),
        fake.text(ws(agent.final)),
      ],
    }));
    let mainTurn = 0;
    const api = await startFakeAnthropic({
      apiKey: FAKE_KEY,
      conversations,
      handler: () => {
        const turn = c.turns[mainTurn];
        mainTurn += 1;
        return turn ? turnOf(turn, mainTurn - 1, "toolu_mem") : fake.text("Done.");
      },
    });
    servers.push(api);
    const out = tempOut();
    const run = await runCli(
      ["run", "--workspace", workspace, "--prompt", "go", "--mode", "bypassPermissions", "--out", out],
      { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: api.url },
    );
    expect(run.code, run.stderr.slice(-2000)).toBe(0);

    const requests = api.messagesRequests().map((r) => r.body);
    const ofConversation = (conv: string): MessagesBody[] => {
      if (conv === "main") return requests.filter((b) => conversationOf(b, conversations) === undefined);
      const agent = c.agents!.find((a) => `agent:${a.name}` === conv)!;
      return requests.filter((b) => conversationOf(b, conversations)?.match === agent.match);
    };

    for (const recorded of c.requests) {
      const where = `${recorded.conv} turn ${recorded.turn}`;
      const body = ofConversation(recorded.conv)[recorded.turn];
      expect(body, where).toBeDefined();
      const messages = body!.messages as Message[];
      if (recorded.messages) {
        // The first request: its first user message's memory and git snapshot, and the environment facts.
        const wantFirst = recorded.messages.find((m) => m.role === "user")!;
        const gotFirst = messages[0]!;
        const wantTexts = textsOf(wantFirst.content).map(ws);
        const gotTexts = textsOf(gotFirst.content);
        expect(memoryOf(gotTexts), where).toEqual(memoryOf(wantTexts));
        expect(gitOf(gotTexts), where).toEqual(gitOf(wantTexts));
        // The reminders come before the prompt, which ends the message.
        expect(gotTexts.at(-1), where).toBe(wantTexts.at(-1));
        const wantEnvironment = recorded.messages.find((m) => m.role === "system");
        if (wantEnvironment) {
          const system = textsOf(body!.system as string | Block[]).join("\n");
          const facts = environmentOf(ws(textsOf(wantEnvironment.content).join("\n")));
          expect(Object.keys(facts).length, where).toBe(3);
          expect(environmentOf(system), where).toEqual(facts);
          expect(system, where).toMatch(/^Today's date is \d{4}-\d{2}-\d{2}\.$/m);
        }
        // Every later user message of the request: no memory the recording does not have there.
        for (const message of messages.slice(1).filter((m) => m.role === "user"))
          expect(memoryOf(textsOf(message.content)), where).toEqual([]);
      }
      if (recorded.last_user) {
        // A later turn: the memory beside the tool results, exactly as recorded.
        const last = messages.at(-1)!;
        expect(last.role, where).toBe("user");
        const wantTexts = textsOf(recorded.last_user).map(ws);
        expect(memoryOf(textsOf(last.content)), where).toEqual(memoryOf(wantTexts));
        const results = (last.content as Block[]).filter((b) => b.type === "tool_result");
        expect(results.length, where).toBe(recorded.last_user.filter((b) => b.type === "tool_result").length);
      }
    }

    // Nothing twice across a conversation: each memory file reaches it once.
    for (const conv of ["main", ...(c.agents ?? []).map((a) => `agent:${a.name}`)]) {
      const bodies = ofConversation(conv);
      const final = bodies.at(-1);
      if (!final) continue;
      const labels = (final.messages as Message[])
        .filter((m) => m.role === "user")
        .flatMap((m) => memoryOf(textsOf(m.content)).map((f) => f.label.replace(/ \(.*\):$/, ":")));
      expect(new Set(labels).size, conv).toBe(labels.length);
    }

    // The report's context: the files given, from the workspace, and the snapshot.
    const report = JSON.parse(fs.readFileSync(path.join(out, "report.json"), "utf8")) as {
      context: {
        memory: { project: string; files: Array<{ path: string; revision: string; chars: number }> };
        git?: unknown;
        systemPrompt: { sha256: string; chars: number };
      };
    };
    const paths = new Set(report.context.memory.files.map((f) => f.path));
    const recordedPaths = new Set(
      c.requests.flatMap((r) =>
        [...(r.messages ?? []).flatMap((m) => textsOf(m.content)), ...textsOf(r.last_user ?? [])]
          .map(ws)
          .flatMap((t) => memoryOf([t]).map((f) => /^Contents of (\S+?)(?: \(|:)/.exec(f.label)![1]!)),
      ),
    );
    expect(paths).toEqual(recordedPaths);
    expect(report.context.memory.files.every((f) => f.revision === "workspace")).toBe(true);
    expect(report.context.git !== undefined).toBe(Boolean(c.git));
    expect(report.context.systemPrompt.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});
