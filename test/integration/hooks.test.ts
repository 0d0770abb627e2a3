// Hooks through `agent-ci run` on the real engine, the real SDK against the fake Messages API: they run in the
// sandbox as the hooks' own user (never on the host, never with the host's secrets), a formatter's change is
// in the patch, the script is the one the run started with, and the agent can neither kill nor read them.
// Claude Code's recorded hook cases (test/fixtures/reference/claude-code-hooks/) are played and compared.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { PolicyHook } from "../../src/policy/index.js";
import { parseReport, type RunReport } from "../../src/report/index.js";
import { MAX_HOOK_OUTPUT_CHARS, runHooks, type PreparedHook } from "../../src/runner/hooks/hooks.js";
import { DockerSandbox, newRunId } from "../../src/sandbox/docker-sandbox.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { HOOK_UID, type HookRunner } from "../../src/sandbox/container/hook-host.js";
import { runCli as runAgentCi } from "../support/cli-process.js";
import {
  fake,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeTurn,
  type MessagesBody,
} from "../support/fake-anthropic.js";
import { applyToCopy, makeWorkspace, type FileSpec } from "../support/workspace.js";

const REFERENCE = path.resolve("test/fixtures/reference/claude-code-hooks");
const FAKE_KEY = ["sk", "ant", "api03", "hooksFAKEkey", crypto.randomBytes(12).toString("hex")].join("-");
/** What a GitHub runner's environment holds: none of it may reach a hook. */
const HOST_SECRETS = {
  GITHUB_TOKEN: ["ghs", crypto.randomBytes(18).toString("hex")].join("_"),
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: ["oidc", crypto.randomBytes(18).toString("hex")].join("."),
  ACTIONS_ID_TOKEN_REQUEST_URL: "https://pipelines.example/idtoken",
};

const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  report: RunReport;
  patch: Buffer;
}

async function runCli(workspace: string, settings: object, api: FakeAnthropic): Promise<Run> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-hooks-"));
  const settingsFile = path.join(dir, "settings.json");
  fs.writeFileSync(settingsFile, JSON.stringify(settings));
  const out = path.join(dir, "out");
  const args = ["run", "--workspace", workspace, "--prompt", "Play the case.", "--mode", "bypassPermissions"];
  args.push("--settings", settingsFile, "--out", out, "--output-format", "stream-json");
  const { code, stdout, stderr } = await runAgentCi(args, {
    ...HOST_SECRETS,
    ANTHROPIC_API_KEY: FAKE_KEY,
    ANTHROPIC_BASE_URL: api.url,
  });
  const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
  const left = await new Docker().listContainers({
    all: true,
    filters: { label: [`${LABEL_RUN}=${report.runId}`] },
  });
  expect(left).toEqual([]);
  return { code, stdout, stderr, report, patch: fs.readFileSync(path.join(out, "patch.diff")) };
}

/** The main loop's tool results from the stream-json events, by tool_use id: error flag and text. */
function toolResults(stdout: string): Map<string, { isError: boolean; text: string }> {
  const results = new Map<string, { isError: boolean; text: string }>();
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    const event = JSON.parse(line) as {
      type: string;
      message?: {
        content?: Array<{ type: string; tool_use_id?: string; is_error?: boolean; content?: unknown }>;
      };
    };
    if (event.type !== "user") continue;
    for (const block of event.message?.content ?? []) {
      if (block.type !== "tool_result") continue;
      const content = block.content;
      const text =
        typeof content === "string"
          ? content
          : (content as Array<{ type: string; text?: string }>).map((b) => b.text ?? "").join("");
      results.set(block.tool_use_id ?? "", { isError: Boolean(block.is_error), text });
    }
  }
  return results;
}

const ws = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replaceAll("$WS", "/workspace"));

