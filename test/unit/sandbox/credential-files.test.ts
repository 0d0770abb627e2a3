// Which workspace paths are cloud credential files the copy-in holds back (B5), from their names and from
// the credential variables of the host's environment.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planWorkspaceCopy } from "../../../src/sandbox/archive.js";
import { credentialFileMatcher } from "../../../src/sandbox/credential-files.js";

const workspace = () => fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-cred-"));

describe("credentialFileMatcher", () => {
  it("holds back gha-creds-*.json at any depth, and whatever lies under a directory so named", () => {
    const held = credentialFileMatcher(workspace(), {});
    for (const rel of [
      "gha-creds-abc.json",
      "a/b/gha-creds-1f2e.json",
      "gha-creds-x.json/inner",
      "x/gha-creds-a\nb.json",
    ])
      expect(held(rel), rel).toMatch(/gha-creds-\*\.json/);
    for (const rel of ["gha-creds.json", "my-gha-creds-a.json", "gha-creds-a.json.bak", "src/app.js"])
      expect(held(rel), rel).toBeUndefined();
  });

  it("holds back the files the credential variables name inside the workspace, naming the variable", () => {
    const dir = workspace();
    const held = credentialFileMatcher(dir, {
      AWS_SHARED_CREDENTIALS_FILE: path.join(dir, "ci/aws/credentials"),
      GOOGLE_APPLICATION_CREDENTIALS: path.join(dir, "keys"),
      AWS_CONFIG_FILE: path.join(os.tmpdir(), "elsewhere/config"),
      GOOGLE_GHA_CREDS_PATH: "",
      PATH: path.join(dir, "src"),
    });
    expect(held("ci/aws/credentials")).toContain("AWS_SHARED_CREDENTIALS_FILE");
    expect(held("keys/sa.json")).toContain("GOOGLE_APPLICATION_CREDENTIALS");
    expect(held("ci/aws/credentials.bak")).toBeUndefined();
    expect(held("ci/aws")).toBeUndefined();
    expect(held("src/app.js")).toBeUndefined();
    expect(held("elsewhere/config")).toBeUndefined();
  });

  it("follows symlinks: a variable naming the workspace through a link, or a link to the real file", () => {
    const dir = workspace();
    fs.mkdirSync(path.join(dir, "secrets"));
    fs.writeFileSync(path.join(dir, "secrets/real.json"), "{}");
    fs.symlinkSync("secrets/real.json", path.join(dir, "link.json"));
    const linkToWorkspace = path.join(workspace(), "ws");
    fs.symlinkSync(dir, linkToWorkspace);
    const held = credentialFileMatcher(dir, {
      CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE: path.join(dir, "link.json"),
      AWS_WEB_IDENTITY_TOKEN_FILE: path.join(linkToWorkspace, "token"),
    });
    expect(held("link.json")).toContain("CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE");
    expect(held("secrets/real.json")).toContain("CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE");
    fs.writeFileSync(path.join(dir, "token"), "t");
    const again = credentialFileMatcher(dir, {
      AWS_WEB_IDENTITY_TOKEN_FILE: path.join(linkToWorkspace, "token"),
    });
    expect(again("token")).toContain("AWS_WEB_IDENTITY_TOKEN_FILE");
  });

  it("is linear in a path's length (a megabyte-long name of one character)", () => {
    const held = credentialFileMatcher(workspace(), {});
    expect(held("a".repeat(1 << 20))).toBeUndefined();
    expect(held(`gha-creds-${"a".repeat(1 << 20)}`)).toBeUndefined();
    expect(held("a/".repeat(1 << 19))).toBeUndefined();
  });
});

describe("planWorkspaceCopy", () => {
  it("B5 lists the held-back credential files apart from the copy, whatever a Read rule says", async () => {
    const dir = workspace();
    fs.writeFileSync(path.join(dir, "gha-creds-abc.json"), "{}");
    fs.writeFileSync(path.join(dir, "credentials"), "[default]\n");
    fs.writeFileSync(path.join(dir, "app.js"), "1\n");
    const copy = await planWorkspaceCopy(dir, {
      credentialEnv: { AWS_SHARED_CREDENTIALS_FILE: path.join(dir, "credentials") },
      exclude: (rel) => (rel === "credentials" ? "a Read deny rule" : undefined),
    });
    expect(copy.entries.map((e) => e.rel)).toEqual(["app.js"]);
    expect(copy.credentialFiles.map((c) => c.path).sort()).toEqual(["credentials", "gha-creds-abc.json"]);
    expect(copy.skipped).toEqual([]);
  });
});
