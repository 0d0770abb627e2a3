// A step's log read the way the GitHub Actions runner reads it (actions/runner: ProcessInvoker, OutputManager,
// ActionCommandManager.TryProcessCommand, ActionCommand.TryParseV2 / TryParse, AddMaskCommandExtension), written
// from those rules for the tests to judge agent-ci's output by, not from agent-ci's own idea of them:
// - The output is read a line at a time (.NET StreamReader.ReadLine: a line ends at "\r\n", "\r" or "\n").
// - A line is a command when, after .NET's TrimStart (Char.IsWhiteSpace), it starts with "::", a second "::"
//   follows, and the text between (up to its first space) is a registered command's name, case-insensitive
//   (`::name k=v,k2=v2::data`; data unescapes %0D %0A %25, properties also %3A %2C); or, failing that, when it
//   holds "##[" anywhere, a "]" after it, and the name between is registered (`##[name k=v;]data`, the older
//   form; properties split on ";", unescaping %3B %0D %0A %5D %25).
// - The runner searches for "::" and "##[" with culture-sensitive StartsWith/IndexOf (ICU), which skip
//   ignorable characters (controls, soft hyphen, zero-width characters); a line is also parsed with those
//   removed, so this reader finds every command the runner could find, and a few it would not.
// - `stop-commands` with a token stops every command until a line whose command name is that token (the
//   token is registered meanwhile, and masked when longer than 6 characters); a stop with an empty token, a
//   registered name or "pause-logging" is refused. While stopped, a line is shown as it is.
// - `add-mask` masks its value, and each of its lines trimmed, in every line shown after it; `echo` on/off
//   shows the commands themselves (an add-mask as `::add-mask::***`).
// forgedText() is what a model writes to forge commands; foreignCommands and expectMasked judge a whole run's log.
// What a command does beyond that (an annotation, an output) is the runner's business, not this reader's.
import { expect } from "vitest";

/** The commands the runner registers (ActionCommandManager and its extensions); `internal-set-repo-path` only
 * for its own plugins, counted here all the same. */
export const REGISTERED_COMMANDS = [
  "stop-commands",
  "add-mask",
  "add-matcher",
  "add-path",
  "debug",
  "echo",
  "endgroup",
  "error",
  "group",
  "internal-set-repo-path",
  "notice",
  "remove-matcher",
  "save-state",
  "set-env",
  "set-output",
  "warning",
] as const;

/** .NET's Char.IsWhiteSpace: what String.TrimStart() removes (Unicode Zs, Zl, Zp, U+0009–U+000D, U+0085). */
const DOTNET_WHITESPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*/;
/** What ICU's comparisons skip: controls other than the whitespace ones, and default-ignorable code points. */
const IGNORABLE = /[\0-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\p{Default_Ignorable_Code_Point}]/gu;

export interface RunnerCommand {
  /** As written (the runner compares names case-insensitively). */
  name: string;
  properties: Record<string, string>;
  data: string;
  /** The line it was on (0-based) and the line itself. */
  line: number;
  raw: string;
  form: "::" | "##[";
}

export interface ShownLine {
  line: number;
  /** As the log shows it: masked with the masks registered before it. */
  text: string;
  /** As it was written. */
  raw: string;
}

export interface RunnerLog {
  /** Every line the runner took for a command, in order: stop-commands and its resume token included. */
  commands: RunnerCommand[];
  /** What the log shows: every other line, masked as the runner would have masked it then. */
  shown: ShownLine[];
  /** Every value masked, with the line of the command that masked it. */
  masks: Array<{ value: string; line: number }>;
  /** Stops, the token each gave; and whether commands were still stopped at the end. */
  stops: string[];
  stoppedAtEnd: boolean;
}

/** The runner's lines: ReadLine ends a line at "\r\n", "\r" or "\n"; a last line without an end counts. */
export function runnerLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 10 && c !== 13) continue;
    lines.push(text.slice(start, i));
    if (c === 13 && text.charCodeAt(i + 1) === 10) i += 1;
    start = i + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

const unescape = (text: string, pairs: Array<[string, string]>) =>
  pairs.reduce((out, [escaped, plain]) => out.split(escaped).join(plain), text);