describe("hooks run in the sandbox", () => {
  it("B2 a PostToolUse formatter from trusted settings runs in the sandbox as the hooks' user: its change is in the patch, nothing ran on the host, no host secret reached it, the agent's edit of its script changes nothing, and the agent cannot kill or read it", async () => {
    const marker = path.join(os.tmpdir(), `agent-ci-b2-marker-${crypto.randomBytes(6).toString("hex")}`);
    const formatter = [
      "#!/bin/sh",
      "# A formatter as a project writes one: the edited file, from the hook's input, rewritten in place.",
      "input=$(cat)",
      'log="$CLAUDE_PROJECT_DIR/.hooklog"',
      'mkdir -p "$log"',
      'printf "%s" "$input" > "$log/post.json"',
      'env | sort > "$log/env.txt"',
      'pwd > "$log/pwd.txt"',
      'id -u > "$log/uid.txt"',
      `file=$(printf "%s" "$input" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["file_path"])')`,
      '{ echo "// formatted"; cat "$file"; } > "$log/next" && cat "$log/next" > "$file" && rm "$log/next"',
      "",
    ].join("\n");
    const workspace = makeWorkspace(
      {
        "src/app.js": "export const answer = 41;\n",
        ".claude/hooks/fmt.sh": { content: formatter, mode: 0o755 },
      },
      { git: true },
    );
    const settings = {
      hooks: {
        PostToolUse: [
          {
            matcher: "Edit|Write",
            hooks: [
              { type: "command", command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/fmt.sh' },
              { type: "command", command: `cat > /dev/null; echo ran > '${marker}'` },
            ],
          },
        ],
      },
    };
    // The agent replaces the script, then goes after every process of the hooks' user it can find.
    const tamper =
      "printf '#!/bin/sh\\necho tampered > /workspace/tampered\\n' > .claude/hooks/fmt.sh; " +
      `for f in /proc/[0-9]*/status; do if grep -qE '^Uid:\\s+${HOOK_UID}\\s' "$f" 2>/dev/null; then ` +
      'p=$(basename "$(dirname "$f")"); echo "found $p"; kill -9 "$p" 2>&1; ' +
      'cat "/proc/$p/environ" > /dev/null 2>&1 || echo "environ refused $p"; fi; done; echo probed';
    const api = await startFakeAnthropic({
      apiKey: FAKE_KEY,
      turns: [
        fake.toolUse("Read", { file_path: "/workspace/src/app.js" }, { id: "toolu_read" }),
        fake.toolUse("Bash", { command: tamper }, { id: "toolu_tamper" }),
        fake.toolUse(
          "Edit",
          { file_path: "/workspace/src/app.js", old_string: "41", new_string: "42" },
          { id: "toolu_edit" },
        ),
        fake.toolUse(
          "Bash",
          { command: `cat '${marker}'; ls /workspace/tampered 2>&1 || true` },
          { id: "toolu_look" },
        ),
        fake.text("Done."),
      ],
    });
    servers.push(api);
    const run = await runCli(workspace, settings, api);
    expect(run.code, run.stderr.slice(-3000)).toBe(0);

    // Nothing ran on the host: the marker is in the sandbox's /tmp only.
    expect(fs.existsSync(marker)).toBe(false);
    const results = toolResults(run.stdout);
    expect(results.get("toolu_look")?.text).toMatch(/^ran\n/);
    expect(results.get("toolu_look")?.text).toContain("No such file or directory");

    // The agent found the hooks' helper and could neither signal it nor read its environment.
    const probe = results.get("toolu_tamper")?.text ?? "";
    expect(probe).toMatch(/found \d+/);
    expect(probe).toContain("Operation not permitted");
    expect(probe).toMatch(/environ refused \d+/);

    // The formatter's change is in the patch; the original script ran, not the agent's copy.
    const copy = applyToCopy(workspace, run.patch);
    expect(fs.readFileSync(path.join(copy, "src/app.js"), "utf8")).toBe(
      "// formatted\nexport const answer = 42;\n",
    );
    expect(fs.existsSync(path.join(copy, "tampered"))).toBe(false);
    const log = (name: string) => fs.readFileSync(path.join(copy, ".hooklog", name), "utf8");
    expect(log("pwd.txt")).toBe("/workspace\n");
    expect(log("uid.txt")).toBe(`${HOOK_UID}\n`);
    const env = log("env.txt");
    expect(env).toContain("CLAUDE_PROJECT_DIR=/workspace\n");
    for (const secret of [...Object.values(HOST_SECRETS), FAKE_KEY]) expect(env).not.toContain(secret);
    expect(env).not.toMatch(/^(GITHUB_|ACTIONS_|ANTHROPIC_|RUNNER_)/m);
    expect(JSON.parse(log("post.json"))).toMatchObject({
      hook_event_name: "PostToolUse",
      tool_name: "Edit",
      tool_use_id: "toolu_edit",
      cwd: "/workspace",
      permission_mode: "bypassPermissions",
      tool_input: { file_path: "/workspace/src/app.js", old_string: "41", new_string: "42" },
    });

    // The report has the hook's run.
    const edit = run.report.toolCalls.find((c) => c.id === "toolu_edit");
    expect(edit?.hooks).toEqual([
      expect.objectContaining({
        event: "PostToolUse",
        command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/fmt.sh',
        outcome: "ok",
        exitCode: 0,
        scripts: [".claude/hooks/fmt.sh"],
      }),
      expect.objectContaining({ event: "PostToolUse", outcome: "ok", exitCode: 0 }),
    ]);
  });
});

describe("the hooks' user", () => {
  it("B21 a hook runs as its own uid: the agent's Bash cannot kill it or write its scripts, and a formatter that moves a private temporary file over the edited one leaves it the agent's to read and edit, and in the patch", async () => {
    // A formatter as shell scripts often write one: the result into mktemp's file (mode 0600, the hooks'
    // user's), then moved over the original. Formatting twice changes nothing.
    const formatter = [
      "#!/bin/sh",
      "input=$(cat)",
      "id -u > /tmp/agent-ci-b21-hook-uid",
      `file=$(printf "%s" "$input" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["file_path"])')`,
      "tmp=$(mktemp) || exit 1",
      `if head -n 1 "$file" | grep -qx '// formatted'; then cat "$file"; else { echo '// formatted'; cat "$file"; }; fi > "$tmp"`,
      'mv "$tmp" "$file"',
      "",
    ].join("\n");
    const workspace = makeWorkspace(
      {
        "src/app.js": "export const answer = 41;\n",
        ".claude/hooks/fmt.sh": { content: formatter, mode: 0o755 },
      },
      { git: true },
    );
    const settings = {
      hooks: {
        PostToolUse: [
          {
            matcher: "Edit|Write",
            hooks: [{ type: "command", command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/fmt.sh' }],
          },
        ],
      },
    };
    // After the first formatted edit, the agent reads the file, then goes after the hooks' user's processes
    // and the copies of its scripts in the hooks' home.
    const probe =
      'echo "agent uid $(id -u)"; echo "hook uid $(cat /tmp/agent-ci-b21-hook-uid)"; cat src/app.js; ' +
      `for f in /proc/[0-9]*/status; do if grep -qE '^Uid:\\s+${HOOK_UID}\\s' "$f" 2>/dev/null; then ` +
      'p=$(basename "$(dirname "$f")"); echo "found $p"; kill -9 "$p" 2>&1; fi; done; ' +
      'home=$(echo /tmp/agent-ci-hooks-*); echo "home $home"; ' +
      'cp /etc/hostname "$home/scripts/.claude/hooks/fmt.sh" 2>&1; chmod 777 "$home" 2>&1; echo probed';
    const api = await startFakeAnthropic({
      apiKey: FAKE_KEY,
      turns: [
        fake.toolUse("Read", { file_path: "/workspace/src/app.js" }, { id: "toolu_read" }),
        fake.toolUse(
          "Edit",
          { file_path: "/workspace/src/app.js", old_string: "41", new_string: "42" },
          { id: "toolu_edit1" },
        ),
        fake.toolUse("Bash", { command: probe }, { id: "toolu_probe" }),
        fake.toolUse("Read", { file_path: "/workspace/src/app.js" }, { id: "toolu_read2" }),
        fake.toolUse(
          "Edit",
          { file_path: "/workspace/src/app.js", old_string: "42", new_string: "43" },
          { id: "toolu_edit2" },
        ),
        fake.text("Done."),
      ],
    });
    servers.push(api);
    const run = await runCli(workspace, settings, api);
    expect(run.code, run.stderr.slice(-3000)).toBe(0);
    const results = toolResults(run.stdout);

    // Two users; the agent read the formatted file, and could neither signal the hooks' user nor reach its home.
    const seen = results.get("toolu_probe")?.text ?? "";
    expect(seen).toContain(`hook uid ${HOOK_UID}\n`);
    expect(seen).toMatch(/^agent uid (\d+)$/m);
    expect(seen.match(/^agent uid (\d+)$/m)?.[1]).not.toBe(String(HOOK_UID));
    expect(seen).toContain("// formatted\nexport const answer = 42;\n");
    expect(seen).toMatch(/found \d+/);
    expect(seen).toMatch(/kill: \(\d+\) - Operation not permitted/);
    expect(seen).toMatch(/home \/tmp\/agent-ci-hooks-[0-9a-f]+\n/);
    expect(seen).toMatch(
      /^cp: .*'\/tmp\/agent-ci-hooks-[0-9a-f]+\/scripts\/\.claude\/hooks\/fmt\.sh': Permission denied$/m,
    );
    expect(seen).toMatch(
      /chmod: changing permissions of '\/tmp\/agent-ci-hooks-[0-9a-f]+': Operation not permitted/,
    );

    // The agent edited the file the formatter had replaced; the formatter ran again, from its own copy.
    expect(results.get("toolu_read2")).toEqual({
      isError: false,
      text: expect.stringContaining("// formatted"),
    });
    expect(results.get("toolu_edit2")?.isError).toBe(false);
    const edit2 = run.report.toolCalls.find((c) => c.id === "toolu_edit2");
    expect(edit2?.hooks).toEqual([expect.objectContaining({ outcome: "ok", exitCode: 0 })]);
    const copy = applyToCopy(workspace, run.patch);
    expect(fs.readFileSync(path.join(copy, "src/app.js"), "utf8")).toBe(
      "// formatted\nexport const answer = 43;\n",
    );
  });
});

interface Recording {
  name: string;
  files: Record<string, FileSpec>;
  settings: object;
  turns: Array<Array<{ name: string; input: Record<string, unknown> }>>;
  results: Array<{
    turn: number;
    index: number;
    tool: string;
    tool_use_id: string;
    is_error: boolean | null;
    content: string;
  }>;
  messages?: Array<{ turn: number; content: Array<{ type: string; text: string }> }>;
}

const recording = (name: string): Recording =>
  ws(JSON.parse(fs.readFileSync(path.join(REFERENCE, `${name}.json`), "utf8"))) as Recording;

/** Plays a recording's turns with its ids; the run's requests are kept to read what the model was sent. */
async function play(c: Recording): Promise<{ run: Run; requests: MessagesBody[]; workspace: string }> {
  const workspace = makeWorkspace(c.files, { git: true });
  const turns: FakeTurn[] = c.turns.map((calls, t) =>
    fake.toolUses(calls.map((call, i) => ({ ...call, id: `toolu_oracle_${t}_${i}` }))),
  );
  const api = await startFakeAnthropic({ apiKey: FAKE_KEY, turns: [...turns, fake.text("Done.")] });
  servers.push(api);
  const run = await runCli(workspace, c.settings, api);
  expect(run.code, run.stderr.slice(-3000)).toBe(0);
  return { run, requests: api.messagesRequests().map((r) => r.body), workspace };
}

describe("Claude Code's recorded hook cases", () => {
  it.each(["hooks-pre-block-exit2", "hooks-post-block-json", "hooks-pre-fail-exit1"])(
    "%s: the model is told what Claude Code tells it",
    async (name) => {
      const c = recording(name);
      const { run, requests } = await play(c);
      const results = toolResults(run.stdout);
      for (const want of c.results) {
        const got = results.get(want.tool_use_id);
        expect(got?.isError, want.tool_use_id).toBe(Boolean(want.is_error));
        expect(got?.text, want.tool_use_id).toBe(want.content);
      }
      // A PostToolUse block: its text follows the tool results in the next request.
      for (const message of c.messages ?? []) {
        const sent = requests[message.turn]?.messages.at(-1);
        const blocks = Array.isArray(sent?.content) ? sent.content : [];
        const texts = blocks.filter((b) => b.type === "text").map((b) => (b as { text: string }).text);
        for (const block of message.content) expect(texts).toContain(block.text);
        expect(blocks.findIndex((b) => b.type === "text")).toBeGreaterThan(
          blocks.findIndex((b) => b.type === "tool_result"),
        );
      }
    },
  );

  it("hooks-input-env: the hook's stdin, CLAUDE_PROJECT_DIR and working directory are the container's", async () => {
    const c = recording("hooks-input-env");
    const { run, workspace } = await play(c);
    expect(toolResults(run.stdout).get("toolu_oracle_1_0")?.isError).toBe(false);
    const copy = applyToCopy(workspace, run.patch);
    const log = (file: string) => fs.readFileSync(path.join(copy, ".hooklog", file), "utf8");
    const pre = JSON.parse(log("pre.json")) as Record<string, unknown>;
    const post = JSON.parse(log("post.json")) as Record<string, unknown>;
    // Claude Code's fields, but transcript_path: there is no transcript file in the sandbox (docs/hooks.md).
    const fields = [
      "session_id",
      "cwd",
      "permission_mode",
      "hook_event_name",
      "tool_name",
      "tool_input",
      "tool_use_id",
    ];
    expect(Object.keys(pre).sort()).toEqual([...fields].sort());
    expect(Object.keys(post).sort()).toEqual([...fields, "tool_response"].sort());
    expect(pre).toMatchObject({
      session_id: run.report.runId,
      cwd: "/workspace",
      permission_mode: "bypassPermissions",
      hook_event_name: "PreToolUse",
      tool_name: "Edit",
      tool_use_id: "toolu_oracle_1_0",
      tool_input: c.turns[1]?.[0]?.input,
    });
    expect(post).toMatchObject({ hook_event_name: "PostToolUse", tool_use_id: "toolu_oracle_1_0" });
    expect(log("pre-env.txt")).toBe("CLAUDE_PROJECT_DIR=/workspace\n");
    expect(log("pre-pwd.txt")).toBe("/workspace\n");
    expect(log("post-pwd.txt")).toBe("/workspace\n");
  });
});

describe("the hooks' runner in a sandbox", () => {
  const runId = newRunId();
  let sandbox: DockerSandbox;
  let runner: HookRunner;
  beforeAll(async () => {
    const workspace = makeWorkspace({ "a.txt": "a\n" });
    sandbox = await DockerSandbox.start({ runId, workspaceDir: workspace, sharedWorkspace: true });
    runner = await sandbox.startHooks([]);
  });
  afterAll(async () => {
    await sandbox.dispose();
    const left = await new Docker().listContainers({
      all: true,
      filters: { label: [`${LABEL_RUN}=${runId}`] },
    });
    expect(left).toEqual([]);
  });

  const hook = (command: string, extra: Partial<PolicyHook> = {}): PreparedHook => ({
    event: "PreToolUse",
    matcher: "Bash",
    command,
    timeoutSeconds: undefined,
    source: "test",
    run: command,
    scripts: [],
    ...extra,
  });
  const event = {
    event: "PreToolUse" as const,
    toolName: "Bash",
    toolInput: { command: "x" },
    toolUseId: "toolu_1",
    sessionId: "run",
    permissionMode: "default",
  };
  const processes = async () =>
    (await sandbox.exec({ argv: ["ps", "-eo", "args"], timeoutMs: 30_000 })).stdout.toString("utf8");

  it("a timeout is an error result, and the hook's processes are ended", async () => {
    const summary = await runHooks(
      runner,
      [hook("sleep 300.0417 & sleep 300.0417; touch /tmp/after-sleep", { timeoutSeconds: 0.5 })],
      event,
    );
    expect(summary.blocked).toBe(false);
    expect(summary.results[0]).toMatchObject({ outcome: "timeout", reason: "the hook timed out after 0.5s" });
    expect(await processes()).not.toContain("sleep 300.0417");
  });

  it("a hook that reads none of a 2 MB input, or prints 10 MB, ends with its output capped", async () => {
    const big = { ...event, toolInput: { content: "x".repeat(2_000_000) } };
    const ignoring = await runHooks(runner, [hook("exit 0")], big);
    expect(ignoring.results[0]?.outcome).toBe("ok");
    const loud = await runHooks(
      runner,
      [hook("cat > /dev/null; head -c 10000000 /dev/zero | tr '\\0' y")],
      event,
    );
    expect(loud.results[0]?.outcome).toBe("ok");
    expect(loud.results[0]?.stdout.length).toBeLessThanOrEqual(MAX_HOOK_OUTPUT_CHARS);
  });

  it("a hook that ends every process of its user is an error; the next hook runs", async () => {
    const killer = await runHooks(runner, [hook("kill -9 -1")], event);
    expect(killer.results[0]?.outcome).toBe("error");
    const next = await runHooks(runner, [hook("id -u")], event);
    expect(next.results[0]).toMatchObject({ outcome: "ok", stdout: `${HOOK_UID}\n` });
  });

  it("B21 what a hook owns in the workspace is shared with the agent's group, never through a link out of it", async () => {
    const home = path.posix.dirname(runner.scriptsDir);
    // The agent's links into the hooks' home, and a file of the hooks' user behind a link the agent made.
    await sandbox.exec({
      script: `ln -s ${home} /workspace/home-link && ln -s ${runner.scriptsDir} /workspace/scripts-link`,
      timeoutMs: 30_000,
    });
    const made = await runHooks(
      runner,
      [
        hook(
          "cat > /dev/null; umask 077; mkdir -p /workspace/gen/deep && echo x > /workspace/gen/deep/f && " +
            'echo y > "$HOME/private" && ln -s "$HOME/private" /workspace/private-link',
        ),
      ],
      event,
    );
    expect(made.results[0]?.outcome).toBe("ok");
    const modes = await runHooks(
      runner,
      [
        hook(
          "cat > /dev/null; { find /workspace/gen -printf '%p %m\\n'; " +
            `find "$HOME" "$HOME/private" -maxdepth 0 -printf '%p %m\\n'; } | sort`,
        ),
      ],
      event,
    );
    expect(modes.results[0]?.stdout).toBe(
      [
        `${home} 700`,
        `${home}/private 600`,
        "/workspace/gen 770",
        "/workspace/gen/deep 770",
        "/workspace/gen/deep/f 660",
        "",
      ].join("\n"),
    );
    const read = await sandbox.exec({ script: "cat /workspace/gen/deep/f", timeoutMs: 30_000 });
    expect(read.stdout.toString()).toBe("x\n");
  });

  it("a missing script is an error that does not block", async () => {
    const summary = await runHooks(runner, [hook(`'${runner.scriptsDir}/absent.sh'`)], event);
    expect(summary.blocked).toBe(false);
    expect(summary.results[0]).toMatchObject({ outcome: "error", exitCode: 127 });
  });
});
