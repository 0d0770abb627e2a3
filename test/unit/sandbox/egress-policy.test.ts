import { describe, expect, it } from "vitest";
import { addressRefusal, describeRules, matchDomain } from "../../../src/policy/network.js";
import {
  EGRESS_PRESETS,
  EgressPolicyError,
  parseAllowDomains,
} from "../../../src/sandbox/egress/allowlist.js";

describe("parseAllowDomain", () => {
  it("expands a preset to its hosts", () => {
    expect(parseAllowDomains(["npm"]).map((r) => r.host)).toEqual([...EGRESS_PRESETS.npm]);
  });

  it("reads a name that is also an object property as a host, not a preset", () => {
    expect(parseAllowDomains(["constructor"])).toEqual([
      { host: "constructor", wildcard: false, port: undefined },
    ]);
  });

  it("reads hosts, wildcards and ports, normalised", () => {
    expect(parseAllowDomains(["Example.COM.", "*.corp.example.org", "git.example.net:8443"])).toEqual([
      { host: "example.com", wildcard: false, port: undefined },
      { host: "corp.example.org", wildcard: true, port: undefined },
      { host: "git.example.net", wildcard: false, port: 8443 },
    ]);
  });

  it.each([
    "",
    "10.0.0.1",
    "[::1]",
    "exa mple.com",
    "*.com",
    "*.co.uk",
    "a..b",
    "host:0",
    "host:70000",
    "-bad.com",
    "ex*ample.com",
  ])("refuses %j", (entry) => {
    expect(() => parseAllowDomains([entry])).toThrow(EgressPolicyError);
  });

  it("takes a 1 MB entry in linear time and refuses it", () => {
    expect(() => parseAllowDomains(["a".repeat(1 << 20)])).toThrow(EgressPolicyError);
    expect(() => parseAllowDomains(["*.".repeat(1 << 19)])).toThrow(EgressPolicyError);
  });
});

describe("matchDomain", () => {
  const rules = parseAllowDomains(["allowed.test", "*.corp.test", "only.test:8443"]);

  it.each([
    ["allowed.test", 443, true],
    ["ALLOWED.test.", 80, true],
    ["sub.allowed.test", 443, false],
    ["corp.test", 443, false],
    ["a.b.corp.test", 443, true],
    ["evilcorp.test", 443, false],
    ["only.test", 8443, true],
    ["only.test", 443, false],
    ["allowed.test.evil.com", 443, false],
  ] as const)("%s:%d → %s", (host, port, allowed) => {
    expect(Boolean(matchDomain(rules, host, port))).toBe(allowed);
  });

  it("describes the rules as written", () => {
    expect(describeRules(rules)).toBe("allowed.test, *.corp.test, only.test:8443");
  });
});

describe("addressRefusal", () => {
  it.each([
    "127.0.0.1",
    "10.1.2.3",
    "172.17.0.1",
    "192.168.1.1",
    "169.254.1.1",
    "100.64.0.1",
    "0.0.0.0",
    "::1",
    "fe80::1",
    "fd12::1",
    "::ffff:10.0.0.1",
    "::ffff:127.0.0.1",
  ])("refuses the non-public %s unless opted in", (address) => {
    expect(addressRefusal(address, false)).toMatch(/non-public/);
    expect(addressRefusal(address, true)).toBeUndefined();
  });

  it.each(["169.254.169.254", "::ffff:169.254.169.254", "fd00:ec2::254", "100.100.100.200"])(
    "refuses the metadata address %s always",
    (address) => {
      expect(addressRefusal(address, true)).toMatch(/metadata/);
    },
  );

  it.each(["93.184.215.14", "2606:4700::1111", "104.16.0.1"])("lets the public %s through", (address) => {
    expect(addressRefusal(address, false)).toBeUndefined();
  });
});
