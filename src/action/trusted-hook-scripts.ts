// On pull-request events the hooks come from the `settings` input, read at the base revision (prepare.ts
// `trustedInput`), and so must the repository scripts they run: the pull request may have rewritten
// `.claude/hooks/fmt.sh`, and a hook is not decided by the permission policy. Each script a hook command names
// (the runner's `scriptWords`) is read at the base through the API into a folder laid out like the repository;
// the run takes hook scripts from there instead of the checkout (RunConfig.hookScriptsDir, docs/hooks.md). A
// script the base does not have stays missing: a hook naming it fails.
import fs from "node:fs";
import path from "node:path";
import { parseSettingsFile } from "../policy/load.js";
import { scriptWords } from "../runner/hooks/hook-scripts.js";
import { readTrustedFile, TrustedFileError, type TrustedFileOptions } from "./event-content.js";

export interface BaseHookScriptsOptions extends Pick<TrustedFileOptions, "workspace" | "api" | "ctx"> {
  /** The trusted settings (a temp file written by `trustedInput`). */
  settingsPath: string | undefined;
  base: TrustedFileOptions["base"];
  tempDir: string;
  log: (line: string) => void;
}

/** The folder of the base revision's hook scripts, or undefined off pull-request events or without hooks. */
export async function baseHookScripts(options: BaseHookScriptsOptions): Promise<string | undefined> {
  const { settingsPath, base } = options;
  if (!base || !settingsPath) return undefined;
  const settings = parseSettingsFile(fs.readFileSync(settingsPath, "utf8"), {
    kind: "action",
    label: "settings",
    trusted: true,
  });
  // The events agent-ci runs (others are tolerated and not run, policy/schema.ts).
  const groups = [...(settings.hooks?.PreToolUse ?? []), ...(settings.hooks?.PostToolUse ?? [])];
  const commands = groups.flatMap((group) => group.hooks.map((hook) => hook.command));
  const scripts = new Set(commands.flatMap((command) => scriptWords(command).map((word) => word.rel)));
  if (!scripts.size) return undefined;
  const dir = path.join(options.tempDir, "hook-scripts");
  for (const rel of scripts) {
    const target = path.resolve(dir, rel);
    if (!target.startsWith(dir + path.sep)) continue;
    try {
      const { text } = await readTrustedFile({ ...options, value: rel, input: "settings", base });
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, text, { mode: 0o600 });
    } catch (e) {
      if (!(e instanceof TrustedFileError)) throw e;
      options.log(`hooks: ${rel} is not in the base revision (${e.message}): a hook naming it fails`);
    }
  }
  options.log(`hooks: ${scripts.size} script(s) read from the base revision, not from the checkout`);
  return dir;
}
