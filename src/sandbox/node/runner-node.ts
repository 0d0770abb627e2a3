// The Node.js a GitHub Actions job set up before agent-ci's step (actions/setup-node, or the runner image's
// own): the `node` the step's PATH finds. Not `process.version`: a JavaScript action runs on the runner's own
// bundled Node.js (`using: node24` in action.yml), never on the one the job put on PATH.
import { execFileSync } from "node:child_process";

/** `node --version` of the first `node` on `PATH` (`v20.19.5`), or undefined when there is none. */
export function pathNodeVersion(pathValue: string | undefined = process.env.PATH): string | undefined {
  if (!pathValue) return undefined;
  try {
    // PATH alone: the job's NODE_OPTIONS and the like are for its own scripts.
    const out = execFileSync("node", ["--version"], {
      env: { PATH: pathValue },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 15_000,
    });
    const version = out.trim();
    return /^v\d+\.\d+\.\d+$/.test(version) ? version : undefined;
  } catch {
    return undefined;
  }
}
