// A real Go module replayed through the CLI in a Go image that has no Node.js, ripgrep or git: go-cmp
// (Google's comparison library, stdlib-only, with its own tests), taken from Debian's
// golang-github-google-go-cmp-dev in the image (no Go proxy is reachable here). A bug is injected into
// cmpopts.EquateEmpty and committed; a scripted agent runs the module's tests (they fail), finds and fixes
// the bug, and runs them again (they pass); --verify applies the patch to a pristine checkout in a fresh
// container and runs the tests there; the patch also applies with the host's git.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { LABEL_RUN } from "../../src/sandbox/engine/engine.js";
import { fixtureImageTag } from "../support/fixture-images.js";
import { applyToCopy } from "../support/workspace.js";
import { tempOut } from "../support/run-io.js";

const docker = new Docker();
const CLI = path.resolve("bin/agent-ci.js");
const MODULE_DIR = "/usr/share/gocode/src/github.com/google/go-cmp";
const FIXED = "(vx.Len() == 0 && vy.Len() == 0)";
const BUGGY = "(vx.Len() == 0 || vy.Len() == 0)";

/** The module's sources as the image's Debian package ships them, untarred into a fresh directory. */
async function extractModule(image: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-gocmp-"));
  const container = await docker.createContainer({
    Image: image,
    Cmd: ["true"],
    Labels: { "agent-ci.test": "go-replay" },
  });
  try {
    const archive = await container.getArchive({ path: MODULE_DIR });
    const tar = spawn("tar", ["-x", "-C", dir, "--strip-components=1"], {
      stdio: ["pipe", "ignore", "inherit"],
    });
    archive.pipe(tar.stdin);
    const code = await new Promise<number | null>((resolve) => tar.on("exit", resolve));
    expect(code).toBe(0);
  } finally {
    await container.remove({ force: true });
  }
  return dir;
}

function git(dir: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd: dir,
    encoding: "utf8",
  });
}

describe("replay: go-cmp in a Go image", () => {
  it(
    "the agent fixes an injected bug, go test passes in the sandbox and on a pristine checkout with the patch",
    { timeout: 900_000 },
    async () => {
      const image = fixtureImageTag("go");
      const repo = await extractModule(image);
      expect(fs.readFileSync(path.join(repo, "go.mod"), "utf8")).toContain("module github.com/google/go-cmp");
      git(repo, "init", "-q", "-b", "main");
      git(repo, "add", "-A");
      git(repo, "commit", "-qm", "go-cmp as Debian ships it");
      const equate = path.join(repo, "cmp/cmpopts/equate.go");
      const source = fs.readFileSync(equate, "utf8");
      expect(source).toContain(FIXED);
      fs.writeFileSync(equate, source.replace(FIXED, BUGGY));
      git(repo, "commit", "-qam", "EquateEmpty: one empty side is enough (the injected bug)");

      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-script-")), "script.json");
      const turns = [
        [{ name: "Bash", input: { command: "go test ./... 2>&1 | tail -n 20", timeout: 600_000 } }],
        [
          {
            name: "Grep",
            input: { pattern: "Len\\(\\) == 0", output_mode: "content", "-n": true, glob: "*.go" },
          },
        ],
        [{ name: "Read", input: { file_path: "/workspace/cmp/cmpopts/equate.go", offset: 20, limit: 30 } }],
        [
          {
            name: "Edit",
            input: { file_path: "/workspace/cmp/cmpopts/equate.go", old_string: BUGGY, new_string: FIXED },
          },
        ],
        [{ name: "Bash", input: { command: "go test ./...", timeout: 600_000 } }],
      ];
      fs.writeFileSync(file, JSON.stringify({ turns, final: "EquateEmpty needs both sides empty; fixed." }));
      const out = tempOut();
      const args = [
        "run",
        "--workspace",
        repo,
        "--image",
        image,
        "--script",
        file,
        "--mode",
        "bypassPermissions",
        "--out",
        out,
        "--verify",
        "go test ./...",
      ];
      const res = spawnSync("node", [CLI, ...args], {
        encoding: "utf8",
        env: { ...process.env, ANTHROPIC_API_KEY: "" },
        timeout: 900_000,
      });
      expect(res.status, `${res.stdout}\n${res.stderr}`).toBe(0);
      const report = parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8"));
      const calls = report.toolCalls;
      expect(calls.map((c) => c.tool)).toEqual(["Bash", "Grep", "Read", "Edit", "Bash"]);
      expect(calls[0]?.resultPreview).toMatch(/^FAIL\s+github\.com\/google\/go-cmp\/cmp\/cmpopts/m);
      expect(calls[1]?.resultPreview).toContain("cmp/cmpopts/equate.go");
      expect(calls[4]?.resultPreview).toMatch(/^ok\s+github\.com\/google\/go-cmp\/cmp\/cmpopts/m);
      expect(calls[4]?.resultPreview).not.toMatch(/^FAIL/m);
      expect(report.verify).toMatchObject({ applied: true, exitCode: 0 });
      expect(report.patch.files.map((f) => f.path)).toEqual(["cmp/cmpopts/equate.go"]);
      const copy = applyToCopy(repo, fs.readFileSync(path.join(out, "patch.diff")));
      expect(fs.readFileSync(path.join(copy, "cmp/cmpopts/equate.go"), "utf8")).toContain(FIXED);
      const left = await docker.listContainers({
        all: true,
        filters: { label: [`${LABEL_RUN}=${report.runId}`] },
      });
      expect(left).toEqual([]);
    },
  );
});
