// Any Linux image runs the agent's tools: three images without Node.js, ripgrep or git (Debian's Go, Python
// alone, and FROM scratch with nothing but a static busybox as /bin/sh), and the busybox image with a /tmp
// that is not world-writable (made by mkdir, a symlink, or another user's). In each, a scripted run uses every
// tool through agent-ci's toolbelt, runs the project's own tests with the image's toolchain, and produces a
// patch that applies to a pristine copy.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { parseRunConfig, type RunConfigInput } from "../../src/runner/config.js";
import { runAgent } from "../../src/runner/run.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import {
  type FixtureImage,
  fixtureImageTag,
  FOREIGN_ARCHITECTURE,
  foreignImage,
} from "../support/fixture-images.js";
import { applyToCopy, type FileSpec, makeWorkspace } from "../support/workspace.js";
import { quietIo, tempOut } from "../support/run-io.js";

const docker = new Docker();

interface Project {
  files: Record<string, FileSpec>;
  /** The source file with the bug, and the fix. */
  source: string;
  bug: string;
  fix: string;
  /** The project's own test command, and what it prints when the tests pass. */
  test: string;
  passes: RegExp;
  /** A glob and a Grep pattern that find the source. */
  glob: string;
  grep: string;
}

/** A project of shell scripts: the busybox image's, and the arm64 image's (Debian's base for arm64). */
const SHELL_PROJECT: Project = {
  files: {
    "calc.sh": "#!/bin/sh\naverage() { echo $(( ($1 + $2 + $3) / 2 )); }\n",
    "test.sh": '#!/bin/sh\n. ./calc.sh\n[ "$(average 1 2 3)" = 2 ] && echo PASS || { echo FAIL; exit 1; }\n',
  },
  source: "calc.sh",
  bug: "/ 2 ))",
  fix: "/ 3 ))",
  test: "/bin/sh test.sh",
  passes: /^PASS$/m,
  glob: "**/*.sh",
  grep: "average\\(\\)",
};

type ImageCase = FixtureImage | typeof FOREIGN_ARCHITECTURE;
const imageFor = (name: ImageCase): string =>
  name === FOREIGN_ARCHITECTURE ? foreignImage() : fixtureImageTag(name);

const PROJECTS: Record<ImageCase, Project> = {
  go: {
    files: {
      "go.mod": "module example.com/calc\n\ngo 1.19\n",
      "calc.go":
        "package calc\n\n// Average of the values.\nfunc Average(values []float64) float64 {\n\tsum := 0.0\n\tfor _, v := range values {\n\t\tsum += v\n\t}\n\treturn sum / float64(len(values)-1)\n}\n",
      "calc_test.go":
        'package calc\n\nimport "testing"\n\nfunc TestAverage(t *testing.T) {\n\tif got := Average([]float64{1, 2, 3}); got != 2 {\n\t\tt.Fatalf("Average = %v, want 2", got)\n\t}\n}\n',
    },
    source: "calc.go",
    bug: "float64(len(values)-1)",
    fix: "float64(len(values))",
    test: "go test ./...",
    passes: /^ok\s+example\.com\/calc/m,
    glob: "**/*.go",
    grep: "func Average",
  },
  python: {
    files: {
      ".gitignore": "__pycache__/\n",
      "calc.py": "def average(values):\n    return sum(values) / (len(values) - 1)\n",
      "test_calc.py":
        "import unittest\n\nfrom calc import average\n\n\nclass TestAverage(unittest.TestCase):\n    def test_average(self):\n        self.assertEqual(average([1, 2, 3]), 2)\n\n\nif __name__ == '__main__':\n    unittest.main()\n",
    },
    source: "calc.py",
    bug: "(len(values) - 1)",
    fix: "len(values)",
    test: "python3 -m unittest",
    passes: /^OK$/m,
    glob: "**/*.py",
    grep: "def average",
  },
  busybox: SHELL_PROJECT,
  "tmp-755": SHELL_PROJECT,
  "tmp-symlink": SHELL_PROJECT,
  "tmp-owned": SHELL_PROJECT,
  [FOREIGN_ARCHITECTURE]: SHELL_PROJECT,
};
/** The busybox image, and the same with a /tmp that is not world-writable (755, a symlink, another user's). */
const BUSYBOX_IMAGES: readonly ImageCase[] = ["busybox", "tmp-755", "tmp-symlink", "tmp-owned"];

function scriptFor(p: Project): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-script-")), "script.json");
  const ws = (rel: string) => `/workspace/${rel}`;
  const turns = [
    [
      {
        name: "Bash",
        input: {
          command: `for t in bash git rg node; do command -v $t; done; uname -m; ${p.test}; echo "exit $?"`,
        },
      },
    ],
    [{ name: "Glob", input: { pattern: p.glob } }],
    [
      { name: "Grep", input: { pattern: p.grep } },
      { name: "Grep", input: { pattern: p.grep, output_mode: "content", "-n": true } },
      { name: "Grep", input: { pattern: p.grep, output_mode: "count" } },
    ],
    [{ name: "Read", input: { file_path: ws(p.source) } }],
    [{ name: "Edit", input: { file_path: ws(p.source), old_string: p.bug, new_string: p.fix } }],
    [{ name: "Write", input: { file_path: ws("NOTES.md"), content: "Fixed the average.\n" } }],
    [{ name: "Bash", input: { command: `${p.test} && echo background-passed`, run_in_background: true } }],
    [{ name: "Bash", input: { command: `${p.test}`, timeout: 300_000 } }],
    [{ name: "Bash", input: { command: "git status --short" } }],
    [{ name: "BashOutput", input: { bash_id: "bash1" } }],
  ];
  fs.writeFileSync(file, JSON.stringify({ turns, final: "Fixed." }));
  return file;
}

