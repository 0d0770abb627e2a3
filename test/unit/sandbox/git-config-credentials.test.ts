// Git config files lose every credential git would use before the copy-in (B12). Each case is a config file
// written in git's own grammar (`git help config`, "CONFIGURATION FILE": sections, quoted subsections with
// escapes, the legacy `[section.subsection]`, continuation lines, comments, valueless keys, includes); what
// the copy would hold is then read back by git itself (`git config --file <f> --list`).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  cleanGitConfigs,
  type GitConfigEntry,
  isGitConfigPath,
  parseGitConfigList,
  readGitConfig,
  withoutGitCredentials,
  writeGitConfig,
} from "../../../src/sandbox/copy/git-config-credentials.js";

/** Fake secrets, assembled at run time. */
const TOKEN = ["tok", "Zq9".repeat(6)].join("-");
const B64 = Buffer.from(`x-access-token:${TOKEN}`).toString("base64");

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-gitcfg-"));

/** git's own listing of a config file, one `key=value` (or `key`) per entry. */
function gitList(file: string): string[] {
  const out = execFileSync("git", ["config", "--file", file, "--no-includes", "--list", "--null"], {
    encoding: "latin1",
    env: { ...process.env, GIT_DIR: "/dev/null" },
    maxBuffer: 1 << 30,
  });
  return out
    .split("\0")
    .filter(Boolean)
    .map((rec) => rec.replace("\n", "="));
}

/** What the copy would hold of `text`: the cleaned file as git lists it, and the names of what went. */
async function cleaned(
  text: string | Buffer,
): Promise<{ listed: string[]; removed: string[]; written: string }> {
  const dir = tmp();
  fs.writeFileSync(path.join(dir, "config"), text);
  const clean = withoutGitCredentials(await readGitConfig(path.join(dir, "config")));
  const written = writeGitConfig(clean.entries);
  fs.writeFileSync(path.join(dir, "out"), Buffer.from(written, "latin1"));
  return { listed: gitList(path.join(dir, "out")), removed: clean.removed, written };
}

