// Which workspace paths are cloud credential files the copy-in holds back (B5), from their names and from
// the credential variables of the host's environment; which files are held back or copied without their
// credentials by name at any depth (B12), and what each stripper keeps.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planWorkspaceCopy } from "../../../src/sandbox/copy/archive.js";
import {
  credentialFileMatcher,
  credentialFileRule,
  maskUrlCredentials,
  MAX_STRIPPED_BYTES,
  withoutUrlCredentials,
} from "../../../src/sandbox/copy/credential-files.js";

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

/** Fake secrets, assembled at run time. */
const TOKEN = ["tok", "Wk4".repeat(6)].join("-");

/** What the copy makes of a file at `rel` holding `text`: held back (the reason), or its new text and what went. */
function ruled(rel: string, text: string) {
  const rule = credentialFileRule(rel);
  if (!rule) return undefined;
  if ("holdBack" in rule) return { heldBack: rule.holdBack };
  const stripped = rule.strip(Buffer.from(text));
  return stripped ? { text: stripped.content.toString(), removed: stripped.removed } : { unreadable: true };
}

describe("withoutUrlCredentials", () => {
  it.each([
    [`https://user:${TOKEN}@github.com/o/r.git`, "https://github.com/o/r.git"],
    [`https://${TOKEN}@github.com/o/r`, "https://github.com/o/r"],
    [`git+https://u:${TOKEN}@h/x and http://p:${TOKEN}@proxy:3128`, "git+https://h/x and http://proxy:3128"],
    [`https://u:p@ss${TOKEN}@h/`, "https://h/"],
    ["ssh://git@github.com/o/r", "ssh://git@github.com/o/r"],
    [`ssh://git:${TOKEN}@github.com/o/r`, "ssh://github.com/o/r"],
    ["git@github.com:o/r.git", "git@github.com:o/r.git"],
    ["https://github.com/o/r@v1?x=a@b#c@d", "https://github.com/o/r@v1?x=a@b#c@d"],
    [`"https://u:${TOKEN}@h"`, '"https://h"'],
    ["://@x", "://@x"],
    ["no url here: a@b", "no url here: a@b"],
  ])("%s", (text, expected) => {
    expect(withoutUrlCredentials(text)).toBe(expected);
  });

  it("shows the userinfo as *** when a key is named", () => {
    expect(maskUrlCredentials(`https://x-access-token:${TOKEN}@github.com/`)).toBe("https://***@github.com/");
  });

  it("is linear in the text's length", () => {
    for (const text of [
      "://".repeat(1 << 19),
      "a".repeat(1 << 20),
      `a://${"b".repeat(1 << 20)}`,
      "x://a@".repeat(1 << 17),
    ])
      expect(withoutUrlCredentials(text).length).toBeLessThanOrEqual(text.length);
  });
});