const UNAME: Record<string, string> = { amd64: "x86_64", arm64: "aarch64" };

describe.each(["go", "python", ...BUSYBOX_IMAGES, FOREIGN_ARCHITECTURE] as const)(
  "a run in the %s image (no node, rg or git in it)",
  (name) => {
    it(
      "uses every tool through agent-ci's toolbelt, runs the project's tests, and makes a patch that applies",
      { timeout: 600_000 },
      async () => {
        if (name === FOREIGN_ARCHITECTURE && process.env.AGENT_CI_FOREIGN_SETUP_ERROR)
          throw new Error(process.env.AGENT_CI_FOREIGN_SETUP_ERROR);
        const project = PROJECTS[name];
        const workspace = makeWorkspace(project.files, { git: true });
        const out = tempOut();
        const config = parseRunConfig({
          workspace,
          out,
          image: imageFor(name),
          mode: "bypassPermissions",
          script: scriptFor(project),
        } as RunConfigInput);
        const logs: string[] = [];
        const outcome = await runAgent(config, quietIo({ stderr: (l) => logs.push(l) }));
        expect(outcome.exitReason, logs.join("\n")).toBe("completed");
        const report = parseReport(fs.readFileSync(path.join(outcome.outDir, "report.json"), "utf8"));
        const calls = report.toolCalls;
        expect(calls.map((c) => c.tool)).toEqual([
          "Bash",
          "Glob",
          "Grep",
          "Grep",
          "Grep",
          "Read",
          "Edit",
          "Write",
          "Bash",
          "Bash",
          "Bash",
          "BashOutput",
        ]);
        for (const call of calls) expect(call.isError, `${call.tool}: ${call.resultPreview}`).toBeFalsy();
        // The image lacks them: the Bash tool found agent-ci's own, after the image's PATH.
        expect(calls[0]?.resultPreview).toMatch(/^\/opt\/agent-ci\/bin\/git$/m);
        expect(calls[0]?.resultPreview).toMatch(/^\/opt\/agent-ci\/bin\/rg$/m);
        expect(calls[0]?.resultPreview).toMatch(/^exit 1$/m);
        // The arm64 image runs under emulation, with a toolbelt built for arm64; the others as the engine is.
        const engineArchitecture = (await docker.version()).Arch;
        const architecture = name === FOREIGN_ARCHITECTURE ? FOREIGN_ARCHITECTURE : engineArchitecture;
        expect(calls[0]?.resultPreview).toMatch(new RegExp(`^${UNAME[architecture]}$`, "m"));
        expect(report.image).toMatchObject({ architecture, emulated: architecture !== engineArchitecture });
        const tools = Object.fromEntries((report.image?.tools ?? []).map((t) => [t.name, t.from]));
        expect(tools).toMatchObject({ git: "agent-ci", rg: "agent-ci", node: "agent-ci" });
        // Debian's images have their own bash, and the Bash tool uses it; the busybox image has none.
        expect(tools.bash).toBe(BUSYBOX_IMAGES.includes(name) ? "agent-ci" : "image");
        if (name === "go") expect(tools.go).toBe("image");
        if (name === "python") expect(tools.python3).toBe("image");
        expect(calls[1]?.resultPreview).toContain(project.source);
        expect(calls[2]?.resultPreview).toContain(project.source);
        expect(calls[3]?.resultPreview).toMatch(/:\d+:/);
        expect(calls[4]?.resultPreview).toContain(":1");
        // The tests fail before the fix, and pass after it in the sandbox, in the foreground and the background.
        expect(calls[9]?.resultPreview).toMatch(project.passes);
        expect(calls[10]?.resultPreview).toMatch(new RegExp(`M ${project.source}`));
        expect(calls[11]?.resultPreview).toMatch(/background-passed|running/);
        const patch = fs.readFileSync(outcome.patchPath);
        expect(report.patch.files.map((f) => f.path).sort()).toEqual(["NOTES.md", project.source].sort());
        const copy = applyToCopy(workspace, patch);
        expect(fs.readFileSync(path.join(copy, project.source), "utf8")).toContain(project.fix);
        const left = await docker.listContainers({
          all: true,
          filters: { label: [`${LABEL_RUN}=${outcome.runId}`] },
        });
        expect(left).toEqual([]);
      },
    );
  },
);

describe.each(["tmp-755", "tmp-symlink", "tmp-owned"] as const)(
  "agent-ci run --image of the %s image, through the CLI",
  (name) => {
    it("gives the agent's commands a /tmp they can write", { timeout: 180_000 }, () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-tmp-image-"));
      const script = path.join(dir, "script.json");
      const command = "mktemp && ls -ld /tmp/ | cut -c1-10";
      fs.writeFileSync(script, JSON.stringify({ turns: [[{ name: "Bash", input: { command } }]] }));
      const out = path.join(dir, "out");
      const res = spawnSync(
        "node",
        [
          path.resolve("bin/agent-ci.js"),
          "run",
          ...["--workspace", makeWorkspace({ "a.txt": "a\n" })],
          ...["--image", fixtureImageTag(name), "--script", script, "--out", out],
          ...["--mode", "bypassPermissions"],
        ],
        { encoding: "utf8", env: { ...process.env, ANTHROPIC_API_KEY: "" }, timeout: 170_000 },
      );
      expect(res.status, res.stderr).toBe(0);
      const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
      expect(report.toolCalls[0]?.isError).toBeFalsy();
      expect(report.toolCalls[0]?.resultPreview).toMatch(/^\/tmp\/tmp\.\w+\ndrwxrwxrwt\n/);
    });
  },
);
