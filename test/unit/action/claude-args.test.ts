// claude_args (claude-code-action's input of Claude Code CLI flags): the shell-style tokenizer, the flags
// agent-ci shares with Claude Code mapped to the same inputs (read from the option table), a flag winning over
// an input at its action.yml default as a real runner sets every input, anything else refused by name.
import { describe, expect, it } from "vitest";
import { ClaudeArgsError, readClaudeArgs, tokenize } from "../../../src/action/claude-args.js";
import {
  ActionInputError,
  INPUT_DEFAULTS,
  parseActionInputs,
  type InputName,
} from "../../../src/action/inputs.js";
import { CLAUDE_ARGS_FLAGS, CLAUDE_ARGS_REFUSED, OPTIONS } from "../../../src/options/table.js";
import { toRunConfigInput } from "../../../src/action/run-config.js";
import { parseRunConfig } from "../../../src/runner/config.js";

const inputs = (given: Partial<Record<InputName, string>> = {}) =>
  parseActionInputs((name) => given[name] ?? "");
/** As a runner hands the inputs over: every input set, to the workflow's value or else its action.yml default. */
const onRunner = (given: Partial<Record<InputName, string>>) =>
  parseActionInputs((name) => given[name] ?? INPUT_DEFAULTS[name]);
/** A fake key, assembled at run time. */
const apiKey = ["sk", "ant", "fake", "key"].join("-");
const runConfig = (given: Partial<Record<InputName, string>>) =>
  parseRunConfig(
    toRunConfigInput({
      inputs: inputs({ anthropic_api_key: apiKey, ...given }),
      workspace: "/tmp/ws",
      outDir: "/tmp/out",
      prompt: "do it",
      repo: "acme/widgets",
    }),
  );

describe("tokenize", () => {
  it("splits on spaces, tabs and newlines", () => {
    expect(tokenize("  --a  b\t--c\n\nd  ")).toEqual(["--a", "b", "--c", "d"]);
    expect(tokenize("")).toEqual([]);
  });
  it("keeps single-quoted text literal, backslashes included", () => {
    expect(tokenize(`--x 'a b \\n "c"'`)).toEqual(["--x", 'a b \\n "c"']);
  });
  it('unescapes \\" \\\\ \\$ \\` in double quotes and keeps other backslashes', () => {
    expect(tokenize(`"a \\"b\\" \\\\ \\$x \\\`y\\\` \\d"`)).toEqual(['a "b" \\ $x `y` \\d']);
  });
  it("keeps newlines inside quotes, and joins lines at a backslash-newline", () => {
    expect(tokenize(`--p "line 1\nline 2" 'x\ny'`)).toEqual(["--p", "line 1\nline 2", "x\ny"]);
    expect(tokenize("--a \\\n  b")).toEqual(["--a", "b"]);
    expect(tokenize(`"a\\\nb"`)).toEqual(["ab"]);
  });
  it("escapes the next character outside quotes, and joins adjacent quoted parts", () => {
    expect(tokenize("a\\ b c")).toEqual(["a b", "c"]);
    expect(tokenize(`x'y z'"w"`)).toEqual(["xy zw"]);
    expect(tokenize(`'' ""`)).toEqual(["", ""]);
  });
  it("keeps a tool rule's parentheses one word, as users write Bash(npm test)", () => {
    expect(tokenize("--allowedTools Bash(npm test) Read")).toEqual([
      "--allowedTools",
      "Bash(npm test)",
      "Read",
    ]);
  });
  it("refuses an unclosed quote", () => {
    expect(() => tokenize(`--model "opus`)).toThrow(ClaudeArgsError);
    expect(() => tokenize(`--model 'opus`)).toThrow(/quote is not closed/);
  });
  it("is linear on a long line without a newline", () => {
    const long = "a".repeat(2_000_000);
    expect(tokenize(`--x ${long}`)[1]).toHaveLength(2_000_000);
  });
});