const DATA_ESCAPES: Array<[string, string]> = [
  ["%0D", "\r"],
  ["%0A", "\n"],
  ["%25", "%"],
];
const PROPERTY_ESCAPES: Array<[string, string]> = [
  ["%0D", "\r"],
  ["%0A", "\n"],
  ["%3A", ":"],
  ["%2C", ","],
  ["%25", "%"],
];
const V1_ESCAPES: Array<[string, string]> = [
  ["%3B", ";"],
  ["%0D", "\r"],
  ["%0A", "\n"],
  ["%5D", "]"],
  ["%25", "%"],
];

type Parsed = Omit<RunnerCommand, "line" | "raw">;

function properties(text: string, separator: string, escapes: Array<[string, string]>) {
  const out: Record<string, string> = {};
  for (const pair of text.split(separator).filter(Boolean)) {
    const at = pair.indexOf("=");
    const key = at < 0 ? "" : pair.slice(0, at);
    const value = at < 0 ? "" : pair.slice(at + 1);
    if (key && value) out[key.toLowerCase()] = unescape(value, escapes);
  }
  return out;
}

/** TryParseV2: `::name props::data` after leading whitespace. */
function parseV2(line: string, registered: Set<string>): Parsed | undefined {
  const message = line.replace(DOTNET_WHITESPACE, "");
  if (!message.startsWith("::")) return undefined;
  const end = message.indexOf("::", 2);
  if (end < 0) return undefined;
  const info = message.slice(2, end);
  const space = info.indexOf(" ");
  const name = space < 0 ? info : info.slice(0, space);
  if (!registered.has(name.toLowerCase())) return undefined;
  return {
    name,
    properties: space > 0 ? properties(info.slice(space + 1).trim(), ",", PROPERTY_ESCAPES) : {},
    data: unescape(message.slice(end + 2), DATA_ESCAPES),
    form: "::",
  };
}

/** TryParse: `##[name props]data` anywhere in the line (its first "##[" only). */
function parseV1(line: string, registered: Set<string>): Parsed | undefined {
  const prefix = line.indexOf("##[");
  if (prefix < 0) return undefined;
  const close = line.indexOf("]", prefix);
  if (close < 0) return undefined;
  const info = line.slice(prefix + 3, close);
  const space = info.indexOf(" ");
  const name = space < 0 ? info : info.slice(0, space);
  if (!registered.has(name.toLowerCase())) return undefined;
  return {
    name,
    properties: space > 0 ? properties(info.slice(space + 1), ";", V1_ESCAPES) : {},
    data: unescape(line.slice(close + 1), V1_ESCAPES),
    form: "##[",
  };
}

function parseLine(line: string, registered: Set<string>): Parsed | undefined {
  const bare = line.replace(IGNORABLE, "");
  return (
    parseV2(line, registered) ??
    parseV2(bare, registered) ??
    parseV1(line, registered) ??
    parseV1(bare, registered)
  );
}

function masked(text: string, masks: readonly string[]): string {
  let out = text;
  for (const mask of masks) out = out.split(mask).join("***");
  return out;
}

/** Reads a whole log (one stream, or several in the order they were written) as the runner would. */
export function readRunnerLog(text: string): RunnerLog {
  const registered = new Set<string>(REGISTERED_COMMANDS);
  const log: RunnerLog = { commands: [], shown: [], masks: [], stops: [], stoppedAtEnd: false };
  let maskValues: string[] = [];
  const addMask = (value: string, line: number) => {
    if (!value || maskValues.includes(value)) return;
    log.masks.push({ value, line });
    maskValues = [...maskValues, value].sort((a, b) => b.length - a.length);
  };
  let stopToken: string | undefined;
  let echo = false;
  const show = (line: number, raw: string, text = raw) =>
    log.shown.push({ line, text: masked(text, maskValues), raw });
  runnerLines(text).forEach((raw, line) => {
    const parsed = raw ? parseLine(raw, registered) : undefined;
    if (!parsed) return show(line, raw);
    const command: RunnerCommand = { ...parsed, line, raw };
    const name = command.name.toLowerCase();
    if (stopToken !== undefined) {
      if (name !== stopToken.toLowerCase()) return show(line, raw);
      log.commands.push(command);
      registered.delete(stopToken.toLowerCase());
      stopToken = undefined;
      return show(line, raw);
    }
    log.commands.push(command);
    if (name === "stop-commands") {
      const token = command.data;
      if (!token || registered.has(token.toLowerCase()) || token.toLowerCase() === "pause-logging") return;
      stopToken = token;
      log.stops.push(token);
      registered.add(token.toLowerCase());
      if (token.length > 6) addMask(token, line);
      return show(line, raw);
    }
    if (name === "add-mask") {
      if (!command.data.trim()) return;
      if (echo) show(line, raw, "::add-mask::***");
      addMask(command.data, line);
      for (const part of command.data.split(/[\r\n]/)) addMask(part.trim(), line);
      return;
    }
    if (name === "echo") {
      const value = command.data.trim().toLowerCase();
      if (value === "on" || value === "off") echo = value === "on";
    }
    if (echo) show(line, raw);
  });
  log.stoppedAtEnd = stopToken !== undefined;
  return log;
}

