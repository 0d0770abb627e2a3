// Outputs and the fail_on decision, and the annotations drawn from a report. Pure.
// Bypasses the harness: pure functions.
import { describe, expect, it } from "vitest";
import { annotationsFor, MAX_ANNOTATIONS_PER_KIND } from "../../src/action/annotations.js";
import { failureMessage, runOutputs, skippedOutputs } from "../../src/action/outputs.js";
import {
  deniedNoChangesReport,
  longRunReport,
  smallFixReport,
  verifyFailedReport,
} from "../unit/report/support/report-builders.js";

const failOn = [
  "config_error",
  "engine_error",
  "api_error",
  "max_turns",
  "budget",
  "timeout",
  "context_window",
  "max_denials",
  "cancelled",
  "verify_failed",
] as const;

describe("runOutputs", () => {
  it("maps the report to strings", () => {
    const report = smallFixReport();
    const out = runOutputs({
      exitReason: "completed",
      patchPath: "/o/patch.diff",
      reportPath: "/o/report.json",
      report,
    });
    expect(out).toMatchObject({
      skipped: "false",
      exit_reason: "completed",
      outcome: "changes",
      has_changes: "true",
      changed_files: String(report.patch.files.length),
      tool_calls: String(report.toolCalls.length),
      turns: "5",
      verify_exit_code: "0",
    });
    expect(Number(out.cost_usd)).toBeCloseTo(report.costUsd, 5);
  });

  it("sets the run's id and the agent's final answer as given (already redacted)", () => {
    const out = runOutputs({
      runId: "20261127-abc",
      exitReason: "completed",
      patchPath: "/o/patch.diff",
      report: smallFixReport(),
      finalMessage: "Fixed.\n\nline two",
    });
    expect(out).toMatchObject({ run_id: "20261127-abc", final_message: "Fixed.\n\nline two" });
    expect(runOutputs({ exitReason: "api_error", patchPath: "p" })).toMatchObject({
      run_id: "",
      final_message: "",
    });
  });

  it("marks a skipped run", () => {
    expect(skippedOutputs()).toMatchObject({ skipped: "true", has_changes: "false" });
  });
});

describe("failureMessage", () => {
  it("passes a completed run", () => {
    expect(
      failureMessage([...failOn], { exitReason: "completed", patchPath: "p", report: smallFixReport() }),
    ).toBeUndefined();
  });

  it("fails the endings listed in fail_on, and not the others", () => {
    const stopped = { exitReason: "max_turns" as const, patchPath: "p", report: longRunReport() };
    expect(failureMessage([...failOn], stopped)).toContain("max_turns");
    expect(failureMessage(["api_error"], stopped)).toBeUndefined();
    expect(failureMessage([], stopped)).toBeUndefined();
  });

  it("fails verify_failed, no_changes and secret_in_patch when asked", () => {
    expect(
      failureMessage(["verify_failed"], {
        exitReason: "completed",
        patchPath: "p",
        report: verifyFailedReport(),
      }),
    ).toContain("verify_failed");
    expect(
      failureMessage(["no_changes"], {
        exitReason: "completed",
        patchPath: "p",
        report: deniedNoChangesReport(),
      }),
    ).toContain("no_changes");
    const report = smallFixReport();
    report.patch.secretFindings = [{ file: "a", line: 1, kind: "github_token" }];
    expect(
      failureMessage(["secret_in_patch"], { exitReason: "completed", patchPath: "p", report }),
    ).toContain("secret_in_patch");
  });

  it("always fails a run without a report", () => {
    expect(failureMessage([], { exitReason: "completed", patchPath: "p" })).toContain("without a report");
  });
});

describe("annotationsFor", () => {
  it("warns per denied call and notes per failed call, with the file when known", () => {
    const annotations = annotationsFor(deniedNoChangesReport());
    const warnings = annotations.filter((a) => a.level === "warning");
    const notices = annotations.filter((a) => a.level === "notice");
    expect(warnings).toHaveLength(3);
    expect(warnings[1]).toMatchObject({ title: "agent-ci denied Read", file: ".env" });
    expect(notices).toHaveLength(2);
    expect(notices.map((n) => n.title)).toEqual(
      expect.arrayContaining([expect.stringContaining("Edit failed (edit_not_unique)")]),
    );
  });

  it("caps each level and counts the rest", () => {
    const report = longRunReport();
    const notices = annotationsFor(report).filter((a) => a.level === "notice");
    expect(notices.length).toBeLessThanOrEqual(MAX_ANNOTATIONS_PER_KIND + 1);
  });

  it("puts possible secrets first", () => {
    const report = deniedNoChangesReport();
    report.patch.secretFindings = [{ file: "src/key.ts", line: 3, kind: "anthropic_key" }];
    expect(annotationsFor(report)[0]).toMatchObject({ level: "warning", file: "src/key.ts", line: 3 });
  });
});
