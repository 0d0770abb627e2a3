// Each Action input's counterpart on the command line: the `agent-ci run` flags that set the same RunConfig
// field, or what the CLI uses instead (the environment, nothing: the Action's own GitHub work), read from the
// option table (an entry's own flag, and the others or the sentence its Action side names). The
// configuration reference (docs/configuration.md) is generated from this and the CLI's options
// (scripts/cli-docs.ts); a test fails when a flag named here is missing.
import { INPUT_NAMES, longOf, OPTIONS, type InputName, type OptionDef } from "../options/table.js";

/** The flags that mean the same as the input, or (a sentence) what the CLI has instead. */
export type InputCounterpart = readonly `--${string}`[] | string;

/** The input's option's own flag and the other flags its entry names, or the sentence it gives instead. */
function counterpart(option: OptionDef): InputCounterpart {
  const other = option.action?.cli;
  if (typeof other === "string") return other;
  return [...(option.cli ? [longOf(option.cli)] : []), ...(other ?? [])];
}

export const INPUT_FLAGS: Record<InputName, InputCounterpart> = Object.fromEntries(
  INPUT_NAMES.map((name) => [name, counterpart(OPTIONS[name] as OptionDef)]),
) as Record<InputName, InputCounterpart>;
