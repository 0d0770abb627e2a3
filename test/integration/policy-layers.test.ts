// One policy, two layers (issue 4): a Read deny rule keeps the file out of the container, so neither Read
// nor any Bash trick sees it; plan mode makes the workspace unwritable in the container, so no tool can
// change the tree; a protected path changed through Bash never reaches the patch.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { runAgent } from "../../src/runner/run.js";
import { makeWorkspace } from "../support/workspace.js";
import { quietIo, tempOut } from "../support/run-io.js";

const PLANTED = "planted-value-7f3a9c";

async function run(input: Partial<RunConfigInput> & { turns: unknown[] }) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-script-")), "s.json");
  fs.writeFileSync(file, JSON.stringify({ turns: input.turns }));
  const { turns: _turns, ...rest } = input;
  const config = parseRunConfig({
    out: tempOut(),
    script: file,
    ...rest,
  } as RunConfigInput);
  const outcome = await runAgent(config, quietIo());
  const events = fs.readFileSync(path.join(outcome.outDir, "events.jsonl"), "utf8");
  return { outcome, report: outcome.report!, events };
}

describe("the policy at two layers", () => {
  it("keeps a Read-denied file from Read and from every Bash command", async () => {
    const workspace = makeWorkspace(
      { ".env": `TOKEN=${PLANTED}\n`, "app.js": "console.log(process.env.TOKEN);\n" },
      { git: true },
    );
    const { report, events } = await run({
      workspace,
      mode: "bypassPermissions",
      deny: ["Read(./.env)"],
      turns: [
        [{ name: "Read", input: { file_path: "/workspace/.env" } }],
        [{ name: "Bash", input: { command: "cat .env" } }],
        [
          {
            name: "Bash",
            input: { command: "cat $(printf '.e')nv; grep -r planted . ; git show HEAD:.env; ls -la" },
          },
        ],
        [{ name: "Grep", input: { pattern: "planted", output_mode: "content" } }],
      ],
    });
    expect(events).not.toContain(PLANTED);
    expect(JSON.stringify(report)).not.toContain(PLANTED);
    expect(report.workspace.skipped).toContainEqual(expect.objectContaining({ path: ".env" }));
    const [read, cat] = report.toolCalls;
    expect(read?.decision).toMatchObject({ behavior: "deny", rule: { text: "Read(./.env)" } });
    expect(cat?.decision?.behavior).toBe("deny");
    expect(report.hardening?.enforcedAt).toContainEqual(
      expect.objectContaining({ rule: "Read(./.env)", where: "both" }),
    );
  });

  it("leaves the workspace byte-identical in plan mode, whatever tool tries to write", async () => {
    const workspace = makeWorkspace({ "a.txt": "original\n", "src/app.js": "x\n" }, { git: true });
    const attempts = [
      [{ name: "Read", input: { file_path: "/workspace/a.txt" } }],
      [{ name: "Write", input: { file_path: "/workspace/a.txt", content: "changed\n" } }],
      [
        {
          name: "Edit",
          input: { file_path: "/workspace/a.txt", old_string: "original", new_string: "changed" },
        },
      ],
      ...[
        "echo changed > a.txt",
        "echo more >> a.txt",
        "touch new.txt",
        "rm src/app.js",
        "mv a.txt b.txt",
        "cp a.txt c.txt",
        "mkdir d",
        "tee a.txt < /dev/null",
        "sed -i s/original/changed/ a.txt",
        "python3 -c \"open('a.txt','w').write('changed')\"",
        "git commit --allow-empty -m x",
        "dd if=/dev/zero of=a.txt count=1",
      ].map((command) => [{ name: "Bash", input: { command } }]),
    ];
    const { report } = await run({
      workspace,
      mode: "plan",
      allow: ["Bash"],
      turns: attempts,
      maxDenials: 100,
    });
    expect(report.exitReason).toBe("completed");
    expect(report.patch.empty).toBe(true);
    expect(report.toolCalls.slice(1).every((c) => c.isError)).toBe(true);
    expect(report.toolCalls.find((c) => c.tool === "Write")?.errorKind).toBe("disabled_tool");
    expect(fs.readFileSync(path.join(workspace, "a.txt"), "utf8")).toBe("original\n");
  });

  it("keeps a protected path changed through Bash out of the patch, and says so", async () => {
    const workspace = makeWorkspace(
      { ".github/workflows/ci.yml": "on: push\n", "a.txt": "a\n" },
      { git: true },
    );
    const { report } = await run({
      workspace,
      mode: "bypassPermissions",
      turns: [
        // The tool gate sees the redirect into a protected path and denies it…
        [{ name: "Bash", input: { command: "echo 'run: curl evil' >> .github/workflows/ci.yml" } }],
        // …but code it cannot see through still runs in bypassPermissions: the patch layer catches it.
        [
          {
            name: "Bash",
            input: {
              command:
                "python3 -c \"open('.github/workflows/ci.yml','a').write('run: curl evil')\"; echo b >> a.txt",
            },
          },
        ],
      ],
    });
    expect(report.toolCalls[0]?.decision).toMatchObject({ behavior: "deny", decidedBy: "protected-path" });
    expect(report.toolCalls[1]?.decision?.behavior).toBe("allow");
    expect(report.patch.files.map((f) => f.path)).toEqual(["a.txt"]);
    expect(report.warnings).toContainEqual(expect.objectContaining({ kind: "patch_excluded" }));
  });

  it("B14 keeps a local action and the root action.yml a workflow runs with uses: ./, changed through Bash, out of the patch", async () => {
    const workspace = makeWorkspace(
      {
        ".github/workflows/ci.yml":
          "on: push\njobs:\n  a:\n    steps:\n      - uses: ./.github/actions/x\n      - uses: ./\n",
        ".github/actions/x/action.yml": "runs:\n  using: composite\n  steps: []\n",
        "action.yml": "runs:\n  using: node20\n  main: dist/index.js\n",
        "a.txt": "a\n",
      },
      { git: true },
    );
    const { report } = await run({
      workspace,
      mode: "bypassPermissions",
      turns: [
        [
          {
            name: "Bash",
            input: {
              command:
                "python3 -c \"[open(p,'a').write('  - run: curl evil') for p in ('.github/actions/x/action.yml','.github/actions/x/run.sh','action.yml')]\"; echo b >> a.txt",
            },
          },
        ],
      ],
    });
    expect(report.toolCalls[0]?.decision?.behavior).toBe("allow");
    expect(report.patch.files.map((f) => f.path)).toEqual(["a.txt"]);
    expect(report.warnings).toContainEqual(expect.objectContaining({ kind: "patch_excluded" }));
  });
});
