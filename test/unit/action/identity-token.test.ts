// The identity token file of the Action's keyless sign-in: the first GitHub OIDC token is written before the run
// (0600, masked), then rewritten with a fresh one before it expires, for as long as the run lasts; without
// `id-token: write` the step fails saying so.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startIdentityTokenFile } from "../../../src/action/identity-token.js";

describe("the identity token file", () => {
  it("writes the token for the audience, masks it, and rewrites it with a fresh one", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-idt-")), "token");
    const asked: string[] = [];
    const masked: string[] = [];
    let refreshed!: () => void;
    const twice = new Promise<void>((resolve) => (refreshed = resolve));
    const handle = await startIdentityTokenFile({
      file,
      audience: "https://api.anthropic.com",
      idToken: async (audience) => {
        asked.push(audience);
        return `jwt-${asked.length}`;
      },
      setSecret: (value) => masked.push(value),
      warn: () => undefined,
      refreshMs: 5,
      onRefresh: () => refreshed(),
    });
    expect(fs.readFileSync(file, "utf8")).toBe("jwt-1");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    await twice;
    handle.stop();
    expect(fs.readFileSync(file, "utf8")).toMatch(/^jwt-[2-9]/);
    expect(asked.every((a) => a === "https://api.anthropic.com")).toBe(true);
    expect(masked.slice(0, 2)).toEqual(["jwt-1", "jwt-2"]);
  });

  it("fails saying the job needs id-token: write when there is no token", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-idt-")), "token");
    await expect(
      startIdentityTokenFile({
        file,
        audience: "a",
        idToken: () => Promise.reject(new Error("Unable to get ACTIONS_ID_TOKEN_REQUEST_URL env variable")),
        setSecret: () => undefined,
        warn: () => undefined,
      }),
    ).rejects.toThrow(/anthropic_federation_rule_id: .*permissions: id-token: write/);
  });
});
