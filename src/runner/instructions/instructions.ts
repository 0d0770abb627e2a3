// The team's own instructions: Skills (`<dir>/<name>/SKILL.md`) and slash commands (`<dir>/<name>.md`,
// `<dir>/<ns>/<name>.md` as `ns:name`), read on the host from trusted folders only (flags, Action inputs
// read from the base branch) and, with `--trust-workspace-settings`, from the workspace's `.claude/`. A
// workspace folder that is not trusted is listed as ignored, for the report. Nothing here can widen the
// policy: `allowed-tools` is read so that the report can say it was not applied.
import fs from "node:fs";
import path from "node:path";
import type { Instruction, InstructionOrigin } from "../../tools/skill.js";
import { workspaceGate, type IgnoredConfig } from "../../policy/index.js";
import { type Frontmatter, parseFrontmatter } from "./frontmatter.js";

export type { Instruction, InstructionOrigin } from "../../tools/skill.js";
export { substituteArguments } from "../../tools/skill.js";

export interface InstructionSource {
  dir: string;
  origin: InstructionOrigin;
  /** The folder's path inside the container, when it is part of the workspace. */
  containerDir?: string;
}

export interface Catalogue {
  skills: Instruction[];
  commands: Instruction[];
  /** Files that could not be used, each with why (shown in the report). */
  problems: string[];
  /** Workspace folders left unread because the workspace is not trusted. */
  ignored: IgnoredConfig[];
}

/** A SKILL.md or command file larger than this is not loaded (an instruction, not a data file). */
export const MAX_INSTRUCTION_BYTES = 256 * 1024;
/** At most this many skills or commands per folder. */
const MAX_ENTRIES = 200;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const WORKSPACE_SKILLS = ".claude/skills";
export const WORKSPACE_COMMANDS = ".claude/commands";

const text = (value: unknown): string | undefined =>
  typeof value === "string"
    ? value.trim() || undefined
    : typeof value === "number"
      ? String(value)
      : undefined;

/** `allowed-tools` as Claude Code accepts it: a list, or one comma-separated string. */
function toolList(value: unknown): string[] {
  if (Array.isArray(value)) return value.map((v) => String(v).trim()).filter(Boolean);
  if (typeof value === "string")
    return value
      .split(",")
      .map((v) => v.trim())
      .filter(Boolean);
  return [];
}

/** The first paragraph's first line, for a command without a `description`. */
function firstLine(body: string): string {
  const line = body.split("\n", 20).find((l) => l.trim() !== "") ?? "";
  return line
    .replace(/^#+\s*/, "")
    .trim()
    .slice(0, 200);
}

function readInstruction(file: string): Frontmatter {
  const stat = fs.statSync(file);
  if (!stat.isFile()) throw new Error("not a regular file");
  if (stat.size > MAX_INSTRUCTION_BYTES)
    throw new Error(`${stat.size} bytes, over the ${MAX_INSTRUCTION_BYTES}-byte limit for an instruction`);
  return parseFrontmatter(fs.readFileSync(file, "utf8"));
}

function entriesOf(dir: string): fs.Dirent[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .slice(0, MAX_ENTRIES);
}

/** What a skill and a command read alike from their frontmatter and their source. */
function commonFields(frontmatter: Frontmatter["frontmatter"], body: string, source: InstructionSource) {
  return {
    body,
    allowedTools: toolList(frontmatter["allowed-tools"]),
    model: text(frontmatter.model),
    argumentHint: text(frontmatter["argument-hint"]),
    origin: source.origin,
  };
}

function loadSkillsFrom(source: InstructionSource, problems: string[]): Instruction[] {
  const found: Instruction[] = [];
  for (const entry of entriesOf(source.dir)) {
    if (!entry.isDirectory()) continue;
    const dir = path.join(source.dir, entry.name);
    const file = path.join(dir, "SKILL.md");
    if (!fs.existsSync(file)) continue;
    try {
      const { frontmatter, body } = readInstruction(file);
      const name = text(frontmatter.name) ?? entry.name;
      if (!NAME.test(name)) throw new Error(`"${name}" is not a usable skill name`);
      const description = text(frontmatter.description);
      if (!description) throw new Error("the frontmatter has no description");
      found.push({
        kind: "skill",
        name,
        description,
        ...commonFields(frontmatter, body, source),
        hostPath: dir,
        containerDir: source.containerDir ? `${source.containerDir}/${entry.name}` : undefined,
      });
    } catch (e) {
      problems.push(`skill ${file}: ${(e as Error).message}`);
    }
  }
  return found;
}

function loadCommandsFrom(source: InstructionSource, problems: string[], prefix = ""): Instruction[] {
  const found: Instruction[] = [];
  for (const entry of entriesOf(source.dir)) {
    const file = path.join(source.dir, entry.name);
    if (entry.isDirectory() && !prefix && NAME.test(entry.name)) {
      found.push(...loadCommandsFrom({ ...source, dir: file }, problems, `${entry.name}:`));
      continue;
    }
    if (!entry.isFile() || !entry.name.endsWith(".md")) continue;
    const base = entry.name.slice(0, -".md".length);
    if (!NAME.test(base)) {
      problems.push(`command ${file}: "${base}" is not a usable command name`);
      continue;
    }
    try {
      const { frontmatter, body } = readInstruction(file);
      found.push({
        kind: "command",
        name: `${prefix}${base}`,
        description: text(frontmatter.description) ?? firstLine(body),
        ...commonFields(frontmatter, body, source),
        hostPath: file,
      });
    } catch (e) {
      problems.push(`command ${file}: ${(e as Error).message}`);
    }
  }
  return found;
}

/** Earlier sources win a name: flags and Action inputs come before the workspace. */
function firstByName(list: Instruction[]): Instruction[] {
  const seen = new Set<string>();
  return list.filter((i) => !seen.has(i.name) && seen.add(i.name));
}

export interface CatalogueOptions {
  skillsDirs: Array<{ dir: string; origin: Exclude<InstructionOrigin, "workspace"> }>;
  commandsDirs: Array<{ dir: string; origin: Exclude<InstructionOrigin, "workspace"> }>;
  /** The workspace on the host and its root in the container. */
  workspace: string;
  containerRoot: string;
  trustWorkspace: boolean;
}

/** Reads every trusted folder; a folder that cannot be read at all is a problem, never a crash. */
export function loadCatalogue(options: CatalogueOptions): Catalogue {
  const problems: string[] = [];
  const ignored: IgnoredConfig[] = [];
  const admit = workspaceGate(options.trustWorkspace, ignored);
  const skillSources: InstructionSource[] = [...options.skillsDirs];
  const commandSources: InstructionSource[] = [...options.commandsDirs];
  for (const [rel, into] of [
    [WORKSPACE_SKILLS, skillSources],
    [WORKSPACE_COMMANDS, commandSources],
  ] as const) {
    const dir = path.join(options.workspace, rel);
    if (!isDirectory(dir)) continue;
    if (admit({ source: `workspace:${rel}` }, into === skillSources ? "its skills" : "its commands"))
      into.push({ dir, origin: "workspace", containerDir: `${options.containerRoot}/${rel}` });
  }
  const read = (sources: InstructionSource[], load: typeof loadSkillsFrom) =>
    sources.flatMap((source) => {
      if (!isDirectory(source.dir)) {
        problems.push(`${source.dir}: not a folder`);
        return [];
      }
      return load(source, problems);
    });
  return {
    skills: firstByName(read(skillSources, loadSkillsFrom)),
    commands: firstByName(read(commandSources, (s, p) => loadCommandsFrom(s, p))),
    problems,
    ignored,
  };
}

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
