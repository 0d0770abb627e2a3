// The allowlist's ecosystem presets, as data: the CLI's help names them without loading the allowlist's parsing
// (and the public-suffix list it carries).
/**
 * Ecosystem presets: `--allow-domain npm` expands to these. Named as GitHub's agentic workflows and
 * Copilot's coding agent name theirs; each lists the hosts the ecosystem's own client talks to.
 */
export const EGRESS_PRESETS = {
  npm: ["registry.npmjs.org", "registry.yarnpkg.com"],
  pypi: ["pypi.org", "files.pythonhosted.org"],
  go: ["proxy.golang.org", "sum.golang.org", "storage.googleapis.com"],
  crates: ["crates.io", "index.crates.io", "static.crates.io"],
  maven: ["repo.maven.apache.org", "repo1.maven.org", "plugins.gradle.org", "services.gradle.org"],
  rubygems: ["rubygems.org", "index.rubygems.org"],
  debian: ["deb.debian.org", "security.debian.org"],
  github: ["github.com", "codeload.github.com", "objects.githubusercontent.com", "raw.githubusercontent.com"],
} as const satisfies Record<string, readonly string[]>;
export type EgressPreset = keyof typeof EGRESS_PRESETS;
export const EGRESS_PRESET_NAMES = Object.keys(EGRESS_PRESETS) as EgressPreset[];