/** What the runner shows of a log: its lines that are not commands, with the masks applied. */
export function shownText(text: string): string {
  return readRunnerLog(text)
    .shown.map((line) => line.text)
    .join("\n");
}

/** The mark of what the model wrote, in every forged line. */
export const FORGED = "forged-by-the-model";

/** Lines a model writes to forge workflow commands; each alone is a command by the rules above. */
export function forgedLines(): string[] {
  return [
    `::stop-commands::x`,
    `::add-mask::${FORGED}`,
    `::error file=${FORGED}.js,line=1::${FORGED} error`,
    `::set-output name=${FORGED}::${FORGED}`,
    `   ::warning title=${FORGED}::${FORGED} indented`,
    `\t\u00a0\u2003::notice::${FORGED} after a tab and Unicode spaces`,
    `##[error]${FORGED} in the older form`,
    `the model says ##[warning]${FORGED} mid-line`,
    `::ADD-MASK::${FORGED}-upper-case`,
    `::group::${FORGED}`,
    `::echo::on`,
    `:\u200b:error::${FORGED} with a zero-width space`,
    `\u00ad::error::${FORGED} after a soft hyphen`,
    `#\u200b#[warning]${FORGED} with a zero-width space`,
  ];
}

/** The forged lines and the stop's resume token, ended by "\n", "\r" and "\r\n" in turn. */
export function forgedText(): string {
  const ends = ["\n", "\r", "\r\n"];
  return [...forgedLines(), "::x::"].map((line, i) => `${line}${ends[i % ends.length]}`).join("");
}

/** The commands agent-ci (and @actions/core, for an OIDC token) gives the runner. */
const OWN_COMMANDS = ["add-mask", "group", "endgroup", "warning", "notice", "error", "debug"];

/** Commands the runner found that agent-ci did not give: anything else, or a line the model wrote. */
export function foreignCommands(log: RunnerLog, secrets: readonly string[]) {
  return log.commands.filter(
    (command) =>
      !OWN_COMMANDS.includes(command.name) ||
      command.form !== "::" ||
      command.raw !== command.raw.trimStart() ||
      (command.name === "add-mask" && !secrets.includes(command.data)) ||
      command.data.startsWith(FORGED) ||
      Object.values(command.properties).some((value) => value.startsWith(FORGED)),
  );
}

/** Every secret masked before the first line that shows the model's text, and none shown in clear. */
export function expectMasked(log: RunnerLog, given: readonly string[], obtained: readonly string[]) {
  const firstUntrusted = log.shown.find((line) => line.raw.includes(FORGED))?.line;
  expect(firstUntrusted, "the model's text shows in the log").toBeDefined();
  for (const secret of given) {
    const mask = log.masks.find((m) => m.value === secret);
    expect(mask, "a given secret is masked").toBeDefined();
    expect(mask!.line, "a given secret is masked before the model's first word").toBeLessThan(
      firstUntrusted!,
    );
  }
  for (const secret of obtained)
    expect(
      log.masks.some((m) => m.value === secret),
      "an obtained token is masked",
    ).toBe(true);
  const shown = log.shown.map((line) => line.text).join("\n");
  for (const secret of [...given, ...obtained])
    expect(shown.includes(secret), "a secret shown in clear").toBe(false);
}
