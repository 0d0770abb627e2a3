// The helper's program as agent-ci starts it (`node -e` with its bundle), on the host: it says ready
// without touching its state folder, which a run's /tmp may not let it make until the run has fixed /tmp's
// mode (the copy-in starts the helper and that fix at once). A script it then cannot keep a cwd for is one
// failed call, and the helper goes on serving.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { encodeFrame, FrameDecoder } from "../../../src/sandbox/helper/framing.js";
import { type RawFrame, STATE_DIR_ENV } from "../../../src/sandbox/helper/protocol.js";
import { HELPER_JS } from "../../../src/sandbox/helper/source.js";

type Answer = RawFrame["header"] & Record<string, unknown>;

describe("the helper's start", () => {
  it("says ready where its state folder cannot be made, and fails only the script that needs it", async () => {
    const helper = spawn(process.execPath, ["-e", HELPER_JS], {
      // A folder under a file: mkdir fails (ENOTDIR) as it does under a /tmp of mode 755.
      env: { ...process.env, [STATE_DIR_ENV]: `${process.execPath}/agent-ci-state` },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    helper.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const decoder = new FrameDecoder<Answer>();
    const answers: Answer[] = [];
    const waiting: Array<() => void> = [];
    helper.stdout.on("data", (chunk: Buffer) => {
      answers.push(...decoder.push(chunk).map((f) => f.header));
      for (const wake of waiting.splice(0)) wake();
    });
    const answer = async (id: number): Promise<Answer> => {
      for (;;) {
        const found = answers.find((a) => a.id === id);
        if (found) return found;
        if (helper.exitCode !== null) throw new Error(`the helper ended: ${stderr}`);
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          helper.once("exit", () => resolve());
        });
      }
    };
    const exec = (id: number, request: Record<string, unknown>) =>
      helper.stdin.write(encodeFrame({ op: "exec", id, cwd: "/", env: {}, ...request }));
    try {
      expect(await answer(0)).toMatchObject({ ready: true });
      exec(1, { script: "echo hi" });
      expect((await answer(1)).spawnError).toMatch(/ENOTDIR/);
      exec(2, { argv: ["true"] });
      expect(await answer(2)).toMatchObject({ ok: true, exitCode: 0 });
    } finally {
      helper.stdin.end();
    }
  });
});
