// The package cache's volume names: per namespace and platform; in the Action per repository too, so that
// repositories sharing an engine share no volume (one's pull request 7 never reads another's); and a trusted
// volume's producer is checked as a snapshot's is.
import { afterEach, describe, expect, it } from "vitest";
import { setupCacheLine } from "../../../src/report/schema-setup-cache.js";
import { parseRunConfig } from "../../../src/runner/config.js";
import { runSandboxOptions } from "../../../src/runner/run/sandbox-options.js";
import { PACKAGE_CACHE_PREFIX_ENV, packageCacheVolume } from "../../../src/sandbox/setup/package-cache.js";
import { packageCacheLabels, refusePackageCache } from "../../../src/setup-cache/trust.js";

const base = { workspace: ".", script: "s.json", setup: ["npm ci"], network: "setup" as const };
const origin = { event: "issue_comment", ref: "refs/heads/main", pullRequest: 7, commit: "c", runId: "1" };
const prefixOf = (input: Record<string, unknown>) =>
  runSandboxOptions(parseRunConfig({ ...base, ...input }), {}, "run").setupCache?.packageCachePrefix;

describe("package-cache volume names", () => {
  afterEach(() => {
    delete process.env[PACKAGE_CACHE_PREFIX_ENV];
  });

  it("name the repository in the Action, and nothing more on the command line", () => {
    expect(prefixOf({})).toBeUndefined();
    const a = prefixOf({ repo: "octo/app", cacheOrigin: origin });
    const b = prefixOf({ repo: "octo/lib", cacheOrigin: origin });
    expect(a).toBe("agent-ci-pkg-cache-octo.app");
    expect(packageCacheVolume("pr-7", "amd64", a)).not.toBe(packageCacheVolume("pr-7", "amd64", b));
    expect(packageCacheVolume("trusted", "arm64")).toBe("agent-ci-pkg-cache-trusted-arm64");
  });

  it("take the prefix the environment gives", () => {
    process.env[PACKAGE_CACHE_PREFIX_ENV] = "team-a-pkg";
    expect(prefixOf({ repo: "octo/app", cacheOrigin: origin })).toBe("team-a-pkg");
  });

  it("refuse a volume whose labels do not fit its name", () => {
    const scope = { defaultRef: "refs/heads/main" };
    const push = { event: "push", ref: "refs/heads/main", commit: "c", runId: "1" };
    const at = { namespace: "trusted", platform: "amd64" };
    expect(refusePackageCache(packageCacheLabels(at, push), at, scope)).toBeUndefined();
    expect(refusePackageCache(packageCacheLabels(at, push), { ...at, platform: "arm64" }, scope)).toMatch(
      /platform is "amd64"/,
    );
    expect(
      refusePackageCache(packageCacheLabels(at, { ...push, ref: "refs/heads/evil" }), at, scope),
    ).toMatch(/ran on "refs\/heads\/evil"/);
    expect(refusePackageCache({}, at, scope)).toBe("it is not a package cache");
    const pr7 = { namespace: "pr-7", platform: "amd64" };
    const fromPr8 = packageCacheLabels(pr7, { ...push, event: "pull_request", pullRequest: 8 });
    expect(refusePackageCache(fromPr8, pr7, scope)).toMatch(/another pull request than #7/);
  });

  it("are in the setup cache's one line: what was restored, and where it was saved", () => {
    const record = { outcome: "miss" as const, key: "ab".repeat(32), refused: [], write: "pr-7", saved: {} };
    expect(setupCacheLine(record)).toBe(`setup cache: miss ${"ab".repeat(6)} (saved to pr-7)`);
    const packageCache = {
      restored: [{ volume: "v1", namespace: "trusted", bytes: 3 * 1024 * 1024 }],
      refused: [],
      saved: { volume: "agent-ci-pkg-cache-pr-7-amd64", bytes: 1, ms: 1 },
    };
    expect(setupCacheLine({ ...record, packageCache })).toBe(
      `setup cache: miss ${"ab".repeat(6)} (saved to pr-7; package cache restored 3.0 MiB from trusted, saved to agent-ci-pkg-cache-pr-7-amd64)`,
    );
  });
});
