// The run's OCI runtime option (--runtime, the Action's runtime input): a name as an engine registers it.
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors.js";
import { parseRunConfig } from "../../../src/runner/config.js";

const parse = (runtime: string) => parseRunConfig({ workspace: ".", script: "script.json", runtime });

describe("--runtime", () => {
  it("takes an OCI runtime's name", () => {
    expect(parse("runsc").runtime).toBe("runsc");
    expect(parse("io.containerd.runsc.v1").runtime).toBe("io.containerd.runsc.v1");
    expect(parseRunConfig({ workspace: ".", script: "script.json" }).runtime).toBeUndefined();
  });

  it.each(["", "run sc", "--privileged", "a/b", "x".repeat(65)])("refuses %j", (runtime) => {
    expect(() => parse(runtime)).toThrow(ConfigError);
    expect(() => parse(runtime)).toThrow(/runtime/);
  });
});
