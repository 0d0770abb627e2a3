// Cloud credential files the copy-in never takes (B5). A cloud auth step writes its credentials where the
// workflow can find them, often inside the workspace: google-github-actions/auth writes
// `gha-creds-<random>.json` (an OIDC request token or a service-account key) at the checkout's root and
// names it in GOOGLE_APPLICATION_CREDENTIALS and friends. The file is untracked, and on a pull-request event
// the pull request writes the `.gitignore` that would have kept it out, so the copy-in would otherwise take
// it. The runner's environment says which files these are; the list below is the one definition of the
// variables that name one (the runner's list of credential variables includes it).
import fs from "node:fs";
import path from "node:path";

/** Variables whose value is the path of a cloud credential or configuration file. */
export const CLOUD_CREDENTIAL_FILE_VARIABLES = [
  "GOOGLE_APPLICATION_CREDENTIALS",
  "GOOGLE_GHA_CREDS_PATH",
  "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE",
  "AWS_SHARED_CREDENTIALS_FILE",
  "AWS_CONFIG_FILE",
  "AWS_WEB_IDENTITY_TOKEN_FILE",
] as const;

/** The name google-github-actions/auth gives the credentials file it writes. */
const GHA_CREDS_NAME = /^gha-creds-.*\.json$/s;

const GHA_CREDS_REASON =
  "a cloud credentials file (gha-creds-*.json, as google-github-actions/auth writes it): never copied in";

/** A path relative to `root` when `abs` lies inside it (not `root` itself), else undefined. */
function inside(root: string, abs: string): string | undefined {
  const rel = path.relative(root, abs);
  if (!rel || rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep).join("/");
}

function realpathOrUndefined(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * The workspace-relative paths the credential variables in `env` name, each with its reason: the path as
 * written (resolved from this process's directory, as the cloud SDKs do) and, where it exists, the file it
 * resolves to through symlinks, when either lies inside the workspace.
 */
function namedPaths(workspace: string, env: NodeJS.ProcessEnv): Map<string, string> {
  const named = new Map<string, string>();
  const realWorkspace = realpathOrUndefined(workspace) ?? workspace;
  for (const variable of CLOUD_CREDENTIAL_FILE_VARIABLES) {
    const value = env[variable]?.trim();
    if (!value) continue;
    const abs = path.resolve(value);
    const real = realpathOrUndefined(abs);
    const reason = `a cloud credentials file (${variable} names it): never copied in`;
    for (const rel of [inside(workspace, abs), real && inside(realWorkspace, real)])
      if (rel && !named.has(rel)) named.set(rel, reason);
  }
  return named;
}

/**
 * Why a workspace-relative path is a cloud credential file the copy never takes, or undefined: a path with
 * a component named `gha-creds-*.json` (at any depth), or a path at or under one that a credential variable
 * in `env` names. Linear in the path's length.
 */
export function credentialFileMatcher(
  workspace: string,
  env: NodeJS.ProcessEnv = process.env,
): (relPath: string) => string | undefined {
  const named = namedPaths(workspace, env);
  return (relPath) => {
    let start = 0;
    for (;;) {
      const slash = relPath.indexOf("/", start);
      const end = slash === -1 ? relPath.length : slash;
      if (GHA_CREDS_NAME.test(relPath.slice(start, end))) return GHA_CREDS_REASON;
      if (named.size) {
        const reason = named.get(relPath.slice(0, end));
        if (reason) return reason;
      }
      if (slash === -1) return undefined;
      start = slash + 1;
    }
  };
}
