// Git's credentials never reach the sandbox, wherever a checkout left them (RELIABILITY B12): the repository's
// `.git/config`, its `config.worktree`, a submodule's `.git/modules/<name>/config` (actions/checkout writes its
// extraheader into every submodule's), a linked worktree's config; a push URL with `user:token@`, a token in
// a `url.<base>` section's name, a credential helper. Nor do the package managers' credential files at any
// depth. The submodule is checked out by real git from a local bare repository; what the sandbox holds is
// read back inside the container by git's own parser and Python's configparser, and grepped for the
// tokens' bytes across the whole copied tree. git still works on the repository there, and the patch is
// the agent's change only.
import { execFileSync, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { scriptFile } from "../support/action-harness.js";
import { tempOut } from "../support/run-io.js";
import { gitIn, makeWorkspace, writeFiles } from "../support/workspace.js";

const CLI = path.resolve("bin/agent-ci.js");
const RUN_TIMEOUT_MS = 180_000;

/**
 * Every fake secret starts with MARKER (12 characters, so that its base64 is whole inside the base64 of
 * `x-access-token:<secret>`, whose prefix is 15 bytes): the sandbox greps for the marker and its base64, and
 * the test's own commands never hold a secret. Assembled at run time.
 */
const MARKER = ["gitcreds", "Qv7x"].join("");
const secret = () => `${MARKER}${crypto.randomBytes(18).toString("base64url")}`;
const MARKER_B64 = Buffer.from(MARKER).toString("base64");
const SECRETS = {
  pushToken: secret(),
  insteadOfToken: secret(),
  helperToken: secret(),
  headerToken: secret(),
  npm: secret(),
  yarn: secret(),
  pypi: secret(),
  pip: secret(),
  netrc: secret(),
  store: secret(),
  docker: secret(),
};
const BASIC = Buffer.from(`x-access-token:${SECRETS.headerToken}`).toString("base64");

/** The credentials a workflow's checkout and later steps leave in one repository's config. */
function addCredentials(git: (...args: string[]) => Buffer): void {
  git("config", "http.https://github.com/.extraheader", `AUTHORIZATION: basic ${BASIC}`);
  git("config", "remote.origin.pushurl", `https://user:${SECRETS.pushToken}@github.com/o/r.git`);
  git(
    "config",
    `url.https://x-access-token:${SECRETS.insteadOfToken}@github.com/.insteadOf`,
    "https://github.com/",
  );
  git("config", "credential.helper", `!f() { echo username=x; echo password=${SECRETS.helperToken}; }; f`);
}

/** A repository with a submodule checked out by git from a local bare repository, and a linked worktree. */
function checkout(): string {
  const source = makeWorkspace({ "lib.js": "module.exports = 1;\n" }, { git: true });
  const bare = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-bare-")), "lib.git");
  execFileSync("git", ["clone", "-q", "--bare", source, bare]);
  const ws = makeWorkspace(
    { "src/app.js": "console.log('app');\n", ".gitignore": "node_modules/\n" },
    { git: true },
  );
  const git = gitIn(ws);
  git("remote", "add", "origin", "https://github.com/o/r.git");
  git("-c", "protocol.file.allow=always", "submodule", "add", "-q", bare, "libs/lib");
  git("commit", "-qm", "add the submodule");
  git("-c", "protocol.file.allow=always", "submodule", "update", "--init", "-q");
  addCredentials(git);
  const sub = gitIn(path.join(ws, "libs/lib"));
  sub("remote", "set-url", "origin", "https://github.com/o/lib.git");
  addCredentials(sub);
  // Per-worktree configs: the main worktree's .git/config.worktree and a linked worktree's.
  git("config", "extensions.worktreeConfig", "true");
  git("config", "--worktree", "http.https://github.com/.extraheader", `AUTHORIZATION: basic ${BASIC}`);
  const linked = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-wt-")), "wt");
  git("worktree", "add", "-q", linked);
  gitIn(linked)("config", "--worktree", "credential.helper", `store --file ${linked}/creds`);
  gitIn(linked)(
    "config",
    "--worktree",
    "remote.origin.pushurl",
    `https://${SECRETS.pushToken}@github.com/o/r.git`,
  );
  // The package managers' and tools' credential files a workflow's steps left, untracked, at nested paths.
  writeFiles(ws, {
    "packages/a/package.json": '{ "name": "a", "version": "1.0.0" }\n',
    "packages/a/.npmrc": `registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=${SECRETS.npm}\n`,
    "packages/a/.yarnrc.yml": `npmScopes:\n  corp:\n    npmRegistryServer: https://npm.corp.example\n    npmAuthToken: ${SECRETS.yarn}\n`,
    "tools/.pypirc": `[pypi]\nusername = __token__\npassword = ${SECRETS.pypi}\n`,
    "tools/pip.conf": `[global]\nindex-url = https://__token__:${SECRETS.pip}@pypi.corp.example/simple\n`,
    "deploy/.netrc": `machine github.com login x password ${SECRETS.netrc}\n`,
    "ci/.git-credentials": `https://x:${SECRETS.store}@github.com\n`,
    "infra/.docker/config.json": JSON.stringify({
      auths: { "ghcr.io": { auth: Buffer.from(`u:${SECRETS.docker}`).toString("base64") } },
    }),
  });
  return ws;
}

const CONFIGS = [".git/config", ".git/config.worktree", ".git/modules/libs/lib/config"];

const SCRIPT = [
  // git's own reading of the repository's and the submodule's configuration (every scope, includes followed),
  // each entry with the file it came from.
  [{ name: "Bash", input: { command: "git config --show-origin --list" } }],
  [{ name: "Bash", input: { command: "git --git-dir=.git/modules/libs/lib config --show-origin --list" } }],
  // Each config file copied in, by git's parser.
  [
    {
      name: "Bash",
      input: {
        command: `for f in ${CONFIGS.join(" ")} .git/worktrees/*/config.worktree; do echo "== $f"; git config --file "$f" --list; done`,
      },
    },
  ],
  // The token bytes (and the header's base64) anywhere in the copied tree, .git included.
  [
    {
      name: "Bash",
      input: { command: `grep -rlF -e ${MARKER} -e ${MARKER_B64} /workspace; echo "grep exit $?"` },
    },
  ],
  // The package managers' files as their own parsers read them, and which are there.
  [
    {
      name: "Bash",
      input: {
        command:
          "python3 -c \"import configparser as c\nfor f in ('tools/.pypirc', 'tools/pip.conf'):\n p = c.ConfigParser(); p.read(f); print(f, {s: dict(p[s]) for s in p.sections()})\"; " +
          "ls -A deploy ci infra/.docker packages/a; cat packages/a/.npmrc packages/a/.yarnrc.yml",
      },
    },
  ],
  // git still works on the repository: status, diff, and the change is the run's patch.
  [
    {
      name: "Bash",
      input: {
        command:
          "echo \"console.log('more');\" >> src/app.js && git status --porcelain --untracked-files=no && git diff --stat",
      },
    },
  ],
];

describe("git's credentials and the package managers' credential files, through the CLI", () => {
  it(
    "B12 no credential from a submodule's, a worktree's or the repository's git config, or from nested credential files, reaches the sandbox; git still works there",
    () => {
      const ws = checkout();
      const out = tempOut();
      const res = spawnSync(
        "node",
        [
          CLI,
          "run",
          "--workspace",
          ws,
          "--script",
          scriptFile(SCRIPT),
          "--mode",
          "bypassPermissions",
          "--network",
          "none",
          "--out",
          out,
        ],
        {
          encoding: "utf8",
          env: { ...process.env, ANTHROPIC_API_KEY: "" },
          timeout: RUN_TIMEOUT_MS - 10_000,
        },
      );
      expect(res.status, res.stderr).toBe(0);
      const reportText = fs.readFileSync(path.join(out, "report.json"), "utf8");
      const report = parseReport(reportText);
      const [listed, listedSub, files, grep, tools, status] = report.toolCalls.map((c) => c.resultPreview);

      // git's reading in the sandbox: the URLs kept without their userinfo, no credential key at all.
      expect(listed).toContain("file:.git/config\tremote.origin.url=https://github.com/o/r.git");
      expect(listed).toContain("file:.git/config\tremote.origin.pushurl=https://github.com/o/r.git");
      expect(listed).toContain("file:.git/config\tsubmodule.libs/lib.url=");
      expect(listedSub).toContain(
        "file:.git/modules/libs/lib/config\tremote.origin.url=https://github.com/o/lib.git",
      );
      expect(listedSub).toContain(
        "file:.git/modules/libs/lib/config\tremote.origin.pushurl=https://github.com/o/r.git",
      );
      for (const preview of [listed, listedSub, files]) {
        expect(preview).not.toMatch(/extraheader|credential\.|insteadof|@github\.com/i);
        expect(preview).not.toContain(MARKER);
        expect(preview!.length).toBeLessThan(2000); // whole, not cut
      }
      const byFile = Object.fromEntries(
        files!
          .split("== ")
          .filter(Boolean)
          .map((part) => [part.slice(0, part.indexOf("\n")), part.slice(part.indexOf("\n") + 1)]),
      );
      expect(Object.keys(byFile)).toEqual([...CONFIGS, ".git/worktrees/wt/config.worktree"]);
      expect(byFile[".git/config.worktree"]).toBe("");
      expect(byFile[".git/modules/libs/lib/config"]).toContain(
        "remote.origin.url=https://github.com/o/lib.git\n",
      );
      expect(byFile[".git/modules/libs/lib/config"]).toContain("core.worktree=../../../../libs/lib\n");
      expect(byFile[".git/worktrees/wt/config.worktree"]).toBe(
        "remote.origin.pushurl=https://github.com/o/r.git",
      );
      expect(grep).toBe("grep exit 1");

      expect(tools).toContain("tools/.pypirc {'pypi': {'username': '__token__'}}");
      expect(tools).toContain("tools/pip.conf {'global': {'index-url': 'https://pypi.corp.example/simple'}}");
      expect(tools).not.toMatch(/\.netrc|\.git-credentials|_authToken|npmAuthToken/);
      expect(tools).toContain("config.json");
      expect(tools).toContain("registry=https://registry.npmjs.org/");

      expect(status).toBe(" M src/app.js\n src/app.js | 1 +\n 1 file changed, 1 insertion(+)");
      expect(report.patch?.files.map((f) => f.path)).toEqual(["src/app.js"]);

      // The record names each file and what went, never a value.
      const held = Object.fromEntries(
        (report.workspace.credentialFilesHeldBack ?? []).map((h) => [h.path, h.removed ?? h.reason]),
      );
      expect(Object.keys(held).sort()).toEqual(
        [
          ".git/config",
          ".git/config.worktree",
          ".git/modules/libs/lib/config",
          ".git/worktrees/wt/config.worktree",
          "ci/.git-credentials",
          "deploy/.netrc",
          "infra/.docker/config.json",
          "packages/a/.npmrc",
          "packages/a/.yarnrc.yml",
          "tools/.pypirc",
          "tools/pip.conf",
        ].sort(),
      );
      const repositoryConfig = [
        "http.https://github.com/.extraheader",
        "remote.origin.pushurl (user:password@ in a URL)",
        "url.https://***@github.com/.insteadof",
        "credential.helper",
      ];
      expect([...held[".git/config"]!].sort()).toEqual([...repositoryConfig].sort());
      expect([...held[".git/modules/libs/lib/config"]!].sort()).toEqual([...repositoryConfig].sort());
      expect(held[".git/config.worktree"]).toEqual(["http.https://github.com/.extraheader"]);
      // git worktree add copies the worktree config it was run from (the extraheader) into the new one.
      expect(held[".git/worktrees/wt/config.worktree"]).toEqual([
        "http.https://github.com/.extraheader",
        "credential.helper",
        "remote.origin.pushurl (user:password@ in a URL)",
      ]);
      expect(held["packages/a/.npmrc"]).toEqual(["//registry.npmjs.org/:_authToken"]);
      expect(held["packages/a/.yarnrc.yml"]).toEqual(["npmScopes.corp.npmAuthToken"]);
      expect(held["tools/.pypirc"]).toEqual(["[pypi] password"]);
      expect(held["tools/pip.conf"]).toEqual(["[global] index-url (user:password@ in a URL)"]);
      expect(held["infra/.docker/config.json"]).toEqual(["auths.ghcr.io.auth"]);
      expect(held["deploy/.netrc"]).toMatch(/never copied in/);
      expect(held["ci/.git-credentials"]).toMatch(/never copied in/);
      expect(res.stderr).toMatch(
        /credentials removed before the copy-in: \.git\/modules\/libs\/lib\/config \(/,
      );
      expect(res.stderr).toMatch(/held back from the sandbox: deploy\/\.netrc/);

      // No secret in anything the run wrote or printed.
      const written = fs.readdirSync(out, { recursive: true, encoding: "utf8" });
      for (const file of written.filter((f) => fs.statSync(path.join(out, f)).isFile())) {
        const text = fs.readFileSync(path.join(out, file), "latin1");
        for (const value of [...Object.values(SECRETS), BASIC]) expect(text, file).not.toContain(value);
      }
      for (const value of [...Object.values(SECRETS), BASIC])
        expect(res.stdout + res.stderr).not.toContain(value);
    },
    RUN_TIMEOUT_MS,
  );
});
