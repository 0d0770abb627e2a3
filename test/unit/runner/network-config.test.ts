// The network options of RunConfig: which combinations are refused before anything starts, and what
// the egress proxy of a run is given.
import { describe, expect, it } from "vitest";
import { EGRESS_PRESET_NAMES } from "../../../src/sandbox/egress/allowlist.js";
import { systemPrompt } from "../../../src/runner/instructions/system-prompt.js";
import { ConfigError } from "../../../src/errors.js";
import { parseRunConfig, type RunConfigInput, runEgressOptions } from "../../../src/runner/config.js";

const base: RunConfigInput = { workspace: ".", script: "script.json" };
const parse = (extra: Partial<RunConfigInput>) => parseRunConfig({ ...base, ...extra });

describe("network options", () => {
  it.each([
    [{ network: "allowlist" }, /--network allowlist needs at least one --allow-domain/],
    [{ allowDomain: ["npm"] }, /--allow-domain needs --network allowlist/],
    [{ setupAllowDomain: ["npm"], network: "on" }, /--setup-allow-domain needs --network setup/],
    [{ allowPrivateHost: ["corp.internal"] }, /--allow-private-host needs --network allowlist or setup/],
    [{ setup: ["npm ci"] }, /--setup commands need a network/],
    [{ network: "allowlist", allowDomain: ["*.co.uk"] }, /public suffix/],
    [{ network: "allowlist", allowDomain: ["10.0.0.1"] }, /addresses are not allowed/],
    [
      { network: "allowlist", allowDomain: ["npm"], allowPrivateHost: ["corp=notanip"] },
      /is not an IP address/,
    ],
    [{ caCert: "/nonexistent/ca.pem" }, /--ca-cert \/nonexistent\/ca.pem: ENOENT/],
    [
      { injectSecret: ["PATH=authorization:npm.example"] },
      /--inject-secret needs --network allowlist or setup/,
    ],
    [
      {
        network: "allowlist",
        allowDomain: ["npm.example"],
        injectSecret: ["PATH=authorization:other.example"],
      },
      /--inject-secret PATH=authorization:other.example: other.example is not on the allowlist/,
    ],
    [
      {
        network: "allowlist",
        allowDomain: ["npm.example"],
        injectSecret: ["AGENT_CI_TEST_UNSET_VARIABLE=authorization:npm.example"],
      },
      /the environment variable AGENT_CI_TEST_UNSET_VARIABLE is not set/,
    ],
    [
      {
        network: "allowlist",
        allowDomain: ["npm.example"],
        injectSecret: ["PATH=authorization:npm.example"],
        env: ["PATH"],
      },
      /--env PATH: it is injected by the proxy/,
    ],
  ] as Array<[Partial<RunConfigInput>, RegExp]>)("refuses %j", (extra, message) => {
    expect(() => parse(extra)).toThrow(ConfigError);
    expect(() => parse(extra)).toThrow(message);
  });

  it("gives the allowlist to the proxy, with private hosts and their addresses", () => {
    const options = runEgressOptions(
      parse({
        network: "allowlist",
        allowDomain: ["npm", "*.corp.example"],
        allowPrivateHost: ["git.corp.example=10.1.2.3", "pkg.corp.example"],
      }),
    );
    expect(options?.given).toEqual(["npm", "*.corp.example"]);
    expect(options?.rules.map((r) => r.host)).toEqual([
      "registry.npmjs.org",
      "registry.yarnpkg.com",
      "corp.example",
    ]);
    expect(options?.privateHosts).toEqual(["git.corp.example", "pkg.corp.example"]);
    expect(options?.hosts).toEqual({ "git.corp.example": "10.1.2.3" });
  });

  it("gives setup commands every preset by default, or the setup allowlist", () => {
    expect(runEgressOptions(parse({ network: "setup", setup: ["npm ci"] }))?.given).toEqual(
      EGRESS_PRESET_NAMES,
    );
    expect(
      runEgressOptions(parse({ network: "setup", setup: ["npm ci"], setupAllowDomain: ["npm"] }))?.given,
    ).toEqual(["npm"]);
  });

  it("starts no proxy for none, on, or setup without commands", () => {
    expect(runEgressOptions(parse({}))).toBeUndefined();
    expect(runEgressOptions(parse({ network: "on" }))).toBeUndefined();
    expect(runEgressOptions(parse({ network: "setup" }))).toBeUndefined();
  });
});

describe("the system prompt's network line", () => {
  it("names the allowed domains and says refusals come back in the result", () => {
    const prompt = systemPrompt({
      mode: "default",
      network: "allowlist",
      allowedDomains: ["npm", "*.corp.example"],
    });
    expect(prompt).toContain(
      "The sandbox reaches only these domains, over HTTP(S) through a proxy set in HTTP_PROXY/HTTPS_PROXY (npm, pip, git and curl use it): npm, *.corp.example.",
    );
    expect(systemPrompt({ mode: "default", network: "setup" })).toContain(
      "The sandbox has no network access",
    );
  });
});
