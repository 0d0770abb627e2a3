// The choice among attempts (`--attempts N`): verify passed without changing what verify runs → passed with a
// patch that changes it → failed; then fewer denied calls → smaller patch → fewer turns, ties to the earlier;
// without --verify the smallest non-empty patch, said to be unverified.
import { describe, expect, it } from "vitest";
import {
  chooseAttempt,
  type AttemptFacts,
} from "../../../src/runner/capabilities/attempts/attempt-choice.js";

const attempt = (n: number, facts: Partial<AttemptFacts> = {}): AttemptFacts => ({
  attempt: n,
  started: true,
  verify: "passed",
  verifyInputsChanged: [],
  deniedCalls: 0,
  changedLines: 2,
  turns: 3,
  ...facts,
});

describe("chooseAttempt", () => {
  it("with --verify: a passing attempt beats a smaller failing one", () => {
    const choice = chooseAttempt(
      [attempt(1, { verify: "failed", changedLines: 1 }), attempt(2, { changedLines: 9 })],
      true,
    );
    expect(choice).toEqual({
      attempt: 2,
      reason: "attempt 2 passed verify: the only one that did",
      verified: true,
    });
  });

  it("B16 a pass with a patch that changes what verify runs never beats a pass without, whatever its size", () => {
    const rewritesTest = { verifyInputsChanged: ["package.json scripts.test"], changedLines: 2, turns: 1 };
    const choice = chooseAttempt(
      [attempt(1, rewritesTest), attempt(2, { changedLines: 9, deniedCalls: 3 })],
      true,
    );
    expect(choice).toEqual({
      attempt: 2,
      reason:
        "attempt 2 passed verify: attempt 1 passed only with a patch that changes what verify runs (package.json scripts.test)",
      verified: true,
    });
    // The names are the patch's paths: the reason (a log line too) keeps them on one line.
    const newline = chooseAttempt(
      [attempt(1, { verifyInputsChanged: ["a\n::error::b/conftest.py"] }), attempt(2)],
      true,
    );
    expect(newline.reason).toBe(
      "attempt 2 passed verify: attempt 1 passed only with a patch that changes what verify runs (a ::error::b/conftest.py)",
    );
    // Alone, or against failures, it is still the best there is, and the reason says what it changed.
    const alone = chooseAttempt([attempt(1, rewritesTest), attempt(2, { verify: "failed" })], true);
    expect(alone).toEqual({
      attempt: 1,
      reason:
        "attempt 1 passed verify with a patch that changes what verify runs (package.json scripts.test): the only one that did",
      verified: true,
    });
  });

  it("then fewer denied calls, then the smaller patch, then fewer turns", () => {
    expect(
      chooseAttempt([attempt(1, { deniedCalls: 1, changedLines: 1 }), attempt(2, { changedLines: 5 })], true)
        .attempt,
    ).toBe(2);
    const smaller = chooseAttempt([attempt(1, { changedLines: 6 }), attempt(2, { changedLines: 2 })], true);
    expect(smaller.attempt).toBe(2);
    expect(smaller.reason).toBe("attempt 2 passed verify: smallest patch (2 changed lines, attempt 1 had 6)");
    expect(chooseAttempt([attempt(1, { turns: 4 }), attempt(2, { turns: 2 })], true).attempt).toBe(2);
  });

  it("a tie keeps the earlier attempt; an attempt that never started is never chosen", () => {
    const tie = chooseAttempt([attempt(1), attempt(2), attempt(3)], true);
    expect(tie.attempt).toBe(1);
    expect(tie.reason).toBe("attempt 1 passed verify: tied with attempt 2, the earlier kept");
    expect(
      chooseAttempt([attempt(1, { started: false, changedLines: 0 }), attempt(2, { verify: "failed" })], true)
        .attempt,
    ).toBe(2);
  });

  it("says when no attempt passed", () => {
    const none = chooseAttempt(
      [attempt(1, { verify: "failed", changedLines: 4 }), attempt(2, { verify: "failed" })],
      true,
    );
    expect(none.attempt).toBe(2);
    expect(none.reason).toMatch(/^no attempt passed verify; attempt 2 came closest/);
  });

  it("without --verify: the smallest non-empty patch, not verified", () => {
    const choice = chooseAttempt(
      [
        attempt(1, { verify: "not_run", changedLines: 0 }),
        attempt(2, { verify: "not_run", changedLines: 8 }),
        attempt(3, { verify: "not_run", changedLines: 3 }),
        attempt(4, { verify: "not_run", changedLines: 3 }),
      ],
      false,
    );
    expect(choice.attempt).toBe(3);
    expect(choice.verified).toBe(false);
    expect(choice.reason).toMatch(/smallest non-empty patch \(3 changed lines\).*not verified/);
    expect(chooseAttempt([attempt(1, { changedLines: 0 })], false).reason).toMatch(
      /no attempt changed anything; not verified/,
    );
  });
});
