/**
 * Built-in policies, as data: `read-only` for review and triage, `edit` for fixing
 * code and running the project's checks, `full` for a trusted sandbox. Pick one with `--preset` and
 * add rules on top; later sources win on the mode, and deny rules from any source still win.
 */
import type { PermissionMode } from "./schema.js";

export interface PresetDefinition {
  readonly description: string;
  readonly defaultMode: PermissionMode;
  readonly allow: readonly string[];
  readonly deny: readonly string[];
}

const PROJECT_CHECKS: readonly string[] = [
  "Bash(npm test:*)",
  "Bash(npm run test:*)",
  "Bash(npm run lint:*)",
  "Bash(npm run build:*)",
  "Bash(npm run typecheck:*)",
  "Bash(npm run format:*)",
  "Bash(npx tsc:*)",
  "Bash(npx vitest:*)",
  "Bash(npx eslint:*)",
  "Bash(npx prettier:*)",
  "Bash(pnpm test:*)",
  "Bash(pnpm run test:*)",
  "Bash(yarn test:*)",
  "Bash(pytest:*)",
  "Bash(python -m pytest:*)",
  "Bash(go test:*)",
  "Bash(go build:*)",
  "Bash(go vet:*)",
  "Bash(cargo test:*)",
  "Bash(cargo build:*)",
  "Bash(cargo check:*)",
  "Bash(make test:*)",
  "Bash(mkdir:*)",
  "Bash(git add:*)",
];

export const PRESETS: Readonly<Record<string, PresetDefinition>> = {
  "read-only": {
    description: "Plan mode: read files and run proven read-only commands; nothing in the workspace changes.",
    defaultMode: "plan",
    allow: [],
    deny: [],
  },
  edit: {
    description: "Accept file edits inside the workspace and run the usual test, lint and build commands.",
    defaultMode: "acceptEdits",
    allow: PROJECT_CHECKS,
    deny: ["Bash(git push:*)", "Bash(sudo:*)"],
  },
  full: {
    // No Bash deny rules here on purpose: with one in force, bypassPermissions must also refuse the
    // commands it cannot read (they might hide the denied one). The network is off anyway.
    description: "bypassPermissions: any command inside the sandbox; protected paths still apply.",
    defaultMode: "bypassPermissions",
    allow: [],
    deny: [],
  },
};
