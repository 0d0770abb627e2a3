// What `npx agent-ci` installs: the packed tarball (as published), installed into an empty folder with no
// registry (the bundle carries every library, so the package has no dependencies), and the example run from
// there. dist/ is built by `npm test`'s setup; the pack step does not rebuild it.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { expectedPackageFiles, packedFiles } from "../support/package-files.js";

/** CONTRIBUTING.md quotes the measured size; this is the ceiling the package must stay under. */
const MAX_INSTALLED_BYTES = 15 * 1024 * 1024;

function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}

describe("the published package", () => {
  it("packs exactly the files it should", () => {
    expect(fs.existsSync("dist/cli.js"), "dist/cli.js is missing: run `npm run build`").toBe(true);
    expect(packedFiles()).toEqual(expectedPackageFiles());
  });

  it("installs small with no dependencies and runs the example from there", { timeout: 300_000 }, () => {
    const built = fs.existsSync("dist/cli.js");
    expect(built, "dist/cli.js is missing: run `npm run build` (npm test does it)").toBe(true);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-pack-"));
    const packed = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", tmp], {
      encoding: "utf8",
    }).trim();
    const tarball = path.join(tmp, packed.split("\n").at(-1)!);

    const project = path.join(tmp, "project");
    fs.mkdirSync(project);
    fs.writeFileSync(
      path.join(project, "package.json"),
      JSON.stringify({ name: "user-project", private: true }),
    );
    execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--loglevel=error", tarball], {
      cwd: project,
      stdio: "pipe",
    });
    const installed = fs
      .readdirSync(path.join(project, "node_modules"))
      .filter((name) => !name.startsWith("."));
    expect(installed).toEqual(["agent-ci"]);
    expect(treeBytes(path.join(project, "node_modules"))).toBeLessThan(MAX_INSTALLED_BYTES);
    // What the package carries: its license and the bundled libraries' licenses; no sources or tests.
    const pkg = path.join(project, "node_modules/agent-ci");
    for (const file of ["LICENSE", "dist/THIRD_PARTY_NOTICES", "dist/cli.js", "README.md"])
      expect(fs.existsSync(path.join(pkg, file)), `${file} is not in the package`).toBe(true);
    for (const folder of ["src", "test", "bench", "docs"])
      expect(fs.existsSync(path.join(pkg, folder)), `${folder}/ is in the package`).toBe(false);

    const example = path.join(project, "example");
    fs.cpSync(path.join(project, "node_modules/agent-ci/examples/buggy-calc"), example, { recursive: true });
    const bin = path.join(project, "node_modules/.bin/agent-ci");
    const run = spawnSync(bin, ["run", "--script", "fix.script.json", "--mode", "acceptEdits"], {
      cwd: example,
      encoding: "utf8",
      env: { ...process.env, ANTHROPIC_API_KEY: "" },
      timeout: 240_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const outParent = path.join(example, "agent-ci-out");
    // The default output folder ignores itself, so `git add -A` in the user's repository leaves it out.
    expect(fs.readFileSync(path.join(outParent, ".gitignore"), "utf8")).toMatch(/^\*$/m);
    const [runDir] = fs.readdirSync(outParent).filter((name) => name !== ".gitignore");
    expect(fs.readFileSync(path.join(outParent, runDir!, "patch.diff"), "utf8")).toContain("src/calc.js");
    // report.html's script went into the bundle as text: the installed package has no esbuild to make it.
    const html = fs.readFileSync(path.join(outParent, runDir!, "report.html"), "utf8");
    expect(html).toContain('document.documentElement.setAttribute("data-ready", "true")');
  });
});
