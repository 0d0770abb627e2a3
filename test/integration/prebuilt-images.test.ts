// agent-ci's own images pulled by digest instead of built: a real registry on loopback (Debian's
// docker-registry), the release script publishing to it, and a second engine that starts with nothing,
// on which a run's first tool call is answered with nothing built there. And the other way: a pull that
// fails falls back to a local build, saying why in one line.
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import {
  type BuildRecipe,
  DEFAULT_BASE_IMAGE,
  ensureBuilt,
  imageExists,
  recipeHash,
  sandboxRecipe,
} from "../../src/sandbox/image/image.js";
import {
  PrebuiltImages,
  PrebuiltRecord,
  readPrebuiltRecord,
  staleImages,
} from "../../src/sandbox/image/prebuilt.js";
import { toolbeltRecipe } from "../../src/sandbox/image/toolbelt.js";
import { LocalRegistry } from "../support/local-registry.js";
import { canRunSecondEngine, SecondEngine } from "../support/second-engine.js";
import { makeWorkspace } from "../support/workspace.js";

const run = promisify(execFile);
const CLI = path.resolve("bin/agent-ci.js");
const docker = new Docker();

/** The CLI to its end, with a script of tool calls; stderr kept whole. */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.on("exit", (code) => resolve({ code, stderr }));
  });
}

describe.sequential("prebuilt images from a registry", () => {
  const registry = new LocalRegistry();
  let engine: SecondEngine | undefined;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "aci-prebuilt-"));
  const recordFile = path.join(tmp, "images.json");

  beforeAll(async () => {
    if (!canRunSecondEngine) throw new Error("a second dockerd needs root, dockerd and ip");
    await registry.start();
    // The release script, as a release runs it (the images it finds built on this engine are pushed).
    await run("bash", ["scripts/publish-images.sh", registry.address, "--out", recordFile], {
      maxBuffer: 64 * 1024 * 1024,
    });
    engine = new SecondEngine({
      bridge: "aci-pbbr0",
      bridgeAddress: "10.213.78.1/24",
      insecureRegistries: [registry.address],
    });
    await engine.start();
  }, 900_000);

  afterAll(async () => {
    await engine?.cleanup();
    await registry.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }, 120_000);

  it("the release script records each image's digest beside its recipe's hash", () => {
    const record = readPrebuiltRecord(recordFile);
    expect(record.registry).toBe(registry.address);
    expect(staleImages(record, [sandboxRecipe(), toolbeltRecipe()])).toEqual([]);
    expect(record.images.sandbox).toMatchObject({
      repository: "agent-ci-sandbox",
      recipe: recipeHash(sandboxRecipe()),
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect(record.images.toolbelt?.recipe).toBe(recipeHash(toolbeltRecipe()));
  });

  it("an empty engine pulls both by digest and answers the first tool call; nothing is built there", async () => {
    const e = engine!;
    expect(await e.client.listImages({ all: true })).toEqual([]);
    const ws = makeWorkspace({ "a.txt": "hello\n" });
    const out = path.join(tmp, "out");
    const script = path.join(tmp, "script.json");
    fs.writeFileSync(
      script,
      JSON.stringify({ turns: [[{ name: "Bash", input: { command: "cat a.txt; git --version" } }]] }),
    );
    const { code, stderr } = await cli(
      ["run", "--workspace", ws, "--out", out, "--script", script, "--mode", "bypassPermissions"],
      { ...process.env, DOCKER_HOST: e.dockerHost, AGENT_CI_IMAGES_FILE: recordFile },
    );
    const report = parseReport(JSON.parse(fs.readFileSync(path.join(out, "report.json"), "utf8")));
    expect({ code, reason: report.exitReason }, stderr).toEqual({ code: 0, reason: "completed" });
    expect(report.toolCalls[0]?.resultPreview).toMatch(/^hello\ngit version /);
    for (const image of Object.values(readPrebuiltRecord(recordFile).images))
      expect(stderr).toContain(`${registry.address}/${image.repository}@${image.digest}`);
    expect(stderr).not.toMatch(/^building /m);
    // Nothing built: every image on the engine came from the registry (pulled images have no parent
    // and carry their registry digest; a build leaves images with parents, or build cache).
    const images = await e.client.listImages({ all: true });
    expect(images.length).toBe(2);
    for (const image of images) {
      expect(image.ParentId).toBe("");
      expect(image.RepoDigests?.[0]).toMatch(new RegExp(`^${registry.address.replace(/\./g, "\\.")}/`));
    }
    const df = (await e.client.df()) as { BuildCache?: unknown[] | null };
    expect(df.BuildCache ?? []).toEqual([]);
  }, 900_000);

  it("a pull that fails falls back to a local build, saying why in one line", async () => {
    // Two recipes published at a registry that no longer answers: the first pull fails, the second is
    // not tried, both are built here, and the reason is said once.
    const dead = new LocalRegistry();
    await dead.start();
    const deadAddress = dead.address;
    await dead.stop();
    const marker = `${process.pid}-${Date.now()}`;
    const recipes: BuildRecipe[] = ["one", "two"].map((n) => ({
      what: `the fallback test's image ${n}`,
      repository: `agent-ci-test-fallback-${n}`,
      files: { Dockerfile: `ARG BASE_IMAGE\nFROM \${BASE_IMAGE}\nLABEL agent-ci.test=${marker}-${n}\n` },
      baseImage: DEFAULT_BASE_IMAGE,
      label: `fallback-${n}`,
    }));
    const record = PrebuiltRecord.parse({
      registry: deadAddress,
      images: Object.fromEntries(
        recipes.map((r) => [
          r.label,
          {
            repository: r.repository,
            recipe: recipeHash(r),
            digest: `sha256:${"0".repeat(64)}`,
            platforms: ["linux/amd64"],
          },
        ]),
      ),
    });
    const prebuilt = new PrebuiltImages(record);
    const lines: string[] = [];
    const tags: string[] = [];
    try {
      for (const recipe of recipes)
        tags.push(await ensureBuilt(docker, recipe, (line) => lines.push(line), { prebuilt }));
      for (const tag of tags) expect(await imageExists(docker, tag)).toBe(true);
      const failures = lines.filter((l) => /failed/.test(l));
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatch(
        new RegExp(
          `^pulling ${deadAddress.replace(/\./g, "\\.")}/agent-ci-test-fallback-one@sha256:0+ failed: .+; building agent-ci's images locally instead`,
        ),
      );
      expect(lines.filter((l) => l.startsWith("pulling ") && !/failed/.test(l))).toHaveLength(1);
      expect(lines.filter((l) => l.startsWith("building "))).toHaveLength(2);
    } finally {
      for (const tag of tags)
        await docker
          .getImage(tag)
          .remove({ force: true })
          .catch(() => {});
    }
  }, 300_000);
});
