// Which base agent-ci's own images are built from, and how their tags tell architectures apart: pure
// functions of the recipe and the environment, no engine.
import { describe, expect, it, vi } from "vitest";
import { baseImageFor, DEFAULT_BASE_IMAGE, recipeTag } from "../../../src/sandbox/image/image.js";
import type Docker from "dockerode";
import { ensureToolbelt, toolbeltRecipe } from "../../../src/sandbox/image/toolbelt.js";

describe("the base image for another architecture", () => {
  it("is the default base's official repository for that architecture, a name of its own", () => {
    expect(baseImageFor("arm64")).toBe(`arm64v8/${DEFAULT_BASE_IMAGE}`);
    expect(baseImageFor("amd64")).toBe(`amd64/${DEFAULT_BASE_IMAGE}`);
    expect(baseImageFor("386")).toBe(`i386/${DEFAULT_BASE_IMAGE}`);
  });

  it("is AGENT_CI_BASE_IMAGE_<ARCH> when set", () => {
    vi.stubEnv("AGENT_CI_BASE_IMAGE_ARM64", "registry.example/debian-arm64:12");
    expect(baseImageFor("arm64")).toBe("registry.example/debian-arm64:12");
  });

  it("is an error naming the variable to set for an architecture with no official repository", () => {
    expect(() => baseImageFor("wasm")).toThrow(/set AGENT_CI_BASE_IMAGE_WASM to a Debian image for wasm/);
  });
});

describe("the toolbelt's recipe", () => {
  it("gets a tag of its own for another architecture, and keeps the engine's unchanged", () => {
    const own = toolbeltRecipe();
    const arm64 = toolbeltRecipe("arm64");
    expect(own).not.toHaveProperty("architecture");
    expect(arm64).toMatchObject({
      architecture: "arm64",
      baseImage: baseImageFor("arm64"),
      files: own.files,
    });
    expect(recipeTag(arm64)).not.toBe(recipeTag(own));
    expect(recipeTag(toolbeltRecipe("arm64"))).toBe(recipeTag(arm64));
  });
});

describe("ensureToolbelt", () => {
  it("reports a recipe it cannot make through its promise, never by throwing where it is called", async () => {
    // A caller starts it beside other work and awaits them together: a throw at the call left the other
    // work's failure unhandled, which ended the process before the run's record was written.
    let made: Promise<string> | undefined;
    expect(() => (made = ensureToolbelt({} as Docker, undefined, { architecture: "wasm" }))).not.toThrow();
    await expect(made).rejects.toThrow(/set AGENT_CI_BASE_IMAGE_WASM/);
  });
});