const CASES: Array<{ what: string; config: string; listed: string[]; removed: string[] }> = [
  {
    what: "actions/checkout's extraheader in a quoted subsection",
    config: `[core]\n\tbare = false\n[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${B64}\n`,
    listed: ["core.bare=false"],
    removed: ["http.https://github.com/.extraheader"],
  },
  {
    what: "section and key names in any case, and extraheader in any section",
    config: `[HTTP]\n\tExtraHeader = X-Token: ${TOKEN}\n[Foo "bar"]\n\tEXTRAHEADER = X: ${TOKEN}\n\tother = kept\n`,
    listed: ["foo.bar.other=kept"],
    removed: ["http.extraheader", "foo.bar.extraheader"],
  },
  {
    what: "a push URL with user:token@ (the URL kept without it), in the legacy [section.subsection] form",
    config: `[Remote.Origin]\n\turl = https://github.com/o/r.git\n\tpushurl = https://user:${TOKEN}@github.com/o/r.git\n`,
    listed: [
      "remote.origin.url=https://github.com/o/r.git",
      "remote.origin.pushurl=https://github.com/o/r.git",
    ],
    removed: ["remote.origin.pushurl (user:password@ in a URL)"],
  },
  {
    what: "a token as the user name of an https URL; an ssh login and an scp-like address kept",
    config: `[remote "a"]\n\turl = https://${TOKEN}@github.com/o/r\n[remote "b"]\n\turl = ssh://git@github.com/o/r\n[remote "c"]\n\turl = git@github.com:o/r.git\n`,
    listed: [
      "remote.a.url=https://github.com/o/r",
      "remote.b.url=ssh://git@github.com/o/r",
      "remote.c.url=git@github.com:o/r.git",
    ],
    removed: ["remote.a.url (user:password@ in a URL)"],
  },
  {
    what: "the token in a url.<base> section's name (insteadOf and pushInsteadOf go whole)",
    config: `[url "https://x-access-token:${TOKEN}@github.com/"]\n\tinsteadOf = https://github.com/\n\tpushInsteadOf = git@github.com:\n[url "https://mirror.example/"]\n\tinsteadOf = https://github.com/\n`,
    listed: ["url.https://mirror.example/.insteadof=https://github.com/"],
    removed: ["url.https://***@github.com/.insteadof", "url.https://***@github.com/.pushinsteadof"],
  },
  {
    what: "a url.<base>.insteadOf whose value holds the token",
    config: `[url "https://github.com/"]\n\tinsteadOf = https://oauth2:${TOKEN}@github.com/\n`,
    listed: ["url.https://github.com/.insteadof=https://github.com/"],
    removed: ["url.https://github.com/.insteadof (user:password@ in a URL)"],
  },
  {
    what: "every credential.* entry: helpers, per-URL usernames and helpers",
    config: `[credential]\n\thelper = store\n\thelper =\n\tuseHttpPath = true\n[credential "https://github.com"]\n\tusername = x\n\thelper = "!f() { echo password=${TOKEN}; }; f"\n[user]\n\tname = n\n`,
    listed: ["user.name=n"],
    removed: [
      "credential.helper",
      "credential.helper",
      "credential.usehttppath",
      "credential.https://github.com.username",
      "credential.https://github.com.helper",
    ],
  },
  {
    what: "an http.<url> section whose URL carries userinfo goes whole",
    config: `[http "https://user:${TOKEN}@git.example/"]\n\tsslVerify = false\n[http]\n\tproxy = http://proxyuser:${TOKEN}@proxy.example:3128\n`,
    listed: ["http.proxy=http://proxy.example:3128"],
    removed: ["http.https://***@git.example/.sslverify", "http.proxy (user:password@ in a URL)"],
  },
  {
    what: "mail passwords: sendemail.smtpPass (and per identity) and imap.pass",
    config: `[sendemail]\n\tsmtpServer = smtp.example\n\tsmtpPass = ${TOKEN}\n[sendemail "work"]\n\tsmtppass = ${TOKEN}\n[imap]\n\tpass = ${TOKEN}\n\tfolder = Drafts\n`,
    listed: ["sendemail.smtpserver=smtp.example", "imap.folder=Drafts"],
    removed: ["sendemail.smtppass", "sendemail.work.smtppass", "imap.pass"],
  },
  {
    what: "a URL split over a continuation line is judged as git joins it",
    config: `[remote "origin"]\n\tpushurl = https://user:${TOKEN.slice(0, 5)}\\\n${TOKEN.slice(5)}@github.com/o/r.git\n`,
    listed: ["remote.origin.pushurl=https://github.com/o/r.git"],
    removed: ["remote.origin.pushurl (user:password@ in a URL)"],
  },
  {
    what: "comments (# and ;, whole-line and after a value) go; quoted # and ; stay in the value",
    config: `# a comment https://u:${TOKEN}@x/\n; another\n[alias]\n\tx = "!echo \\"a;b\\" # not a comment" ; a comment\n\ty = plain # comment\n[http]\n\textraHeader = ${TOKEN}\n`,
    listed: ['alias.x=!echo "a;b" # not a comment', "alias.y=plain"],
    removed: ["http.extraheader"],
  },
  {
    what: "escapes in a quoted subsection and in values, valueless and empty keys, repeated keys, in order",
    config: `[remote "we\\"ird\\\\name"]\n\turl = https://u:${TOKEN}@h/r\n\tfetch = +refs/heads/a:refs/remotes/a\n\tfetch = +refs/heads/b:refs/remotes/b\n[core]\n\tbare\n\tempty =\n\ttabbed = "a\\tb\\nc\\\\d"\n\tspaced = "  lead and trail  "\n`,
    listed: [
      'remote.we"ird\\name.url=https://h/r',
      'remote.we"ird\\name.fetch=+refs/heads/a:refs/remotes/a',
      'remote.we"ird\\name.fetch=+refs/heads/b:refs/remotes/b',
      "core.bare",
      "core.empty=",
      "core.tabbed=a\tb\nc\\d",
      "core.spaced=  lead and trail  ",
    ],
    removed: ['remote.we"ird\\name.url (user:password@ in a URL)'],
  },
  {
    what: "include and includeIf directives go (the condition's host path is not recorded)",
    config: `[include]\n\tpath = ../shared.cfg\n[includeIf "gitdir:/home/runner/work/r/r/.git"]\n\tpath = /home/runner/work/_temp/git-credentials-1.config\n[core]\n\tbare = false\n`,
    listed: ["core.bare=false"],
    removed: ["include.path", "includeif.<condition>.path"],
  },
  {
    what: "CRLF line ends and a subsection holding dots and spaces",
    config: `[branch "release/v1.2 x"]\r\n\tremote = origin\r\n[http "https://github.com/"]\r\n\textraheader = AUTHORIZATION: basic ${B64}\r\n`,
    listed: ["branch.release/v1.2 x.remote=origin"],
    removed: ["http.https://github.com/.extraheader"],
  },
];

