// The one writer of what a GitHub Actions runner reads (src/github/workflow-log.ts), judged by the runner's own
// rules as test/support/runner-log.ts reads them: text of any origin never becomes a command, agent-ci's own
// commands arrive as written, a mask is obeyed whatever came before it. The reader itself is checked first
// against the runner's own examples (actions/runner's ActionCommandL0 and ActionCommandManagerL0).
import { describe, expect, it } from "vitest";
import { commandLine, WorkflowLog, type WorkflowCommand } from "../../../src/github/workflow-log.js";
import { FORGED, forgedLines, forgedText, readRunnerLog, runnerLines } from "../../support/runner-log.js";

/** A log on a string, as a runner (or not) would read it. */
function logTo(runner = true) {
  let text = "";
  const log = new WorkflowLog({ write: (chunk) => (text += chunk), runner });
  return { log, text: () => text };
}

const secret = () => ["k3y", "for", "the", "log", Math.random().toString(36).slice(2)].join("-");

describe("the runner's rules as the test reader applies them", () => {
  it("finds the runner's own examples, and only those", () => {
    const read = (line: string) =>
      readRunnerLog(line).commands.map(({ name, properties, data }) => ({ name, properties, data }));
    expect(read("   ::warning k1=v1,::msg")).toEqual([
      { name: "warning", properties: { k1: "v1" }, data: "msg" },
    ]);
    expect(read("   >>>   ::warning k1=v1,::msg")).toEqual([]);
    expect(read(">>>   ##[warning k1=v1;]msg")).toEqual([
      { name: "warning", properties: { k1: "v1" }, data: "msg" },
    ]);
    expect(read("::warning k1=;=%2C=%0D=%0A=]=%3A,::;-%0D-%0A-]-:-,")).toEqual([
      { name: "warning", properties: { k1: ";=,=\r=\n=]=:" }, data: ";-\r-\n-]-:-," },
    ]);
    expect(read("::do-something::msg")).toEqual([]);
    expect(runnerLines("a\rb\r\nc\nd")).toEqual(["a", "b", "c", "d"]);
  });

  it("stops at stop-commands until its token, and masks each line of an add-mask", () => {
    const log = readRunnerLog(
      [
        "::stop-commands::stopToken",
        "##[set-env name=foo]bar",
        "::stopToken::",
        "##[set-env name=foo]bar",
        "::add-mask::abc%0Ddef%0Aghi%0D%0Ajkl",
        "abc def",
      ].join("\n"),
    );
    expect(log.commands.map((c) => c.name)).toEqual(["stop-commands", "stopToken", "set-env", "add-mask"]);
    expect(log.shown.map((l) => l.text)).toEqual([
      "::stop-commands::***",
      "##[set-env name=foo]bar",
      "::***::",
      "*** ***",
    ]);
    expect(log.masks.map((m) => m.value)).toEqual([
      "stopToken",
      "abc\rdef\nghi\r\njkl",
      "abc",
      "def",
      "ghi",
      "jkl",
    ]);
  });

  it("takes each forged line alone for a command", () => {
    for (const line of forgedLines()) expect(readRunnerLog(line).commands, line).toHaveLength(1);
  });
});

describe("WorkflowLog", () => {
  it("B11 prints no line of text the runner takes for a command, whatever the model wrote", () => {
    for (const text of [...forgedLines(), forgedText(), forgedLines().join("\n").repeat(3)]) {
      const { log, text: printed } = logTo();
      log.text(text);
      log.json(JSON.stringify({ type: "assistant", text }));
      log.text(`✓ Bash $ ${text} → exit 0`);
      const read = readRunnerLog(printed());
      expect(read.commands, JSON.stringify(text)).toEqual([]);
      expect(read.stops).toEqual([]);
    }
  });

  it("B11 keeps text readable: the lines that could be commands get one backslash, the rest are as written", () => {
    const { log, text } = logTo();
    const plain = ["a: b:: c", "x ::error::y", "## [x]", "# #[x]", "", "ends with a colon:", "%0A and %25"];
    log.text([...plain, ...forgedLines()].join("\n"));
    const printed = runnerLines(text());
    expect(printed.slice(0, plain.length)).toEqual(plain);
    expect(printed.slice(plain.length)).toEqual([
      "\\::stop-commands::x",
      `\\::add-mask::${FORGED}`,
      `\\::error file=${FORGED}.js,line=1::${FORGED} error`,
      `\\::set-output name=${FORGED}::${FORGED}`,
      `   \\::warning title=${FORGED}::${FORGED} indented`,
      `\t\u00a0\u2003\\::notice::${FORGED} after a tab and Unicode spaces`,
      `##\\[error]${FORGED} in the older form`,
      `the model says ##\\[warning]${FORGED} mid-line`,
      `\\::ADD-MASK::${FORGED}-upper-case`,
      `\\::group::${FORGED}`,
      "\\::echo::on",
      `\\:\u200b:error::${FORGED} with a zero-width space`,
      `\u00ad\\::error::${FORGED} after a soft hyphen`,
      `#\u200b#\\[warning]${FORGED} with a zero-width space`,
    ]);
    // Printed again, it stays as it is.
    const again = logTo();
    again.log.text(text());
    expect(again.text()).toBe(text());
  });

  it("B11 keeps a JSON line's value", () => {
    const value = { text: forgedText(), nested: ["##[error]x", "::warning::y"] };
    const { log, text } = logTo();
    log.json(JSON.stringify(value));
    expect(JSON.parse(text())).toEqual(value);
    expect(readRunnerLog(text()).commands).toEqual([]);
  });

  it("B11 writes agent-ci's own commands as the runner reads them, whatever their text holds", () => {
    const hostile = `${forgedText()}%25 %0A :, done`;
    const commands: WorkflowCommand[] = [
      { name: "add-mask", value: `multi\nline ${hostile}` },
      { name: "warning", message: hostile, properties: { title: hostile, file: `a,b:c${hostile}`, line: 3 } },
      { name: "notice", message: "plain" },
      { name: "error", message: hostile, properties: { title: "t" } },
      { name: "group", title: hostile },
      { name: "endgroup" },
    ];
    const { log, text } = logTo();
    for (const command of commands) log.command(command);
    const read = readRunnerLog(text());
    expect(read.commands.map(({ name, properties, data }) => ({ name, properties, data }))).toEqual([
      { name: "add-mask", properties: {}, data: `multi\nline ${hostile}` },
      { name: "warning", properties: { title: hostile, file: `a,b:c${hostile}`, line: "3" }, data: hostile },
      { name: "notice", properties: {}, data: "plain" },
      { name: "error", properties: { title: "t" }, data: hostile },
      { name: "group", properties: {}, data: hostile },
      { name: "endgroup", properties: {}, data: "" },
    ]);
    expect(commandLine({ name: "notice", message: "plain" })).toBe("::notice::plain");
  });

  it("B11 masks a secret once, and the mask is obeyed after anything the model printed", () => {
    const value = secret();
    const { log, text } = logTo();
    log.text(forgedText());
    log.mask(value);
    log.mask(value);
    log.mask("  ");
    log.text(`then ${value}`);
    const read = readRunnerLog(text());
    expect(read.masks.map((m) => m.value)).toEqual([value]);
    expect(read.commands.map((c) => c.name)).toEqual(["add-mask"]);
    expect(read.shown.at(-1)?.text).toBe("then ***");
  });

  it("prints text as it is and no mask where no runner reads the output", () => {
    const { log, text } = logTo(false);
    log.text(forgedText());
    log.mask(secret());
    expect(text()).toBe(forgedText());
  });
});