describe("credential files at any depth", () => {
  it("B12 holds back .netrc, _netrc, .git-credentials and .dockercfg whole", () => {
    for (const rel of ["deploy/.netrc", "_netrc", "ci/.git-credentials", "a/b/.dockercfg"])
      expect(ruled(rel, "")?.heldBack, rel).toMatch(/never copied in/);
    expect(credentialFileRule("netrc")).toBeUndefined();
    expect(credentialFileRule("src/config.json")).toBeUndefined();
  });

  it("B12 .npmrc and .yarnrc: auth lines (any scope, quoted, commented) go, URL userinfo goes, the rest stays", () => {
    const npmrc = [
      "registry=https://registry.npmjs.org/",
      `//registry.npmjs.org/:_authToken=${TOKEN}`,
      `//npm.corp.example/:_auth = ${TOKEN}`,
      `_password=${TOKEN}`,
      `#//old.example/:_authToken=${TOKEN}`,
      `@corp:registry=https://u:${TOKEN}@npm.corp.example/`,
      "save-exact=true",
    ].join("\n");
    expect(ruled("packages/a/.npmrc", npmrc)).toEqual({
      text: "registry=https://registry.npmjs.org/\n@corp:registry=https://npm.corp.example/\nsave-exact=true",
      removed: [
        "//registry.npmjs.org/:_authToken",
        "//npm.corp.example/:_auth",
        "_password",
        "//old.example/:_authToken",
        "@corp:registry (user:password@ in a URL)",
      ],
    });
    const yarnrc = `registry "https://registry.yarnpkg.com"\n"//registry.yarnpkg.com/:_authToken" "${TOKEN}"\n`;
    expect(ruled("app/.yarnrc", yarnrc)).toEqual({
      text: 'registry "https://registry.yarnpkg.com"\n',
      removed: ["//registry.yarnpkg.com/:_authToken"],
    });
  });

  it("B12 .yarnrc.yml: npmAuthToken and npmAuthIdent at any level (a block scalar too) go, the rest stays as written", () => {
    const yml = [
      "# the project's registries",
      `npmRegistryServer: "https://u:${TOKEN}@registry.example"`,
      `npmAuthToken: ${TOKEN}`,
      "npmScopes:",
      "  corp:",
      "    npmRegistryServer: https://npm.corp.example",
      "    npmAuthIdent: |",
      `      user:${TOKEN}`,
      "    npmAlwaysAuth: true",
      "",
    ].join("\n");
    const out = ruled("packages/a/.yarnrc.yml", yml);
    expect(out).toEqual({
      text: [
        "# the project's registries",
        'npmRegistryServer: "https://registry.example"',
        "npmScopes:",
        "  corp:",
        "    npmRegistryServer: https://npm.corp.example",
        "    npmAlwaysAuth: true",
        "",
      ].join("\n"),
      removed: ["npmRegistryServer (user:password@ in a URL)", "npmAuthToken", "npmScopes.corp.npmAuthIdent"],
    });
    // Named any other way than as a block mapping's key (a flow mapping, an alias for the value): held back.
    expect(ruled(".yarnrc.yml", `npmScopes: {corp: {npmAuthToken: ${TOKEN}}}\n`)).toEqual({
      unreadable: true,
    });
    expect(ruled(".yarnrc.yml", `token: &t ${TOKEN}\nnpmAuthToken: *t\n`)).toEqual({ unreadable: true });
    // In a list, quoted, a comment naming one.
    expect(
      ruled(
        ".yarnrc.yml",
        `packageExtensions:\n  - "npmAuthIdent": "u:${TOKEN}"\n    other: 1\n# npmAuthToken: ${TOKEN}\n`,
      ),
    ).toEqual({
      text: "packageExtensions:\n    other: 1\n",
      removed: ["packageExtensions.npmAuthIdent", "a comment naming npmauthtoken"],
    });
  });

  it("B12 .pypirc: password (indented, continued) goes, URL userinfo goes; pip.conf's index URLs lose theirs", () => {
    const pypirc = [
      "[distutils]",
      "index-servers = pypi corp",
      "[pypi]",
      "  username = __token__",
      `  Password = ${TOKEN.slice(0, 6)}`,
      `    ${TOKEN.slice(6)}`,
      "[corp]",
      `repository: https://user:${TOKEN}@pypi.corp.example/`,
      `password:${TOKEN}`,
      "",
    ].join("\n");
    expect(ruled("tools/.pypirc", pypirc)).toEqual({
      text: "[distutils]\nindex-servers = pypi corp\n[pypi]\n  username = __token__\n[corp]\nrepository: https://pypi.corp.example/\n",
      removed: ["[pypi] password", "[corp] repository (user:password@ in a URL)", "[corp] password"],
    });
    const pip = [
      "[global]",
      `index-url = https://__token__:${TOKEN}@pypi.corp.example/simple`,
      "extra-index-url =",
      "    https://pypi.org/simple",
      `    https://${TOKEN}@other.example/simple`,
      "",
    ].join("\n");
    expect(ruled("tools/pip.conf", pip)).toEqual({
      text: "[global]\nindex-url = https://pypi.corp.example/simple\nextra-index-url =\n    https://pypi.org/simple\n    https://other.example/simple\n",
      removed: [
        "[global] index-url (user:password@ in a URL)",
        "[global] extra-index-url (user:password@ in a URL)",
      ],
    });
  });

  it("B12 .docker/config.json: each registry's auth in auths goes, URL userinfo in proxies too", () => {
    const config = {
      auths: {
        "ghcr.io": { auth: Buffer.from(`u:${TOKEN}`).toString("base64") },
        "registry.example": { identitytoken: TOKEN, email: "e@x" },
      },
      credHelpers: { "gcr.io": "gcloud" },
      proxies: { default: { httpProxy: `http://u:${TOKEN}@proxy:3128` } },
    };
    const out = ruled("infra/.docker/config.json", JSON.stringify(config));
    expect(out && "text" in out && JSON.parse(out.text!)).toEqual({
      auths: { "ghcr.io": {}, "registry.example": { email: "e@x" } },
      credHelpers: { "gcr.io": "gcloud" },
      proxies: { default: { httpProxy: "http://proxy:3128" } },
    });
    expect(out && "removed" in out && out.removed).toEqual([
      "auths.ghcr.io.auth",
      "auths.registry.example.identitytoken",
      "httpProxy (user:password@ in a URL)",
    ]);
    expect(ruled("infra/.docker/config.json", "{not json")).toEqual({ unreadable: true });
    expect(ruled("infra/.docker/config.json", "[".repeat(1 << 16))).toEqual({ unreadable: true });
  });

  it("B12 a file keeps its last newline when its last entry goes", () => {
    expect(ruled(".yarnrc.yml", `a: 1\nnpmAuthToken: ${TOKEN}\n`)).toEqual({
      text: "a: 1\n",
      removed: ["npmAuthToken"],
    });
    expect(ruled(".pypirc", `[pypi]\npassword = ${TOKEN}\n`)).toEqual({
      text: "[pypi]\n",
      removed: ["[pypi] password"],
    });
    expect(ruled(".npmrc", `a=1\n_authToken=${TOKEN}\n`)).toEqual({ text: "a=1\n", removed: ["_authToken"] });
  });

  it("B12 a file with no credentials is copied as it is (nothing removed)", () => {
    expect(ruled(".npmrc", "save-exact=true\n")).toEqual({ text: "save-exact=true\n", removed: [] });
    expect(ruled("pip.conf", "[global]\ntimeout = 60\n")).toEqual({
      text: "[global]\ntimeout = 60\n",
      removed: [],
    });
  });

  it("B12 planWorkspaceCopy holds back or strips them at nested paths, through links, recording names only", async () => {
    const dir = workspace();
    const files: Record<string, string> = {
      "packages/a/.npmrc": `//registry.npmjs.org/:_authToken=${TOKEN}\nsave-exact=true\n`,
      "ci/npm-config": `//registry.npmjs.org/:_authToken=${TOKEN}\n`,
      "tools/.pypirc": `[pypi]\npassword = ${TOKEN}\n`,
      "deploy/.netrc": `machine h login u password ${TOKEN}\n`,
      "infra/.docker/config.json": "{broken",
      "big/.npmrc": `${"#".repeat(MAX_STRIPPED_BYTES)}\n_authToken=${TOKEN}\n`,
      "src/app.js": "1\n",
    };
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.join(dir, path.dirname(rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), text);
    }
    fs.symlinkSync("ci/npm-config", path.join(dir, ".npmrc"));
    const copy = await planWorkspaceCopy(dir, {});
    expect(
      copy.entries
        .filter((e) => !e.st.isDirectory())
        .map((e) => e.rel)
        .sort(),
    ).toEqual([".npmrc", "ci/npm-config", "packages/a/.npmrc", "src/app.js", "tools/.pypirc"]);
    expect(Object.fromEntries(copy.credentialFiles.map((c) => [c.path, c.removed ?? c.reason]))).toEqual({
      "ci/npm-config": ["//registry.npmjs.org/:_authToken"],
      "packages/a/.npmrc": ["//registry.npmjs.org/:_authToken"],
      "tools/.pypirc": ["[pypi] password"],
      "deploy/.netrc": expect.stringMatching(/never copied in/),
      "infra/.docker/config.json": expect.stringMatching(/could not be read as one/),
      "big/.npmrc": expect.stringMatching(/over 1 MiB: held back unread/),
    });
    for (const entry of copy.entries) expect(entry.data?.toString() ?? "").not.toContain(TOKEN);
    expect(JSON.stringify(copy.credentialFiles)).not.toContain(TOKEN);
    expect(copy.files).toBe(4); // the link is no file
  });
});