describe("readClaudeArgs", () => {
  const parseClaudeArgs = (value: string) => readClaudeArgs(value).values;
  it("maps each shared flag to its input, in both spellings and with =", () => {
    expect(
      parseClaudeArgs(
        `--allowedTools "Bash(npm test),Read" Edit --allowed-tools=Glob --disallowed-tools WebFetch ` +
          `--disallowedTools Bash(curl:*) --permission-mode acceptEdits --max-turns=7 --model claude-opus-4-1 ` +
          `--append-system-prompt "Be brief." --mcp-config .mcp.json`,
      ),
    ).toEqual({
      allowed_tools: "Bash(npm test)\nRead\nEdit\nGlob",
      disallowed_tools: "WebFetch\nBash(curl:*)",
      permission_mode: "acceptEdits",
      max_turns: "7",
      model: "claude-opus-4-1",
      append_system_prompt: "Be brief.",
      mcp_config: ".mcp.json",
    });
  });
  it("refuses any other flag by name", () => {
    expect(() => parseClaudeArgs("--max-turns 5 --dangerously-skip-permissions")).toThrow(
      /--dangerously-skip-permissions is not supported/,
    );
    expect(() => parseClaudeArgs("--system-prompt=x")).toThrow(/--system-prompt is not supported/);
  });
  it("refuses a flag without value, a stray word, and a single value given twice", () => {
    expect(() => parseClaudeArgs("--model")).toThrow(/--model needs a value/);
    expect(() => parseClaudeArgs("--max-turns 5 6")).toThrow(/unexpected "6"/);
    expect(() => parseClaudeArgs("--model a --model b")).toThrow(/more than once/);
  });
});

describe("claude_args input", () => {
  it("--allowedTools Bash(npm test) --max-turns 5 yields the same RunConfig as allowed_tools + max_turns", () => {
    const viaArgs = runConfig({ claude_args: "--allowedTools Bash(npm test) --max-turns 5" });
    const viaInputs = runConfig({ allowed_tools: "Bash(npm test)", max_turns: "5" });
    expect(viaArgs).toEqual(viaInputs);
    expect(viaArgs.allow).toEqual(["Bash(npm test)"]);
    expect(viaArgs.maxTurns).toBe(5);
  });
  it("sets the mode, model, denies, system prompt and MCP config as their inputs do", () => {
    const viaArgs = inputs({
      claude_args:
        "--permission-mode acceptEdits --model claude-opus-4-1 --disallowedTools WebFetch --append-system-prompt 'Use pnpm.' --mcp-config '{\"mcpServers\":{}}'",
    });
    const viaInputs = inputs({
      permission_mode: "acceptEdits",
      model: "claude-opus-4-1",
      disallowed_tools: "WebFetch",
      append_system_prompt: "Use pnpm.",
      mcp_config: '{"mcpServers":{}}',
    });
    expect({ ...viaArgs, claude_args: undefined }).toEqual(viaInputs);
  });
  it("adds its tool rules to allowed_tools, and refuses a single value set twice", () => {
    expect(inputs({ claude_args: "--allowedTools Read", allowed_tools: "Edit" }).allowed_tools).toEqual([
      "Edit",
      "Read",
    ]);
    expect(() => inputs({ claude_args: "--max-turns 5", max_turns: "6" })).toThrow(
      /claude_args --max-turns "5" and max_turns: "6": both set max_turns/,
    );
  });

  it("refuses an unknown flag by name, before anything runs", () => {
    expect(() => inputs({ claude_args: "--max-turns 5 --verbose" })).toThrow(ActionInputError);
    expect(() => inputs({ claude_args: "--max-turns 5 --verbose" })).toThrow(/--verbose is not supported/);
  });
  it("validates what it sets as the inputs are validated", () => {
    expect(() => inputs({ claude_args: "--max-turns abc" })).toThrow(/max_turns: expected a positive/);
    expect(() => inputs({ claude_args: "--permission-mode yolo" })).toThrow(
      /permission_mode: expected one of/,
    );
  });
});

