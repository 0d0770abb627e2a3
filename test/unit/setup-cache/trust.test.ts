// The setup cache's rules without an engine: who writes which namespace, which entries a reader refuses, and
// what the key changes with.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  detectKeyFiles,
  keyEnv,
  readKeyFiles,
  SETUP_CACHE_FORMAT,
  setupKey,
} from "../../../src/setup-cache/key.js";
import { type CacheOrigin, cacheScope, entryLabels, refuseEntry } from "../../../src/setup-cache/trust.js";

const action = (event: string, ref: string, pullRequest?: number): CacheOrigin => ({
  face: "action",
  event,
  ref,
  defaultBranch: "main",
  pullRequest,
  commit: "abc",
  runId: "1-1",
});

describe("cacheScope", () => {
  it.each([
    [action("push", "refs/heads/main"), ["trusted"], "trusted"],
    [action("schedule", "refs/heads/main"), ["trusted"], "trusted"],
    [action("workflow_dispatch", "refs/heads/main"), ["trusted"], "trusted"],
    [action("push", "refs/heads/feature"), ["trusted"], undefined],
    [action("issues", "refs/heads/main"), ["trusted"], undefined],
    [action("issue_comment", "refs/heads/main"), ["trusted"], undefined],
    [action("issue_comment", "refs/heads/main", 4), ["pr-4", "trusted"], "pr-4"],
    [action("pull_request_target", "refs/heads/main", 5), ["pr-5", "trusted"], "pr-5"],
    [action("pull_request", "refs/pull/6/merge", 6), ["pr-6", "trusted"], "pr-6"],
    [{ ...action("push", "refs/heads/main"), defaultBranch: undefined }, ["trusted"], undefined],
    [{ face: "cli", runId: "r" } as CacheOrigin, ["trusted"], "trusted"],
  ])("%j reads %j and writes %j", (origin, read, write) => {
    const scope = cacheScope(origin);
    expect(scope.read).toEqual(read);
    expect(scope.write).toBe(write);
  });
});

describe("refuseEntry", () => {
  const key = "k".repeat(64);
  const labelsOf = (origin: CacheOrigin, namespace: string) =>
    entryLabels({ key, namespace, format: SETUP_CACHE_FORMAT, setupMs: 1 }, cacheScope(origin).producer);
  const reader = { defaultRef: "refs/heads/main" };
  const expected = (namespace: string) => ({ key, namespace, format: SETUP_CACHE_FORMAT });

  it("accepts what a writer allowed there wrote", () => {
    expect(
      refuseEntry(labelsOf(action("push", "refs/heads/main"), "trusted"), expected("trusted"), reader),
    ).toBe(undefined);
    expect(refuseEntry(labelsOf({ face: "cli", runId: "r" }, "trusted"), expected("trusted"), reader)).toBe(
      undefined,
    );
    expect(refuseEntry(labelsOf(action("issue_comment", "x", 4), "pr-4"), expected("pr-4"), reader)).toBe(
      undefined,
    );
  });

  it("refuses a producer that does not fit, a moved entry, a missing label and another format", () => {
    const pr = labelsOf(action("pull_request_target", "refs/heads/main", 4), "trusted");
    expect(refuseEntry(pr, expected("trusted"), reader)).toMatch(/may not write trusted/);
    const branch = labelsOf(action("push", "refs/heads/evil"), "trusted");
    expect(refuseEntry(branch, expected("trusted"), reader)).toMatch(/ran on "refs\/heads\/evil"/);
    expect(refuseEntry(branch, expected("trusted"), { defaultRef: undefined })).toMatch(/cannot be checked/);
    const moved = labelsOf(action("issue_comment", "x", 4), "pr-4");
    expect(refuseEntry(moved, expected("pr-5"), reader)).toMatch(/namespace "pr-4", not pr-5/);
    expect(refuseEntry({ ...moved, "agent-ci.setup.namespace": "pr-5" }, expected("pr-5"), reader)).toMatch(
      /another pull request/,
    );
    expect(refuseEntry({}, expected("trusted"), reader)).toMatch(/not a setup snapshot/);
    expect(refuseEntry({ ...moved, "agent-ci.setup.format": "0" }, expected("pr-4"), reader)).toMatch(
      /format/,
    );
    expect(refuseEntry(moved, { ...expected("pr-4"), key: "other" }, reader)).toMatch(/key/);
    // A label's text is quoted and cut in the reason.
    const long = { ...pr, "agent-ci.setup.event": `x\n${"y".repeat(500)}` };
    expect(refuseEntry(long, expected("trusted"), reader)!.length).toBeLessThan(200);
  });
});

describe("the key", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-key-"));
  for (const [name, text] of Object.entries({
    "package-lock.json": "{}",
    "requirements-dev.txt": "pytest\n",
    "pyproject.toml": "[project]\n",
    "README.md": "readme",
    "main.py": "print(1)",
  }))
    fs.writeFileSync(path.join(dir, name), text);
  const inputs = () => ({
    format: SETUP_CACHE_FORMAT,
    baseImage: "sha256:1",
    setup: ["npm ci"],
    files: readKeyFiles(dir),
    env: keyEnv({ B: "2", A: "1" }),
    network: "setup",
    platform: "amd64",
  });

  it("finds the lockfiles and manifests by ecosystem, not the source", () => {
    expect(detectKeyFiles(dir)).toEqual(["package-lock.json", "pyproject.toml", "requirements-dev.txt"]);
    expect(keyEnv({ B: "2", A: "1" }).map((e) => e.name)).toEqual(["A", "B"]);
  });

  it("changes with a lockfile's bytes and not with the source", () => {
    const before = setupKey(inputs());
    fs.writeFileSync(path.join(dir, "main.py"), "print(2)");
    expect(setupKey(inputs())).toBe(before);
    fs.writeFileSync(path.join(dir, "package-lock.json"), "{ }");
    expect(setupKey(inputs())).not.toBe(before);
    expect(setupKey({ ...inputs(), setup: ["npm install"] })).not.toBe(setupKey(inputs()));
  });

  it("refuses a key file outside the workspace", () => {
    expect(() => readKeyFiles(dir, ["../etc/passwd"])).toThrow(/outside the workspace/);
    expect(readKeyFiles(dir, ["missing.lock"])).toEqual([{ path: "missing.lock", sha256: null }]);
  });
});
