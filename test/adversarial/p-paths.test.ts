// RELIABILITY P (path escapes), end to end: the `agent-ci` CLI with --script against the real engine, one
// run per row, the shared invariants after each (host sentinel and workspace untouched, no container left,
// a valid record, no planted secret in any output). The tool-level matrix of every path against every tool
// is test/integration/tools-paths.test.ts; this file is the user's entry point and the invariants.
// The probes inside use find, not ls or stat: they run under gVisor too (AGENT_CI_RUNTIME=runsc), whose
// statx refuses what coreutils asks (docs/ENGINES.md, gVisor).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { describe, expect } from "vitest";
import { hashTree, useHarness, type RunResult, type ScriptCall } from "./harness.js";
import { rowTester, type Row } from "./rows.js";

const ROWS = [
  {
    id: "P1",
    what: "relative escapes: Read ../../etc/passwd, Edit ../x, Glob/Grep path ../..",
    alsoSee: [
      { file: "test/integration/tools-paths.test.ts", test: "refuses %s at validation, running nothing" },
    ],
  },
  {
    id: "P2",
    what: "absolute paths outside: /etc/shadow, /proc/*/environ, /run/secrets, docker.sock, in every mode",
  },
  { id: "P3", what: "prefix siblings: /workspace-evil/x, /workspace/../workspace2/x" },
  { id: "P4", what: "committed symlink leak -> /etc/passwd, Read/Edit/Write through it" },
  { id: "P5", what: "symlinked directory d -> / and a leaf symlink on Write" },
  {
    id: "P6",
    what: "symlink made by Bash during the run, then Read through it",
    alsoSee: [{ file: "test/integration/tools-paths.test.ts", test: "re-checks symlinks on every call" }],
  },
  { id: "P7", what: "symlink race: a background loop swaps a file and a symlink while Write/Edit run" },
  {
    id: "P8",
    what: "repo symlinks to host paths (~/.ssh key, /proc/self/environ) are copied as links, never dereferenced",
  },
  { id: "P9", what: "hard links: ln /etc/passwd x, and a hard link committed in the repo" },
  { id: "P10", what: "Grep path /, Glob ../**, a symlinked directory loop, a link to /" },
  {
    id: "P11",
    what: "strange path strings: empty, ., //a, NUL, newline, 5000 chars, lone surrogate, -rf, $(…)",
  },
  {
    id: "P12",
    what: "writes to .git/hooks, .git/config, .gitattributes, workflows, .agent-ci.json, .claude/settings.json, .mcp.json",
  },
  {
    id: "P13",
    what: "a patch with symlinks and files beneath them (l -> .., l/x) applies only inside the checkout",
  },
  { id: "P14", what: "Read of a FIFO, /dev/zero through a symlink, /dev/stdin: no hang" },
] as const satisfies readonly Row[];

const h = useHarness();
const { test, checkTable } = rowTester(ROWS);

const each = (...calls: ScriptCall[]) => calls.map((c) => [c]);
const read = (file_path: string): ScriptCall => ({ name: "Read", input: { file_path } });
const write = (file_path: string, content = "pwned\n"): ScriptCall => ({
  name: "Write",
  input: { file_path, content },
});
const edit = (file_path: string, old_string = "root", new_string = "toor"): ScriptCall => ({
  name: "Edit",
  input: { file_path, old_string, new_string },
});
const bash = (command: string): ScriptCall => ({ name: "Bash", input: { command } });
/** Plants a file outside the workspace from inside the container (a redirect there is denied in every mode). */
const plant = (file: string, content: string) =>
  bash(`python3 -c "open('${file}','w').write('${content}\\n')"`);

function expectOutside(run: RunResult, indexes: number[]) {
  for (const i of indexes) {
    const call = run.call(i);
    expect(call.isError, `call ${i} ${JSON.stringify(call.input)}`).toBe(true);
    expect(call.errorKind, `call ${i} ${JSON.stringify(call.input)}`).toBe("outside_workspace");
    // Stopped at validation: the permission stage was never asked, nothing ran in the container.
    expect(call.decision, `call ${i}`).toBeUndefined();
    expect(run.text(i)).toMatch(/outside \/workspace/);
  }
}

