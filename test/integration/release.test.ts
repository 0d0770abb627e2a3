// The release rehearsed: scripts/release.sh --dry-run (what release.yml runs when dispatched with dry_run), on
// a copy of the repository committed as a release would be, against a real registry on loopback (Debian's
// docker-registry). The images reach that registry, `npm publish --dry-run` lists exactly the package's
// files, and nothing anyone else sees changes: no tag, no commit, images.json as it was.
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalRegistry } from "../support/local-registry.js";
import { expectedPackageFiles, packedFiles } from "../support/package-files.js";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();
}

/** The repository's files as they are now, committed in a fresh repository, with dist/ built and committed. */
function releaseCopy(): string {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-release-"));
  const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
    encoding: "utf8",
  })
    .split("\0")
    .filter((f) => f && fs.existsSync(path.join(ROOT, f)));
  for (const file of listed) {
    fs.mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, file), path.join(copy, file));
  }
  fs.symlinkSync(fs.realpathSync(path.join(ROOT, "node_modules")), path.join(copy, "node_modules"));
  execFileSync("npm", ["run", "build", "--silent"], { cwd: copy, stdio: "pipe" });
  git(copy, "init", "-q", "-b", "main");
  git(copy, "add", "-A");
  git(copy, "commit", "-qm", "release");
  return copy;
}

async function release(
  cwd: string,
  args: string[],
): Promise<{ code: number; stderr: string; stdout: string }> {
  try {
    const { stdout, stderr } = await run("bash", ["scripts/release.sh", ...args], {
      cwd,
      maxBuffer: 64 * 1024 * 1024,
      // No registry to reach: a dry run must not need one.
      env: {
        ...process.env,
        npm_config_registry: "http://127.0.0.1:9/",
        npm_config_offline: "true",
        AGENT_CI_PUBLISH_PLATFORMS: "",
      },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe.sequential("the release, dry run", () => {
  const registry = new LocalRegistry();
  let copy: string;
  beforeAll(async () => {
    await registry.start();
    copy = releaseCopy();
  }, 300_000);
  afterAll(async () => {
    // The tags publish-images.sh gave the local images for this registry (the images stay: they are shared).
    const tags = execFileSync("docker", ["images", "--format", "{{.Repository}}:{{.Tag}}"], {
      encoding: "utf8",
    })
      .split("\n")
      .filter((tag) => registry.address && tag.startsWith(`${registry.address}/`));
    if (tags.length) execFileSync("docker", ["rmi", ...tags], { stdio: "ignore" });
    await registry.stop();
    if (copy) fs.rmSync(copy, { recursive: true, force: true });
  });

  it("refuses a tag that does not name package.json's version, before doing anything", async () => {
    const result = await release(copy, ["--dry-run", "--registry", registry.address, "--tag", "v999.0.0"]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/the tag v999\.0\.0 does not name package\.json's version/);
    expect(result.stderr).not.toMatch(/building dist/);
  });

  it(
    "pushes the images to the local registry, lists exactly the package's files, and moves no tag",
    { timeout: 600_000 },
    async () => {
      const head = git(copy, "rev-parse", "HEAD");
      const record = fs.readFileSync(path.join(copy, "images.json"), "utf8");
      const version = (
        JSON.parse(fs.readFileSync(path.join(copy, "package.json"), "utf8")) as { version: string }
      ).version;
      const result = await release(copy, ["--dry-run", "--registry", registry.address]);
      expect(result.code, result.stderr.slice(-4000)).toBe(0);

      // The images, in the registry the dry run was given.
      const catalog = (await (await fetch(`http://${registry.address}/v2/_catalog`)).json()) as {
        repositories: string[];
      };
      expect(catalog.repositories.sort()).toEqual(["agent-ci-sandbox", "agent-ci-toolbelt"]);
      expect(result.stderr).toContain(`${registry.address}/agent-ci-sandbox@sha256:`);

      // npm publish --dry-run: the package it would publish holds exactly the expected files.
      const listed = [
        ...`${result.stdout}\n${result.stderr}`.matchAll(/^npm notice [\d.]+[kMG]?B (\S+)$/gm),
      ].map((m) => m[1] ?? "");
      expect(listed.sort()).toEqual(expectedPackageFiles(copy));
      expect(packedFiles(copy)).toEqual(expectedPackageFiles(copy));
      expect(result.stderr).toMatch(/\(dry-run\)/);

      // Nothing moved: the tag only announced, no commit, the record untouched.
      const major = `v${version.split(".")[0]}`;
      expect(result.stderr).toContain(`would run: git tag -f ${major} ${head}`);
      expect(result.stderr).toContain(`would run: git push --force origin refs/tags/${major}`);
      expect(git(copy, "tag", "-l")).toBe("");
      expect(git(copy, "rev-parse", "HEAD")).toBe(head);
      expect(git(copy, "status", "--porcelain")).toBe("");
      expect(fs.readFileSync(path.join(copy, "images.json"), "utf8")).toBe(record);
    },
  );
});
