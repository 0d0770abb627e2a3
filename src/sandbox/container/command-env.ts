// The environment of every command agent-ci runs in the container: the allow-listed base, the PATH composed
// per command, and what `--env`, `--ca-cert`, the egress proxy (with its injected secrets' placeholders) and
// the workspace's owner add to it.
import type { EgressSidecar } from "../egress/sidecar.js";
import { proxyEnv } from "../egress/sidecar.js";
import type { ExecRequest } from "../sandbox.js";
import { WORKSPACE_ROOT } from "../sandbox.js";
import { FALLBACK_PATH, TOOLBELT_BIN } from "../image/toolbelt.js";

/**
 * The allow-listed environment every command gets. PATH is composed per run (see `commandEnv`): the
 * image's own for the Bash tool with the toolbelt last, the toolbelt first for agent-ci's own commands.
 */
export const BASE_ENV: Readonly<Record<string, string>> = {
  PATH: FALLBACK_PATH,
  HOME: "/tmp/home",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  TERM: "dumb",
  CI: "true",
  AGENT_CI: "1",
  GIT_TERMINAL_PROMPT: "0",
  GIT_EDITOR: "true",
  GIT_PAGER: "cat",
  PAGER: "cat",
};

/**
 * Added where /workspace is not the agent's own (plan mode: root's; Podman: the keeper's, see the spec): git
 * refuses a work tree another user owns ("dubious ownership") unless safe.directory names it, and config
 * from the environment counts. The repository's config there is the user's checkout's, not the agent's.
 */
const SAFE_DIRECTORY_ENV: Readonly<Record<string, string>> = {
  GIT_CONFIG_COUNT: "1",
  GIT_CONFIG_KEY_0: "safe.directory",
  GIT_CONFIG_VALUE_0: WORKSPACE_ROOT,
};

/** `--ca-cert`: the CA alone and the image's bundle with it, written by the keeper (the agent cannot change them). */
export const CA_DIR = "/tmp/agent-ci-ca";
export const CA_FILE = `${CA_DIR}/ca.pem`;
export const CA_BUNDLE = `${CA_DIR}/bundle.pem`;
/** What OpenSSL, curl, git, pip, requests, npm and Node read for trusted CAs. */
const CA_ENV: Readonly<Record<string, string>> = {
  NODE_EXTRA_CA_CERTS: CA_FILE,
  SSL_CERT_FILE: CA_BUNDLE,
  CURL_CA_BUNDLE: CA_BUNDLE,
  GIT_SSL_CAINFO: CA_BUNDLE,
  PIP_CERT: CA_BUNDLE,
  REQUESTS_CA_BUNDLE: CA_BUNDLE,
  npm_config_cafile: CA_BUNDLE,
};

/** What a run's commands get besides the request's own: fixed once the container runs. */
export interface CommandSettings {
  /** The image's environment (PATH among it): the Bash tool's scripts run in it. */
  imageEnv: Readonly<Record<string, string>>;
  /** The project's Node.js (node/volume.ts): first on the PATH of the Bash tool's scripts. */
  nodeBin?: string;
  /** /workspace is not the agent's own (plan mode, or an engine that gives it to the keeper). */
  safeDirectory: boolean;
  /** `--env NAME`: values passed through by name. */
  passEnv?: Readonly<Record<string, string>>;
  /** `--ca-cert` was given: commands trust it. */
  caCert: boolean;
  /** The run's egress proxy: commands are pointed at it while it is active. */
  egress?: EgressSidecar;
}

/**
 * The environment of one command. agent-ci's own commands (argv) find the toolbelt first and get nothing
 * from the image's environment (an LD_PRELOAD there must not reach them); the Bash tool's scripts get the
 * image's environment and PATH, with the toolbelt last so the image's own git and bash win, and the project's
 * Node.js (where the run mounted one) first, so its node, npm and npx win over the image's.
 */
export function commandEnv(
  settings: CommandSettings,
  request: Pick<ExecRequest, "argv" | "env" | "caller">,
): Record<string, string> {
  const own = request.argv !== undefined;
  const imagePath = settings.imageEnv.PATH ?? FALLBACK_PATH;
  const scriptPath = `${imagePath}:${TOOLBELT_BIN}`;
  const pathValue = own
    ? `${TOOLBELT_BIN}:${imagePath}`
    : settings.nodeBin
      ? `${settings.nodeBin}:${scriptPath}`
      : scriptPath;
  return {
    ...(own ? {} : settings.imageEnv),
    ...BASE_ENV,
    PATH: pathValue,
    ...(settings.safeDirectory ? SAFE_DIRECTORY_ENV : {}),
    ...settings.passEnv,
    ...(settings.egress?.active ? proxyEnv(request.caller) : {}),
    // `--inject-secret NAME`: NAME holds the placeholder that the proxy replaces with the value for its host.
    ...Object.fromEntries(settings.egress?.options.injections.map((i) => [i.name, i.placeholder]) ?? []),
    ...(settings.caCert ? CA_ENV : {}),
    ...request.env,
  };
}

/** An environment as the engine takes it (`NAME=value` strings). */
export const envList = (env: Readonly<Record<string, string>>): string[] =>
  Object.entries(env).map(([k, v]) => `${k}=${v}`);
