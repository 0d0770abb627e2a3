// Inputs → ActionInputs → RunConfig: defaults apply without a runner, every bad value is reported by input
// name in one error, lists split like rules, and the token lands in `secrets` only (never in a field that
// reaches the container).
// Bypasses the harness: input parsing called as a function (the harness sets every default, run-e2e.test.ts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ActionInputError,
  INPUT_DEFAULTS,
  parseActionInputs,
  type InputName,
} from "../../src/action/inputs.js";
import { splitList } from "../../src/github/input-conventions.js";
import { toRunConfigInput } from "../../src/action/run-config.js";
import { parseRunConfig } from "../../src/runner/config.js";
import { DEFAULT_MODEL } from "../../src/runner/model/pricing.js";

/** This host's trusted CAs (Debian's bundle): a PEM file to pass as ca_cert. */
const HOST_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

const inputs = (given: Partial<Record<InputName, string>> = {}) =>
  parseActionInputs((name) => given[name] ?? "");

describe("parseActionInputs", () => {
  it("applies action.yml's defaults when nothing is given", () => {
    const parsed = inputs();
    expect(parsed).toMatchObject({
      model: DEFAULT_MODEL,
      permission_mode: "default",
      network: "none",
      max_turns: 50,
      timeout_minutes: 30,
      trigger_phrase: "@agent-ci",
      comment: true,
      upload_artifact: true,
      artifact_name: "agent-ci",
      allow_fork_heads: false,
      workspace: ".",
      fail_on: [
        "config_error",
        "engine_error",
        "api_error",
        "max_turns",
        "budget",
        "timeout",
        "context_window",
        "max_denials",
        "cancelled",
        "schema_invalid",
        "verify_failed",
      ],
    });
    expect(parsed.github_token).toBeUndefined(); // "${{ github.token }}" unexpanded outside a runner
    expect(parsed.retention_days).toBeUndefined();
    expect(parsed.max_budget_usd).toBeUndefined();
  });

  it("parses typed values", () => {
    const parsed = inputs({
      max_turns: "7",
      max_budget_usd: "1.5",
      timeout_minutes: "0.5",
      comment: "FALSE",
      allowed_tools: "Bash(npm test:*), Edit(src/**)\nBash(git diff a,b)",
      disallowed_tools: "# comment line\nBash(git push:*)",
      allowed_bots: "dependabot[bot], Renovate",
      setup: "npm ci\n\n  npm run build  ",
      network: "setup",
      retention_days: "3",
      fail_on: "none",
    });
    expect(parsed.max_turns).toBe(7);
    expect(parsed.max_budget_usd).toBe(1.5);
    expect(parsed.timeout_minutes).toBe(0.5);
    expect(parsed.comment).toBe(false);
    expect(parsed.allowed_tools).toEqual(["Bash(npm test:*)", "Edit(src/**)", "Bash(git diff a,b)"]);
    expect(parsed.disallowed_tools).toEqual(["Bash(git push:*)"]);
    expect(parsed.allowed_bots).toEqual(["dependabot", "renovate"]);
    expect(parsed.setup).toEqual(["npm ci", "npm run build"]);
    expect(parsed.retention_days).toBe(3);
    expect(parsed.fail_on).toEqual([]);
  });

  it("reports every bad input by name in one error", () => {
    let error: unknown;
    try {
      inputs({
        max_turns: "0",
        permission_mode: "yolo",
        comment: "sure",
        fail_on: "oops",
        artifact_name: "a/b",
        network: "host",
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ActionInputError);
    const message = (error as Error).message;
    for (const name of ["max_turns", "permission_mode", "comment", "fail_on", "artifact_name", "network"])
      expect(message).toContain(`${name}:`);
  });

  it("refuses setup commands without network setup, and prompt with prompt_file", () => {
    expect(() => inputs({ setup: "npm ci" })).toThrow(/setup: .*network: setup/);
    expect(() => inputs({ network: "allowlist" })).toThrow(
      /network: allowlist needs at least one allowed_domains/,
    );
    expect(() => inputs({ allowed_domains: "npm" })).toThrow(/allowed_domains: needs network: allowlist/);
    expect(() => inputs({ network: "allowlist", allowed_domains: "npm, *.com" })).toThrow(
      /allowed_domains: "?\*\.com"?: a wildcard over a public suffix/,
    );
    expect(
      inputs({ network: "allowlist", allowed_domains: "npm\n*.corp.example.com, git.example.com:8443" })
        .allowed_domains,
    ).toEqual(["npm", "*.corp.example.com", "git.example.com:8443"]);
    expect(() => inputs({ prompt: "a", prompt_file: "b" })).toThrow(/prompt and prompt_file/);
  });

  it("refuses the network inputs that need another network, in the inputs' own words", () => {
    expect(() => inputs({ network: "on", setup_allowed_domains: "npm" })).toThrow(
      /setup_allowed_domains: needs network: setup/,
    );
    expect(() => inputs({ allow_private_hosts: "corp.internal" })).toThrow(
      /allow_private_hosts: needs network: allowlist or setup/,
    );
    expect(() => inputs({ inject_secrets: "NPM_TOKEN=authorization:npm.corp.example.com" })).toThrow(
      /inject_secrets: needs network: allowlist or setup/,
    );
  });

  it("takes the spending caps for any task, and refuses a cap name without a cap outside the queue", () => {
    expect(
      inputs({ prompt: "fix it", max_daily_usd: "40", max_monthly_usd: "0", cap_name: "acme" }),
    ).toMatchObject({ task: "run", max_daily_usd: 40, max_monthly_usd: 0, cap_name: "acme" });
    expect(inputs({ task: "review", max_monthly_usd: "300" }).max_monthly_usd).toBe(300);
    expect(() => inputs({ max_daily_usd: "-1" })).toThrow(/max_daily_usd: an amount in US dollars/);
    expect(() => inputs({ cap_name: "acme" })).toThrow(/cap_name: needs max_daily_usd or max_monthly_usd/);
    expect(() => inputs({ queue_label: "agent-ready" })).toThrow(/queue_label: needs task: queue/);
    expect(inputs({ task: "queue", queue_label: "agent-ready", cap_name: "acme" }).cap_name).toBe("acme");
  });

  it("keeps the documented defaults table complete", () => {
    expect(Object.keys(INPUT_DEFAULTS).length).toBeGreaterThanOrEqual(21);
  });
});

describe("splitList", () => {
  it.each([
    ["", []],
    ["a, b", ["a", "b"]],
    ["Bash(a,b), c", ["Bash(a,b)", "c"]],
    ["x\n\n y \n#z", ["x", "y"]],
    ["Bash(f(a,b)),Read(./.env)", ["Bash(f(a,b))", "Read(./.env)"]],
  ])("%j", (input, expected) => {
    expect(splitList(input)).toEqual(expected);
  });
});

describe("toRunConfigInput", () => {
  const token = "ghs_0123456789abcdefghijABCDEFGHIJ012345";
  const apiKey = "sk-ant-api03-test-key-0123456789abcdefghij";

  it("builds a RunConfig the runner accepts, with the token only in secrets", () => {
    const parsed = inputs({
      github_token: token,
      anthropic_api_key: apiKey,
      allowed_tools: "Bash(npm test:*)",
      permission_mode: "acceptEdits",
      timeout_minutes: "2",
    });
    const input = toRunConfigInput({
      inputs: parsed,
      workspace: "/tmp/ws",
      outDir: "/tmp/out",
      prompt: "do it",
      repo: "acme/widgets",
    });
    const config = parseRunConfig(input);
    expect(config.secrets).toEqual(expect.arrayContaining([token, apiKey]));
    expect(config.env).toEqual([]);
    expect(config.trustWorkspaceSettings).toBe(false);
    expect(config.timeoutMs).toBe(120_000);
    expect(config.mode).toBe("acceptEdits");
    expect(config.allow).toEqual(["Bash(npm test:*)"]);
    const { secrets: _secrets, ...rest } = config;
    expect(JSON.stringify(rest)).not.toContain(token);
  });

  it("passes the CLI's network options on: setup domains, private hosts, and a CA file from the workspace", () => {
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-ws-"));
    fs.writeFileSync(path.join(workspace, "corp-ca.pem"), fs.readFileSync(HOST_CA_BUNDLE, "utf8"));
    const setup = parseRunConfig(
      toRunConfigInput({
        inputs: inputs({
          network: "setup",
          setup: "npm ci",
          setup_allowed_domains: "npm\nregistry.corp.example.com",
          allow_private_hosts: "registry.corp.example.com=10.1.2.3",
          // PATH: a variable every runner has; the value itself stays in the environment.
          inject_secrets: "PATH=authorization:registry.corp.example.com",
          ca_cert: "corp-ca.pem",
          script: "s.json",
        }),
        workspace,
        outDir: "/o",
        prompt: "p",
        repo: "a/b",
      }),
    );
    expect(setup.setupAllowDomain).toEqual(["npm", "registry.corp.example.com"]);
    expect(setup.allowPrivateHost).toEqual(["registry.corp.example.com=10.1.2.3"]);
    expect(setup.injectSecret).toEqual(["PATH=authorization:registry.corp.example.com"]);
    expect(setup.caCert).toBe(path.join(workspace, "corp-ca.pem"));
    expect(() =>
      parseRunConfig(
        toRunConfigInput({
          inputs: inputs({ ca_cert: "missing.pem", script: "s.json" }),
          workspace,
          outDir: "/o",
          prompt: "p",
          repo: "a/b",
        }),
      ),
    ).toThrow(/missing\.pem/);
  });

  it("uses ANTHROPIC_API_KEY from the environment when the input is empty, and no key for a script", () => {
    const fromEnv = toRunConfigInput({
      inputs: inputs(),
      workspace: "/w",
      outDir: "/o",
      prompt: "p",
      envCredentials: { apiKey },
      repo: "a/b",
    });
    expect(fromEnv.apiKey).toBe(apiKey);
    const scripted = toRunConfigInput({
      inputs: inputs({ script: "s.json" }),
      workspace: "/w",
      outDir: "/o",
      prompt: "p",
      envCredentials: { apiKey },
      repo: "a/b",
    });
    expect(scripted.apiKey).toBeUndefined();
    expect(scripted.prompt).toBe("p");
    expect(scripted.script).toBe("/w/s.json");
  });
});
