// The scripted 50-call session of the end-to-end and load benchmarks: what a model fixing a bug in the
// generated repository does — find, read, run the tests, edit, run them again, look at the diff — with
// the parallel read-only calls a model makes in one turn.
import { EDIT_MARKER, EDIT_MARKER_ALT, GO_MARKER, type GeneratedRepo } from "./repo.js";

export interface ScriptCall {
  name: string;
  input: Record<string, unknown>;
}
export type ScriptTurn = ScriptCall[];

const W = "/workspace";
const TESTS = "python3 -m unittest discover -s tests -q";

function pick(list: readonly string[], i: number): string {
  const v = list[i % list.length];
  if (v === undefined) throw new Error("the generated repository lacks a file the session needs");
  return v;
}

export function sessionScript(repo: GeneratedRepo): ScriptTurn[] {
  const ts = (i: number) => `${W}/${pick(repo.tsFiles, i * 7 + 1)}`;
  const [cfgA, cfgB] = [`${W}/${pick(repo.parseConfigFiles, 0)}`, `${W}/${pick(repo.parseConfigFiles, 1)}`];
  const go = `${W}/${pick(repo.goFiles, 0)}`;
  const read = (file_path: string, extra: Record<string, unknown> = {}) => ({
    name: "Read",
    input: { file_path, ...extra },
  });
  const grep = (input: Record<string, unknown>) => ({ name: "Grep", input });
  const glob = (pattern: string, path?: string) => ({
    name: "Glob",
    input: path ? { pattern, path } : { pattern },
  });
  const edit = (file_path: string, old_string: string, new_string: string, replace_all = false) => ({
    name: "Edit",
    input: { file_path, old_string, new_string, ...(replace_all ? { replace_all } : {}) },
  });
  const bash = (command: string) => ({ name: "Bash", input: { command, description: command.slice(0, 40) } });
  return [
    [glob("**/*.py"), grep({ pattern: "def mean" })],
    [read(`${W}/calc/core.py`), read(`${W}/tests/test_core.py`)],
    [bash(TESTS)],
    [
      grep({ pattern: "TODO", output_mode: "content", "-n": true, head_limit: 40 }),
      grep({ pattern: "parseConfig" }),
      glob("src/**/*.json"),
    ],
    [read(ts(0)), read(ts(1)), read(ts(2)), read(`${W}/${pick(repo.pyFiles, 3)}`)],
    [edit(`${W}/calc/core.py`, "return sum(values) / (len(values) - 1)", "return sum(values) / len(values)")],
    [bash(TESTS)],
    [bash("git status --short")],
    [
      grep({ pattern: "parseConfig\\(", output_mode: "content", "-n": true, glob: "*.ts" }),
      read(cfgA),
      read(cfgB),
    ],
    [
      edit(cfgA, "parseConfig", "loadConfig", true),
      edit(cfgB, "export function parseConfig(", "export function loadConfig("),
    ],
    [grep({ pattern: "parseConfig", output_mode: "count" })],
    [bash("git diff --stat")],
    [glob("**/*.md"), read(`${W}/README.md`), read(`${W}/${repo.readTarget}`)],
    [read(`${W}/${repo.readTarget}`, { offset: 1500, limit: 200 })],
    [edit(`${W}/${repo.readTarget}`, EDIT_MARKER, EDIT_MARKER_ALT)],
    [bash("wc -l calc/*.py tests/*.py")],
    [
      grep({ pattern: "class \\w+Service", type: "ts", head_limit: 20 }),
      grep({
        pattern: "func \\(s \\*Server\\) Handle\\w+",
        glob: "*.go",
        output_mode: "content",
        head_limit: 20,
        "-C": 1,
      }),
    ],
    [read(go), read(`${W}/${pick(repo.goFiles, 5)}`), read(`${W}/${pick(repo.jsonFiles, 2)}`)],
    [edit(go, GO_MARKER, "// handler: kept in sync with the router table (checked in CI)")],
    [bash("ls -la src | head -20")],
    [
      edit(
        `${W}/calc/extra.py`,
        "",
        '"""Extra helpers."""\n\n\ndef total(values):\n    return sum(values)\n',
      ),
    ],
    [
      edit(
        `${W}/tests/test_core.py`,
        "    def test_clamp(self):",
        "    def test_mean_single(self):\n        self.assertEqual(mean([4]), 4)\n\n    def test_clamp(self):",
      ),
    ],
    [bash(TESTS)],
    [glob("tests/**/*.py"), read(`${W}/calc/stats.py`)],
    [
      edit(
        `${W}/calc/stats.py`,
        "    return max(values) - min(values)",
        "    if not values:\n        return 0\n    return max(values) - min(values)",
      ),
    ],
    [bash(TESTS)],
    [
      grep({ pattern: "TODO", path: "calc" }),
      grep({ pattern: "mean\\(", output_mode: "content", "-n": true, path: "tests" }),
    ],
    [read(ts(3)), read(ts(4))],
    [bash("git status --short")],
    [bash("git diff")],
    [read(`${W}/package.json`)],
    [bash("git diff --stat")],
  ];
}

export function callCount(turns: readonly ScriptTurn[]): number {
  return turns.reduce((n, t) => n + t.length, 0);
}
