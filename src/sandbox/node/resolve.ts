// What a Node.js pin means, and the one version it picks from those the npm registry publishes as official
// builds. The rules are actions/setup-node's (what a job that runs claude-code-action gets from the same
// file), which reads every form nvm reads and semver ranges besides:
//   `20.11.1`, `v20.11.1`     that version, exactly;
//   `20`, `v20`, `20.11`      the newest published version of it (nvm's partial versions);
//   `>=18`, `^20.11`, `20.x`  the newest published version in the range (npm's semver; nvm reads none);
//   `node`, `stable`, `latest`, `current`   the newest version;
//   `lts/*`, `lts/iron`, `lts/-1`   the newest version of the newest LTS line, of the line with that
//                             codename, of the line before the newest (Node.js's release schedule);
//   `system`                  the image's own Node.js (nvm's and nodenv's word for the one not theirs).
// Pure: the versions and the schedule come in.
import { major, maxSatisfying, prerelease, rcompare, valid, validRange } from "semver";

/** A pin, read: what kind of thing it names. */
export type NodeSpec =
  | { kind: "system" }
  | { kind: "exact"; version: string }
  | { kind: "range"; range: string }
  | { kind: "newest" }
  | { kind: "lts"; line: "newest" | { codename: string } | { back: number } };

/** A pin that names no Node.js version (or one this does not take): a configuration error, said as such. */
export class NodeSpecError extends Error {
  override readonly name = "NodeSpecError";
}

/** Node.js's release schedule (the `node-releases` package's release-schedule.json): a line per major. */
export type ReleaseSchedule = Record<
  string,
  { start?: string; lts?: string; codename?: string; end?: string }
>;

const NEWEST = ["node", "stable", "latest", "current"];
/** nvm's other words, which name nothing a fresh machine has. */
const NOT_HERE = ["default", "iojs", "unstable"];
/** A pin is one short word of printable ASCII (it is shown in messages: a pull request's file may hold anything). */
const PRINTABLE = /^[\x21-\x7e](?:[\x20-\x7e]{0,62}[\x21-\x7e])?$/;

/** The pin as written, for a message: quoted, and cut. */
export const shownSpec = (text: string): string => JSON.stringify(text.slice(0, 64));

/** Reads a pin; throws NodeSpecError when it names nothing this can resolve. */
export function parseNodeSpec(text: string): NodeSpec {
  const spec = text.trim();
  if (!PRINTABLE.test(spec)) throw new NodeSpecError(`${shownSpec(spec)} is not a Node.js version`);
  const lower = spec.toLowerCase();
  if (lower === "system") return { kind: "system" };
  if (NEWEST.includes(lower)) return { kind: "newest" };
  if (NOT_HERE.includes(lower))
    throw new NodeSpecError(`${shownSpec(spec)} is an nvm alias of the machine it was set on: pin a version`);
  if (lower.startsWith("lts/")) {
    const line = lower.slice("lts/".length);
    if (line === "*") return { kind: "lts", line: "newest" };
    if (/^-\d+$/.test(line)) return { kind: "lts", line: { back: Number(line.slice(1)) } };
    if (/^[a-z]+$/.test(line)) return { kind: "lts", line: { codename: line } };
    throw new NodeSpecError(`${shownSpec(spec)}: lts/ takes *, a codename (lts/iron) or -N (lts/-1)`);
  }
  const exact = valid(spec);
  if (exact) return { kind: "exact", version: exact };
  if (validRange(spec)) return { kind: "range", range: spec };
  throw new NodeSpecError(
    `${shownSpec(spec)} is not a Node.js version, range or alias (e.g. 20, v20.11.1, >=18, lts/*, lts/iron, node)`,
  );
}

/** Released versions only: the packages' odd tags (4.1.0-pkg1, 7.0.0-test…) are never picked by a range. */
const released = (versions: readonly string[]) => versions.filter((v) => valid(v) && !prerelease(v));

/** The LTS lines that have begun by `now`, newest first, each with its codename (lower case). */
function ltsLines(schedule: ReleaseSchedule, now: Date): Array<{ major: number; codename: string }> {
  const today = now.toISOString().slice(0, 10);
  return Object.entries(schedule)
    .filter(([line, facts]) => /^v\d+$/.test(line) && facts.lts && facts.lts <= today && facts.codename)
    .map(([line, facts]) => ({
      major: Number(line.slice(1)),
      codename: (facts.codename ?? "").toLowerCase(),
    }))
    .sort((a, b) => b.major - a.major);
}

/** Does the spec need the release schedule to be resolved? */
export const needsSchedule = (spec: NodeSpec): boolean => spec.kind === "lts";

/**
 * The one version a spec picks from the published ones (`system` picks none: undefined). Throws
 * NodeSpecError when none fits, naming the newest there is.
 */
export function resolveNodeSpec(
  spec: Exclude<NodeSpec, { kind: "system" }>,
  published: readonly string[],
  schedule: ReleaseSchedule = {},
  now = new Date(),
): string {
  const versions = released(published);
  const newest = [...versions].sort(rcompare)[0];
  const none = (what: string): never => {
    throw new NodeSpecError(
      `no published Node.js build is ${what}${newest ? ` (the newest is ${newest})` : ""}`,
    );
  };
  switch (spec.kind) {
    case "exact":
      return published.includes(spec.version) ? spec.version : none(`version ${spec.version}`);
    case "range":
      return maxSatisfying(versions, spec.range) ?? none(`in ${shownSpec(spec.range)}`);
    case "newest":
      return newest ?? none("published");
    case "lts": {
      const lines = ltsLines(schedule, now);
      const line =
        spec.line === "newest"
          ? lines[0]
          : "codename" in spec.line
            ? lines.find((l) => l.codename === (spec.line as { codename: string }).codename)
            : lines[spec.line.back];
      const named =
        spec.line === "newest"
          ? "lts/*"
          : "codename" in spec.line
            ? `lts/${spec.line.codename}`
            : `lts/-${spec.line.back}`;
      if (!line)
        throw new NodeSpecError(
          `${named} names no Node.js LTS line (${lines.map((l) => `${l.codename} is ${l.major}`).join(", ") || "the schedule lists none"})`,
        );
      const found = versions.filter((v) => major(v) === line.major).sort(rcompare)[0];
      return found ?? none(`of the ${line.codename} line (${line.major})`);
    }
  }
}
