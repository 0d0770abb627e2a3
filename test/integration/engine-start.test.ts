// The start's first steps, begun while the run prepares (run-stages.ts): the engine reached, then the image
// and the toolbelt made ready. A run that ends first (a configuration error) drops them: images not begun are
// never begun, and images being made are waited for, so that no toolbelt volume is left half filled. The
// real engine.
import { describe, expect, it } from "vitest";
import { EngineStart } from "../../src/sandbox/assemble.js";

describe("the engine and the images, begun ahead of the start", () => {
  it("never begins the images of a run dropped before the engine answered", async () => {
    // An image that is nowhere: had the images step begun, it would fail on the image instead.
    const begun = new EngineStart({ image: "agent-ci-test/nowhere:none" });
    await begun.drop();
    await begun.reached;
    await expect(begun.ready).rejects.toThrow(/the run ended before its images were needed/);
    expect(begun.record.phases.map((p) => p.phase)).toEqual(["engine"]);
  });

  it("waits for the images being made when the run is dropped after the engine answered", async () => {
    const begun = new EngineStart({});
    await begun.reached;
    await begun.drop();
    expect(begun.record.phases.map((p) => p.phase)).toEqual(["engine", "images"]);
    const ready = await begun.ready;
    expect(ready.image.name).toBeTruthy();
    expect(ready.toolbelt).toMatch(/toolbelt/);
  });
});