describe("claude_args on a runner (every input set to its action.yml default unless the workflow gives it)", () => {
  const claudeArgs =
    "--max-turns 8 --model claude-sonnet-4-5 --permission-mode acceptEdits --allowedTools 'Bash(node test.js)'";

  it("wins over the inputs that hold their defaults: the migrated claude-code-action workflow parses", () => {
    const parsed = onRunner({ claude_args: claudeArgs });
    expect(parsed).toMatchObject({
      max_turns: 8,
      model: "claude-sonnet-4-5",
      permission_mode: "acceptEdits",
      allowed_tools: ["Bash(node test.js)"],
    });
    // The same as giving each input on its own.
    expect({ ...parsed, claude_args: undefined }).toEqual(
      onRunner({
        max_turns: "8",
        model: "claude-sonnet-4-5",
        permission_mode: "acceptEdits",
        allowed_tools: "Bash(node test.js)",
      }),
    );
  });

  it("is an error naming the flag and the input when the workflow set the input to another value", () => {
    for (const [input, value, message] of [
      ["max_turns", "6", /claude_args --max-turns "8" and max_turns: "6"/],
      ["model", "claude-opus-4-1", /claude_args --model "claude-sonnet-4-5" and model: "claude-opus-4-1"/],
      ["permission_mode", "plan", /claude_args --permission-mode "acceptEdits" and permission_mode: "plan"/],
    ] as const) {
      expect(() => onRunner({ claude_args: claudeArgs, [input]: value }), input).toThrow(ActionInputError);
      expect(() => onRunner({ claude_args: claudeArgs, [input]: value }), input).toThrow(message);
    }
    // The same value twice says one thing: no conflict.
    expect(onRunner({ claude_args: claudeArgs, max_turns: "8" }).max_turns).toBe(8);
  });

  it("adds its rules to the workflow's allowed_tools rather than choosing between them", () => {
    expect(onRunner({ claude_args: claudeArgs, allowed_tools: "Read" }).allowed_tools).toEqual([
      "Read",
      "Bash(node test.js)",
    ]);
  });

  it("takes --max-budget-usd and --settings as max_budget_usd and settings", () => {
    const parsed = onRunner({ claude_args: `--max-budget-usd 2.5 --settings '{"permissions":{}}'` });
    expect(parsed.max_budget_usd).toBe(2.5);
    expect(parsed.settings).toBe('{"permissions":{}}');
    expect(() => onRunner({ claude_args: "--max-budget-usd 2.5", max_budget_usd: "3" })).toThrow(
      /claude_args --max-budget-usd "2.5" and max_budget_usd: "3"/,
    );
  });

  it("refuses --add-dir and --fallback-model by name with the reason, and any other flag by name", () => {
    expect(() => onRunner({ claude_args: "--add-dir ../other" })).toThrow(
      /--add-dir is not supported by agent-ci: the sandbox holds the workspace only/,
    );
    expect(() => onRunner({ claude_args: "--fallback-model claude-haiku-4-5" })).toThrow(
      /--fallback-model is not supported by agent-ci: agent-ci's loop has no second model/,
    );
    expect(() => onRunner({ claude_args: "--verbose" })).toThrow(
      /--verbose is not supported by agent-ci; it accepts/,
    );
  });

  it("takes exactly the flags the option table gives its options, each naming an Action input", () => {
    const named = Object.entries(OPTIONS).flatMap(([name, o]) =>
      ("claudeCode" in o ? o.claudeCode : []).map((flag) => [flag, name]),
    );
    expect([...CLAUDE_ARGS_FLAGS]).toEqual(named);
    for (const input of CLAUDE_ARGS_FLAGS.values()) expect(INPUT_DEFAULTS).toHaveProperty(input);
    // action.yml's description of claude_args names every flag it takes and every one it refuses with a reason.
    const description = OPTIONS.claude_args.action.description;
    for (const flag of [...CLAUDE_ARGS_FLAGS.keys(), ...Object.keys(CLAUDE_ARGS_REFUSED)])
      expect(description, flag).toContain(flag);
  });
});

describe("append_system_prompt, env, memory_limit, cpus", () => {
  it("reach the RunConfig as the CLI's --system-prompt-append, --env, --memory and --cpus", () => {
    const config = runConfig({
      append_system_prompt: "Answer in French.",
      env: "CI, NODE_OPTIONS",
      memory_limit: "2g",
      cpus: "1.5",
    });
    expect(config.systemPromptAppend).toBe("Answer in French.");
    expect(config.env).toEqual(["CI", "NODE_OPTIONS"]);
    expect(config.memory).toBe(2 * 1024 ** 3);
    expect(config.cpus).toBe(1.5);
  });
  it("appends after the Action's own system prompt text", () => {
    const config = parseRunConfig(
      toRunConfigInput({
        inputs: inputs({ anthropic_api_key: apiKey, append_system_prompt: "Mine." }),
        workspace: "/tmp/ws",
        outDir: "/tmp/out",
        prompt: "do it",
        systemPromptAppend: "The Action's.",
        repo: "acme/widgets",
      }),
    );
    expect(config.systemPromptAppend).toBe("The Action's.\n\nMine.");
  });
  it("refuses a bad variable name and a bad CPU count", () => {
    expect(() => inputs({ env: "OK, 1BAD" })).toThrow(/env: not a variable name: 1BAD/);
    expect(() => inputs({ cpus: "zero" })).toThrow(/cpus: expected a positive number/);
  });
  it("refuses to pass the Action's own credentials and inputs to the sandbox", () => {
    for (const name of [
      "GITHUB_TOKEN",
      "ACTIONS_RUNTIME_TOKEN",
      "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
      "INPUT_ANTHROPIC_API_KEY",
      "ANTHROPIC_API_KEY",
    ])
      expect(() => inputs({ env: `CI, ${name}` }), name).toThrow(
        new RegExp(`env: ${name} hold the Action's credentials`),
      );
  });
});