describe("a git config copied in, as git reads it back", () => {
  it.each(CASES)("B12 $what", async ({ config, listed, removed }) => {
    const out = await cleaned(config);
    expect(out.listed).toEqual(listed);
    expect(out.removed).toEqual(removed);
    expect(out.written).not.toContain(TOKEN.slice(4));
    expect(out.written).not.toContain(B64);
    expect(out.removed.join("\n")).not.toContain(TOKEN.slice(4));
  });

  it("B12 a config with nothing to remove is left as it was (no entries removed)", async () => {
    const config = `# kept as written\n[core]\n\tbare = false\n[remote "origin"]\n\turl = https://github.com/o/r.git\n`;
    const out = await cleaned(config);
    expect(out.removed).toEqual([]);
  });

  it("writes back whatever git read: every entry, in order, byte for byte", async () => {
    // Entries git reads, rich in what needs quoting or escaping; written and read back by git.
    const chars = ['"', "\\", "\t", "\n", "\b", "#", ";", " ", "=", "[", "]", ".", "é", "\x7f", "\r", "x"];
    const entries: GitConfigEntry[] = [];
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    const word = (n: number) => Array.from({ length: n }, () => chars[next() % chars.length]).join("");
    for (let i = 0; i < 200; i++) {
      const subsection = i % 3 === 0 ? undefined : word(next() % 8).replace(/[\n\r]/g, "_");
      entries.push({
        section: `s${i % 5}`,
        subsection,
        name: `k${i % 4}`,
        value: i % 11 === 0 ? undefined : word(next() % 12),
      });
    }
    const dir = tmp();
    fs.writeFileSync(path.join(dir, "c"), Buffer.from(writeGitConfig(entries), "latin1"));
    const back = await readGitConfig(path.join(dir, "c"));
    expect(back).toEqual(entries);
  });

  it("parses git's listing in one pass: records far from the next newline, a megabyte of NULs", () => {
    expect(parseGitConfigList(`${"a.b\0".repeat(1 << 20)}\n`)).toHaveLength(1 << 20);
    expect(parseGitConfigList("\0".repeat(1 << 22))).toEqual([]);
  });

  it("parses git's --null listing: key\\nvalue\\0, key\\0, dots in the subsection only", () => {
    expect(parseGitConfigList("a.b\nv\0a.x.y.z.k\n\0core.bare\0top\0")).toEqual([
      { section: "a", subsection: undefined, name: "b", value: "v" },
      { section: "a", subsection: "x.y.z", name: "k", value: "" },
      { section: "core", subsection: undefined, name: "bare", value: undefined },
      { name: "top", value: undefined },
    ]);
  });

  it("a file git cannot read is refused, never guessed at", async () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, "config"), `[http\n\textraheader = ${TOKEN}\n`);
    await expect(readGitConfig(path.join(dir, "config"))).rejects.toThrow(/bad config/);
  });

  it("is linear in the file's size: a megabyte value, a megabyte of one character, 50,000 entries", async () => {
    const big = [
      `[remote "o"]\n\turl = https://u:${TOKEN}@h/${"a".repeat(1 << 20)}\n`,
      `[a]\n\tk = ${":".repeat(1 << 20)}\n\tj = ${"/:".repeat(1 << 19)}@\n`,
      `[http]\n${"\textraheader = x\n".repeat(50_000)}`,
      `[b]\n\tk = "${"\\\\".repeat(1 << 19)}"\n`,
    ];
    for (const config of big) {
      const out = await cleaned(config);
      expect(out.written).not.toContain(TOKEN);
    }
  });
});