describe("P: path escapes through the CLI", () => {
  test("P1", "relative escapes are refused at validation, before anything runs", async () => {
    const ws = h.workspace({ "a.txt": "a\n", "src/b.txt": "b\n" });
    const run = await h.cli({
      workspace: ws,
      mode: "bypassPermissions",
      turns: each(
        read("../../etc/passwd"),
        edit("../x"),
        { name: "Glob", input: { pattern: "*", path: "../.." } },
        { name: "Grep", input: { pattern: "root", path: "../.." } },
        write("../../tmp/p1.txt"),
        read("src/../../etc/hostname"),
      ),
    });
    expect(run.report?.exitReason).toBe("completed");
    expectOutside(run, [0, 1, 2, 3, 4, 5]);
    expect(run.text(0)).toContain("resolves to /etc/passwd");
  });

  test(
    "P2",
    "absolute paths outside the workspace are refused in bypassPermissions and default mode alike",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n" });
      const targets = [
        "/etc/shadow",
        "/proc/self/environ",
        "/proc/1/environ",
        "/run/secrets/token",
        "/var/run/docker.sock",
        "/tmp/.agent-ci/baseline.git/config",
      ];
      for (const mode of ["bypassPermissions", "default"] as const) {
        const run = await h.cli({
          workspace: ws,
          mode,
          turns: each(...targets.map(read), write("/etc/cron.d/p2"), edit("/etc/passwd"), {
            name: "Grep",
            input: { pattern: "x", path: "/proc" },
          }),
        });
        expect(run.report?.exitReason).toBe("completed");
        expectOutside(
          run,
          targets.map((_, i) => i).concat([targets.length, targets.length + 1, targets.length + 2]),
        );
      }
    },
  );

  test("P3", "prefix siblings of /workspace are outside it", async () => {
    const ws = h.workspace({ "a.txt": "a\n" });
    const run = await h.cli({
      workspace: ws,
      mode: "bypassPermissions",
      turns: each(
        read("/workspace-evil/x"),
        write("/workspace-evil/x"),
        read("/workspace/../workspace2/x"),
        write("/workspace2/x"),
        read("/workspace/../workspace"),
        bash("find /workspace-evil /workspace2 -maxdepth 0 2>&1"),
      ),
    });
    expectOutside(run, [0, 1, 2, 3]);
    // `/workspace/../workspace` is the root itself: a directory, not an escape.
    expect(run.call(4).errorKind).not.toBe("outside_workspace");
    expect(run.text(5)).toMatch(
      /[‘']\/workspace-evil[’']: No such file[\s\S]*[‘']\/workspace2[’']: No such file/,
    );
  });

  test(
    "P4",
    "a committed symlink to /etc/passwd is resolved in the container and refused for Read, Edit and Write",
    async () => {
      const ws = h.workspace(
        {
          "a.txt": "a\n",
          leak: { symlink: "/etc/passwd" },
          "sub/rel-leak": { symlink: "../../../etc/hostname" },
        },
        { git: true },
      );
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: each(
          read("leak"),
          edit("leak"),
          write("leak"),
          read("/workspace/sub/rel-leak"),
          { name: "Grep", input: { pattern: "root", path: "leak" } },
          bash("readlink leak; git status --short"),
        ),
      });
      expectOutside(run, [0, 1, 2, 3, 4]);
      expect(run.text(0)).toMatch(/through a symlink/);
      // The link is still there and unchanged (nothing wrote through it).
      expect(run.text(5)).toBe("/etc/passwd");
      expect(run.report?.patch.empty).toBe(true);
    },
  );

  test("P5", "a symlinked directory to / and a leaf symlink are never written through", async () => {
    const ws = h.workspace({
      "a.txt": "a\n",
      d: { symlink: "/" },
      f: { symlink: "/tmp/p5-victim" },
      g: { symlink: "/tmp/p5-new" },
    });
    const run = await h.cli({
      workspace: ws,
      mode: "bypassPermissions",
      turns: [
        [plant("/tmp/p5-victim", "original")],
        ...each(
          write("d/etc/cron.d/p5"),
          write("d/tmp/p5-through-dir"),
          write("f"),
          write("g"),
          edit("f", "original", "pwned"),
          read("f"),
        ),
        [
          bash(
            "cat /tmp/p5-victim; find /tmp/p5-through-dir /tmp/p5-new /etc/cron.d/p5 -maxdepth 0 2>&1 | grep -c 'No such file'; readlink f g",
          ),
        ],
      ],
    });
    expectOutside(run, [1, 2, 3, 4, 5, 6]);
    expect(run.text(7)).toBe("original\n3\n/tmp/p5-victim\n/tmp/p5-new");
  });

  test("P6", "a symlink made by Bash is re-validated on the next call and refused", async () => {
    const ws = h.workspace({ "a.txt": "a\n" });
    const run = await h.cli({
      workspace: ws,
      mode: "bypassPermissions",
      turns: [
        [bash("ln -s /etc x && ln -s /tmp t && ln -s a.txt ok && echo made")],
        ...each(
          read("x/hostname"),
          read("/workspace/x/passwd"),
          write("t/p6.txt"),
          { name: "Glob", input: { pattern: "*", path: "x" } },
          read("ok"),
        ),
        [bash("find /tmp/p6.txt -maxdepth 0 2>&1")],
      ],
    });
    expect(run.text(0)).toBe("made");
    expectOutside(run, [1, 2, 3, 4]);
    // A link that stays inside is fine: the check is on the resolved path, not on "is a symlink".
    expect(run.call(5).isError).toBe(false);
    expect(run.text(6)).toMatch(/No such file/);
  });

  test("P7", "a symlink race during Write and Edit never writes outside the workspace", async () => {
    const ws = h.workspace({ "a.txt": "a\n" });
    const swap =
      "echo safe > f; while :; do ln -sfn /tmp/p7-victim f.l && mv -T f.l f; echo safe > f.r && mv -T f.r f; done";
    const attempts = Array.from({ length: 12 }, (_, i) =>
      i % 3 === 2 ? [edit("f", "safe", "PWNED")] : i % 3 === 0 ? [read("f")] : [write("f", "PWNED\n")],
    );
    const run = await h.cli({
      workspace: ws,
      mode: "bypassPermissions",
      turns: [
        [plant("/tmp/p7-victim", "original")],
        [{ name: "Bash", input: { command: swap, run_in_background: true } }],
        // The race is on once the loop has made f (waits for that, not for a fixed time).
        [bash("until [ -e f ] || [ -L f ]; do sleep 0.05; done; echo swapping")],
        ...attempts,
        [{ name: "KillShell", input: { shell_id: "bash1" } }],
        [bash("cat /tmp/p7-victim")],
      ],
    });
    expect(run.report?.exitReason).toBe("completed");
    expect(run.text(run.calls.length - 1)).toBe("original");
    // Every attempt either worked on the regular file in the workspace or was refused: none reached /tmp.
    // (gVisor, under --runtime runsc, answers some opens of the link being swapped with EINVAL: invalid_input.)
    for (const call of run.calls.slice(3, -2)) {
      if (call.isError)
        expect(call.errorKind).toMatch(
          /outside_workspace|not_read|modified_since_read|no_match|sandbox_error|not_found|invalid_input/,
        );
    }
  });

  test("P8", "symlinks in the repo to host paths stay links; no host byte enters the container", async () => {
    const ws = h.workspace(
      {
        "a.txt": "a\n",
        k: { symlink: path.join(h.sentinel, ".ssh/id_ed25519") },
        creds: { symlink: path.join(h.sentinel, ".git-credentials") },
        e: { symlink: "/proc/self/environ" },
        home: { symlink: os.homedir() },
      },
      { git: true },
    );
    const run = await h.cli({
      workspace: ws,
      mode: "bypassPermissions",
      turns: [
        ...each(read("k"), read("creds"), read("e"), {
          name: "Grep",
          input: { pattern: "PRIVATE|x-access-token", path: "home", output_mode: "content" },
        }),
        [
          bash(
            "readlink k; cat k creds 2>&1 | head -c 400; echo; find -L . -maxdepth 2 -name 'id_*' 2>/dev/null | wc -l",
          ),
        ],
      ],
    });
    expectOutside(run, [0, 1, 2, 3]);
    const probe = run.text(4);
    expect(probe).toContain(path.join(h.sentinel, ".ssh/id_ed25519"));
    expect(probe).toMatch(/No such file/);
    expect(probe).not.toMatch(/PRIVATE KEY|x-access-token/);
    // The planted key and credential are checked for in every output by the harness.
  });

  test(
    "P9",
    "hard links to outside files fail; a committed hard link stays a workspace-local file",
    async () => {
      const dir = h.tmp("agent-ci-ws-");
      fs.writeFileSync(path.join(dir, "a.txt"), "shared\n");
      fs.linkSync(path.join(dir, "a.txt"), path.join(dir, "b.txt"));
      const ws = h.workspace({}, { dir });
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: [
          [plant("/tmp/p9", "victim")],
          [bash("ln /etc/passwd x 2>&1; echo rc=$?; ln /tmp/p9 y 2>&1; echo rc=$?")],
          [read("a.txt")],
          [edit("a.txt", "shared", "changed")],
          [bash("cat b.txt; find a.txt -printf '%n\\n'")],
        ],
      });
      const probe = run.text(1);
      expect(probe).toMatch(/rc=1[\s\S]*rc=1/);
      expect(probe).toMatch(/Invalid cross-device link|Operation not permitted/);
      expect(run.text(4)).toBe("shared\n1");
      expect(run.report?.patch.files.map((f) => f.path)).toEqual(["a.txt"]);
      expect(run.patch).not.toContain("root:");
    },
  );

  test(
    "P10",
    "Grep and Glob stay in the workspace: no path /, no ../**, loops end, links out not followed",
    async () => {
      const ws = h.workspace({
        "a.txt": "needle\n",
        "src/b.txt": "needle\n",
        loop: { symlink: "." },
        up: { symlink: ".." },
        root: { symlink: "/" },
      });
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: each(
          { name: "Grep", input: { pattern: "root", path: "/" } },
          { name: "Glob", input: { pattern: "**/*", path: "/" } },
          { name: "Glob", input: { pattern: "../**" } },
          { name: "Glob", input: { pattern: "**/*" } },
          { name: "Grep", input: { pattern: "needle|root:x", output_mode: "content" } },
          { name: "Grep", input: { pattern: "root:x", path: "root/etc" } },
        ),
      });
      expectOutside(run, [0, 1, 5]);
      for (const i of [2, 3, 4]) {
        expect(run.text(i), `call ${i}`).not.toMatch(/^\/|etc\/passwd|root:x/m);
      }
      expect(run.text(3)).toContain("src/b.txt");
      expect(run.text(4)).toMatch(/^a\.txt:1:needle$/m);
    },
  );

  test("P11", "strange path strings get a validation error or correct handling, never shell", async () => {
    const ws = h.workspace({ "a.txt": "a\n", "-rf": "dash\n" });
    // [path, what Read answers, what Grep answers]: an error kind, or a pattern the result must match. A path
    // that cannot be a path is invalid_input; one that leads out of the workspace is outside_workspace.
    const cases: Array<[string, string | RegExp, string | RegExp]> = [
      ["", "invalid_input", "invalid_input"],
      [".", "is_directory", /Found 2 files/],
      ["//a", "outside_workspace", "outside_workspace"],
      ["a.txt/", /^1\ta$/m, /Found 1 file\na\.txt/],
      ["a\u0000b", "invalid_input", "invalid_input"],
      ["a\nb", "not_found", "not_found"],
      ["x".repeat(5000), "invalid_input", "invalid_input"],
      ["\ud800bad", "not_found", "not_found"],
      ["-rf", /^1\tdash$/m, /Found 1 file\n-rf/],
      ["$(touch /tmp/p11-pwned)", "not_found", "not_found"],
      ['"$(touch /tmp/p11-pwned)"', "not_found", "not_found"],
      ["`touch /tmp/p11-pwned`", "not_found", "not_found"],
      ["a.txt\u202e", "not_found", "not_found"],
    ];
    const run = await h.cli({
      workspace: ws,
      mode: "bypassPermissions",
      turns: [
        ...each(
          ...cases.map(([p]) => read(p)),
          ...cases.map(([p]) => ({ name: "Grep", input: { pattern: "a", path: p } })),
        ),
        [bash("find /tmp/p11-pwned* /workspace/*pwned* -maxdepth 0 2>&1 | grep -c 'No such file'")],
      ],
    });
    expect(run.report?.exitReason).toBe("completed");
    const n = cases.length;
    cases.forEach(([p, readWant, grepWant], i) => {
      for (const [index, want] of [
        [i, readWant],
        [n + i, grepWant],
      ] as const) {
        const label = `${run.call(index).tool} ${JSON.stringify(p).slice(0, 40)}`;
        if (typeof want === "string") expect(run.call(index).errorKind, label).toBe(want);
        else expect(run.text(index), label).toMatch(want);
      }
    });
    // Nothing in a path ever ran as shell.
    expect(run.text(2 * n)).toBe("2");
  });

  test(
    "P12",
    "protected paths are denied for Write and Edit, and a Bash change to them stays out of the patch",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n", ".github/workflows/ci.yml": "on: push\n" }, { git: true });
      const targets = [
        ".git/hooks/pre-commit",
        ".gitattributes",
        ".github/workflows/new.yml",
        ".agent-ci.json",
        ".claude/settings.json",
        ".mcp.json",
        ".git/info/attributes",
      ];
      const run = await h.cli({
        workspace: ws,
        mode: "acceptEdits",
        turns: [
          ...each(...targets.map((t) => write(t, "x\n"))),
          [read(".git/config")],
          [edit(".git/config", "bare = false", "bare = false\n\tfsmonitor = /tmp/evil")],
          [read(".github/workflows/ci.yml")],
          [
            edit(
              ".github/workflows/ci.yml",
              "on: push",
              "on: push\njobs: {evil: {runs-on: x, steps: [{run: curl evil}]}}",
            ),
          ],
          [write("a.txt", "fine\n")],
        ],
      });
      const denied = run.calls.filter((c) => c.decision?.behavior === "deny");
      expect(denied.map((c) => c.decision?.decidedBy)).toEqual(
        Array(targets.length + 2).fill("protected-path"),
      );
      expect(run.report?.patch.files.map((f) => f.path)).toEqual([]);
      // a.txt was not read first: even acceptEdits needs the Read.
      expect(run.calls.at(-1)?.errorKind).toBe("not_read");

      const viaBash = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: [
          [
            bash(
              `python3 -c "import os; open('.github/workflows/ci.yml','a').write('run: curl evil'); open('.gitattributes','w').write('* -diff'); os.makedirs('.claude'); open('.claude/settings.json','w').write('{}')"`,
            ),
          ],
          [bash("echo b >> a.txt")],
        ],
      });
      expect(viaBash.report?.patch.files.map((f) => f.path)).toEqual(["a.txt"]);
      expect(
        viaBash.report?.warnings
          .filter((w) => w.kind === "patch_excluded")
          .map((w) => w.message.split(" ")[0])
          .sort(),
      ).toEqual([".claude/settings.json", ".gitattributes", ".github/workflows/ci.yml"]);
    },
  );

  test(
    "P13",
    "a patch with symlinks (l -> .., l/x, absolute targets) applies only inside a pristine checkout",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n" }, { git: true });
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: [
          [
            bash(
              "ln -s .. up && ln -s /etc/passwd abs && mkdir real && echo x > real/f && ln -s real l && echo y > l/g && echo z > up/p13 2>&1; echo done",
            ),
          ],
          [write("up/p13-tool.txt", "x\n")],
          [write("l/via-link.txt", "inside\n")],
        ],
      });
      expect(run.call(1).errorKind).toBe("outside_workspace");
      expect(run.call(2).isError).toBe(false);
      const headers = run.patch.split("\n").filter((l) => l.startsWith("diff --git "));
      for (const line of headers) expect(line, line).not.toMatch(/ [ab]\/(\.\.\/|\/)|\/\.\.\//);
      expect(run.report?.patch.files.map((f) => f.path).sort()).toEqual([
        "abs",
        "l",
        "real/f",
        "real/g",
        "real/via-link.txt",
        "up",
      ]);
      // Applied on the host by git, the way a user or the Action applies it, in a copy next to a watched directory.
      const parent = h.tmp("agent-ci-apply-");
      const copy = path.join(parent, "checkout");
      fs.cpSync(ws, copy, { recursive: true, verbatimSymlinks: true });
      const before = hashTree(parent);
      fs.writeFileSync(path.join(parent, "p.diff"), run.patch);
      execFileSync("git", ["apply", "--binary", path.join(parent, "p.diff")], { cwd: copy, stdio: "pipe" });
      fs.rmSync(path.join(parent, "p.diff"));
      expect(fs.readlinkSync(path.join(copy, "up"))).toBe("..");
      expect(fs.readlinkSync(path.join(copy, "abs"))).toBe("/etc/passwd");
      expect(fs.readFileSync(path.join(copy, "real/via-link.txt"), "utf8")).toBe("inside\n");
      expect(fs.readdirSync(parent)).toEqual(["checkout"]);
      expect(hashTree(parent)).not.toBe(before);
      expect(fs.existsSync(path.join(parent, "p13"))).toBe(false);
    },
  );

  test("P14", "Read of a FIFO or a device answers at once: not a regular file, or outside", async () => {
    const ws = h.workspace({ "a.txt": "a\n", z: { symlink: "/dev/zero" } });
    const run = await h.cli({
      workspace: ws,
      mode: "bypassPermissions",
      turns: [
        [bash("mkfifo p && mkfifo q && echo ok")],
        ...each(
          read("p"),
          read("z"),
          read("/dev/zero"),
          read("/dev/stdin"),
          { name: "Grep", input: { pattern: "x", path: "q" } },
          edit("p", "a", "b"),
        ),
      ],
      timeoutMs: 60_000,
    });
    expect(run.text(1)).toMatch(/not a regular file/);
    expectOutside(run, [2, 3, 4]);
    expect(run.call(5).isError || run.text(5).includes("No files found")).toBe(true);
    expect(run.call(6).isError).toBe(true);
    // No call hung until a timeout or the run's end cut it off: each was answered for what it is.
    for (const call of run.calls) expect(["timed_out", "interrupted"]).not.toContain(call.errorKind);
  });

  checkTable();
});
