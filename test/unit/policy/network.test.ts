// The one "may this host be reached" decision, as the egress proxy and WebFetch use it: the name first
// (never resolved when refused), then every address it resolves to.
import { describe, expect, it } from "vitest";
import {
  addressRefusal,
  addressesVerdict,
  checkHost,
  mayReach,
  parseDomainRule,
  type ReachPolicy,
  type Resolve,
} from "../../../src/policy/network.js";

const policy: ReachPolicy = {
  rules: [
    { host: "public.test", wildcard: false },
    { host: "intranet.test", wildcard: false },
    { host: "corp.test", wildcard: true },
    { host: "meta.test", wildcard: false },
  ],
  privateHosts: ["Intranet.TEST."],
};

/** A resolver over a fixed map that remembers what it was asked. */
function resolver(map: Record<string, string[]>): Resolve & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    const addresses = map[host];
    if (addresses === undefined) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address }));
  };
  return Object.assign(resolve, { asked });
}

describe("mayReach", () => {
  const resolve = resolver({
    "public.test": ["93.184.215.14", "2606:4700::1111"],
    "intranet.test": ["10.0.0.7"],
    "a.corp.test": ["93.184.215.14", "127.0.0.1"],
    "meta.test": ["169.254.169.254"],
    "empty.corp.test": [],
  });

  it("lets a public name on the allowlist through, to its first address", async () => {
    expect(await mayReach("PUBLIC.test.", 443, policy, resolve)).toEqual({
      ok: true,
      host: "public.test",
      address: "93.184.215.14",
    });
  });

  it("lets an opted-in host reach its private address", async () => {
    expect(await mayReach("intranet.test", 80, policy, resolve)).toMatchObject({
      ok: true,
      address: "10.0.0.7",
    });
  });

  it.each([
    ["127.0.0.1", /an IP address/],
    ["[::1]", /an IP address/],
    ["169.254.169.254", /an IP address/],
    ["not a host", /not a host name/],
    ["other.test", /not on the allowlist/],
    ["corp.test", /not on the allowlist/],
    ["a.corp.test", /non-public address 127\.0\.0\.1/],
    ["meta.test", /cloud metadata address/],
    ["empty.corp.test", /does not resolve/],
    ["missing.corp.test", /does not resolve \(ENOTFOUND\)/],
  ])("refuses %s with the reason", async (host, reason) => {
    const verdict = await mayReach(host, 443, policy, resolve);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toMatch(reason);
  });

  it("never resolves a name it refuses", async () => {
    const local = resolver({});
    await mayReach("other.test", 443, policy, local);
    await mayReach("10.0.0.1", 443, policy, local);
    expect(local.asked).toEqual([]);
  });

  it("judges a megabyte-long host name in linear time", async () => {
    const verdict = await mayReach(`${"a.".repeat(1 << 19)}test`, 443, policy, resolver({}));
    expect(verdict).toEqual({ ok: false, reason: "not a host name" });
  });
});

describe("checkHost and addressesVerdict, the two halves", () => {
  it("the name half gives the normalised name", () => {
    expect(checkHost("[public.test]", 443, policy)).toEqual({ ok: true, host: "public.test" });
  });

  it("the address half refuses when any address is non-public, the metadata address even when opted in", () => {
    expect(addressesVerdict("public.test", ["93.184.215.14", "192.168.1.1"], policy).ok).toBe(false);
    expect(addressesVerdict("intranet.test", ["10.0.0.1", "169.254.169.254"], policy)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/metadata/),
    });
    expect(addressesVerdict("public.test", [], policy).ok).toBe(false);
  });
});

describe("IPv4 addresses inside IPv6 are judged as the IPv4 address", () => {
  it.each([
    ["::ffff:169.254.169.254", /metadata address 169\.254\.169\.254/],
    ["::ffff:a9fe:a9fe", /metadata address 169\.254\.169\.254/],
    ["::ffff:0:a9fe:a9fe", /metadata address 169\.254\.169\.254/],
    ["::169.254.169.254", /metadata address 169\.254\.169\.254/],
    ["::a9fe:a9fe", /metadata address 169\.254\.169\.254/],
    ["64:ff9b::169.254.169.254", /metadata address 169\.254\.169\.254 \(as 64:ff9b::169\.254\.169\.254\)/],
    ["64:FF9B::A9FE:A9FE", /metadata address 169\.254\.169\.254/],
    ["64:ff9b:1::a9fe:a9fe", /metadata address 169\.254\.169\.254/],
    // 64:ff9b:1::/48 with a /48 prefix: the address sits in bits 48-63 and 72-87.
    ["64:ff9b:1:a9fe:a9:fe00::", /metadata address 169\.254\.169\.254/],
  ])("%s, even for an opted-in host", (address, reason) => {
    expect(addressRefusal(address, true)).toMatch(reason);
    expect(addressRefusal(address, false)).toMatch(reason);
  });

  it.each([
    ["::ffff:127.0.0.1", "127.0.0.1"],
    ["::ffff:7f00:1", "127.0.0.1"],
    ["::10.0.0.1", "10.0.0.1"],
    ["64:ff9b::10.0.0.1", "10.0.0.1"],
    ["64:ff9b::c0a8:101", "192.168.1.1"],
    ["64:ff9b::7f00:1%eth0", "127.0.0.1"],
  ])("%s is non-public as %s, unless the host is opted in", (address, inner) => {
    expect(addressRefusal(address, false)).toContain(`non-public address ${inner}`);
    expect(addressRefusal(address, true)).toBeUndefined();
  });

  it.each(["64:ff9b::5db8:d70e", "::ffff:93.184.215.14", "2606:4700::1111", "93.184.215.14"])(
    "%s is public",
    (address) => {
      expect(addressRefusal(address, false)).toBeUndefined();
    },
  );

  it("keeps :: and ::1 as themselves, and a local-use NAT64 address is public only where every position is", () => {
    expect(addressRefusal("::1", false)).toContain("non-public address ::1 ");
    expect(addressRefusal("::", false)).toContain("non-public address :: ");
    // A /96 gateway inside 64:ff9b:1::/48 leaves zeros where a /48 one would carry the address.
    expect(addressRefusal("64:ff9b:1::5db8:d70e", false)).toMatch(/non-public address 0\.0\.0\.0/);
    expect(addressRefusal("64:ff9b:1::5db8:d70e", true)).toBeUndefined();
  });

  it("a resolved NAT64 address of the metadata service refuses the name", () => {
    expect(addressesVerdict("intranet.test", ["64:ff9b::a9fe:a9fe"], policy)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/metadata/),
    });
    expect(addressesVerdict("public.test", ["64:ff9b::a00:1"], policy)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/non-public address 10\.0\.0\.1/),
    });
  });
});

describe("parseDomainRule", () => {
  it.each([
    ["Example.COM.", { host: "example.com", wildcard: false, port: undefined }],
    ["*.corp.example", { host: "corp.example", wildcard: true, port: undefined }],
    ["git.example:8443", { host: "git.example", wildcard: false, port: 8443 }],
  ])("reads %s", (text, rule) => {
    expect(parseDomainRule(text)).toEqual(rule);
  });

  it.each(["", "10.0.0.1", "[::1]", "a..b", "-x.test", "x.test:0", "x.test:70000", "ex*ample.com"])(
    "refuses %j with a reason",
    (text) => {
      expect(typeof parseDomainRule(text)).toBe("string");
    },
  );
});