describe("which files are git config files", () => {
  /** A repository made by git: its own `.git`, a submodule's git directory, a linked worktree's. */
  function repository(): string {
    const dir = tmp();
    const git = (cwd: string, ...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, stdio: "pipe" });
    git(dir, "init", "-q", "-b", "main");
    fs.writeFileSync(path.join(dir, "a.txt"), "a\n");
    git(dir, "add", ".");
    git(dir, "commit", "-qm", "a");
    git(dir, "branch", "config"); // refs/heads/config: a file named config that is no config
    git(dir, "worktree", "add", "-q", path.join(tmp(), "wt"));
    return dir;
  }

  it("B12 config and config.worktree of every git directory; a branch named config and a .gitconfig are not one", () => {
    const dir = repository();
    const wt = fs.readdirSync(path.join(dir, ".git/worktrees"))[0]!;
    expect(isGitConfigPath(dir, ".git/config")).toBe(true);
    expect(isGitConfigPath(dir, ".git/config.worktree")).toBe(true);
    expect(isGitConfigPath(dir, `.git/worktrees/${wt}/config.worktree`)).toBe(true);
    expect(isGitConfigPath(dir, "dotfiles/.gitconfig")).toBe(false);
    expect(isGitConfigPath(dir, ".git/refs/heads/config")).toBe(false);
    expect(isGitConfigPath(dir, "src/config")).toBe(false);
  });

  it("B12 follows includes into the workspace (and through links), holds back what git cannot read", async () => {
    const dir = repository();
    fs.appendFileSync(
      path.join(dir, ".git/config"),
      `[include]\n\tpath = ../ci/git.cfg\n\tpath = /nowhere/outside.cfg\n[includeIf "gitdir:${dir}/.git"]\n\tpath = ../ci/link.cfg\n`,
    );
    fs.mkdirSync(path.join(dir, "ci"));
    fs.writeFileSync(path.join(dir, "ci/git.cfg"), `[include]\n\tpath = deeper.cfg\n[user]\n\tname = n\n`);
    fs.writeFileSync(path.join(dir, "ci/deeper.cfg"), `[http]\n\textraheader = X: ${TOKEN}\n`);
    fs.writeFileSync(path.join(dir, "ci/real.cfg"), `[credential]\n\thelper = store\n`);
    fs.symlinkSync("real.cfg", path.join(dir, "ci/link.cfg"));
    fs.writeFileSync(
      path.join(dir, "ci/unrelated.cfg"),
      `[http]\n\textraheader = kept: not a config of this repo\n`,
    );
    fs.writeFileSync(path.join(dir, ".git/config.worktree"), `[http\n`);
    const files = new Map<string, "file" | "symlink">([
      [".git/config", "file"],
      ["ci/git.cfg", "file"],
      ["ci/deeper.cfg", "file"],
      ["ci/real.cfg", "file"],
      ["ci/link.cfg", "symlink"],
      ["ci/unrelated.cfg", "file"],
      [".git/config.worktree", "file"],
      ["a.txt", "file"],
    ]);
    const outcomes = await cleanGitConfigs(dir, (rel) => files.get(rel), [...files.keys()]);
    const byPath = Object.fromEntries(
      outcomes.map((o) => [o.path, "removed" in o ? o.removed : "held back"]),
    );
    expect(byPath).toEqual({
      ".git/config": ["include.path", "include.path", "includeif.<condition>.path"],
      ".git/config.worktree": "held back",
      "ci/git.cfg": ["include.path"],
      "ci/real.cfg": ["credential.helper"],
      "ci/deeper.cfg": ["http.extraheader"],
    });
  });
});
