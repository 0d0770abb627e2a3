// Credential files the copy-in never takes whole, and those it copies without their credentials.
//
// Held back (B5): a cloud auth step writes its credentials where the workflow can find them, often inside the
// workspace: google-github-actions/auth writes `gha-creds-<random>.json` (an OIDC request token or a
// service-account key) at the checkout's root and names it in GOOGLE_APPLICATION_CREDENTIALS and friends. The
// file is untracked, and on a pull-request event the pull request writes the `.gitignore` that would have kept
// it out, so the copy-in would otherwise take it. The runner's environment says which files these are; the list
// below is the one definition of the variables that name one (the runner's list of credential variables
// includes it). Files that are nothing but credentials are held back by name at any depth (B12): `.netrc`,
// git's credential store `.git-credentials`, docker's old `.dockercfg`.
//
// Stripped (S2, B12): the package managers' configuration files, at any depth, are copied without the entries
// that carry a credential (`.npmrc`, `.yarnrc`, `.yarnrc.yml`, `.pypirc`, `pip.conf`, `.docker/config.json`),
// and each is recorded with what was removed, never the value; one that cannot be read as its format, or is
// over MAX_STRIPPED_BYTES, is held back. Every stripper is one pass over the file. Git's own config files are
// git-config-credentials.ts's.
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
export function relativeInside(root: string, abs: string): string | undefined {
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
    for (const rel of [relativeInside(workspace, abs), real && relativeInside(realWorkspace, real)])
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

/** A credential file the copy held back whole, or copied without its credentials (`removed` names what went). */
export interface HeldCredentials {
  path: string;
  reason: string;
  /** The entries removed from a file that was copied (names only, never a value); absent when held back whole. */
  removed?: string[];
}

/** The reason recorded for a file copied without its credentials. */
export const STRIPPED_REASON =
  "copied without its credentials (the entries named were removed before the copy)";

/** Why a file of `format` is held back when it cannot be read as one: its credentials could not be found. */
export const unreadableReason = (format: string): string =>
  `${format} that could not be read as one, so its credentials could not be removed: never copied in`;

/** Removed entries listed per file at most; the rest are counted. */
export const MAX_REMOVED_LISTED = 20;

/** The names of what was removed from one file, each once, in order, bounded. */
export function listRemoved(names: readonly string[]): string[] {
  const unique = [...new Set(names)];
  if (unique.length <= MAX_REMOVED_LISTED) return unique;
  return [...unique.slice(0, MAX_REMOVED_LISTED), `… and ${unique.length - MAX_REMOVED_LISTED} more`];
}

const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isSchemeChar = (c: number) => isLetter(c) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
/** Characters that end a URL's authority (RFC 3986's `/ ? #`, and what ends a URL inside other text). */
const AUTHORITY_END = new Set([..."/?#\"'<>\\ \t\r\n"].map((c) => c.charCodeAt(0)));
/** Schemes whose bare user name is a login, not a secret (`ssh://git@github.com/o/r`). */
const SSH_SCHEMES = new Set(["ssh", "git+ssh", "ssh+git"]);

function urlCredentials(text: string, mask: boolean): string {
  let out = "";
  let last = 0;
  for (let sep = text.indexOf("://"); sep !== -1; sep = text.indexOf("://", sep + 3)) {
    // Back over the scheme (it holds no `:` or `/`, so no character is visited twice), which starts with a letter.
    let start = sep;
    while (start > 0 && isSchemeChar(text.charCodeAt(start - 1))) start -= 1;
    while (start < sep && !isLetter(text.charCodeAt(start))) start += 1;
    if (start === sep) continue;
    const from = sep + 3;
    let at = -1;
    for (let i = from; i < text.length && !AUTHORITY_END.has(text.charCodeAt(i)); i++)
      if (text.charCodeAt(i) === 64) at = i;
    if (at === -1) continue;
    if (!text.slice(from, at).includes(":") && SSH_SCHEMES.has(text.slice(start, sep).toLowerCase()))
      continue;
    out += text.slice(last, from) + (mask ? "***" : "");
    last = mask ? at : at + 1;
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * `text` with the userinfo of every URL in it removed (`https://user:token@host/` → `https://host/`): any
 * userinfo with a password, and a bare user name too (GitHub and others take a token as the user name), except
 * in an ssh URL. A URL's authority ends at `/`, `?`, `#`, a quote or white space; its userinfo runs to the
 * authority's last `@`. Linear in the text's length.
 */
export function withoutUrlCredentials(text: string): string {
  return urlCredentials(text, false);
}

/** `text` with the userinfo `withoutUrlCredentials` removes shown as `***` (to name a key that holds one). */
export function maskUrlCredentials(text: string): string {
  return urlCredentials(text, true);
}

/** The credentials removed from a file: its new content, and the names of what went (empty: nothing did). */
export interface Stripped {
  content: Buffer;
  removed: string[];
}

/**
 * A package manager's configuration file larger than this is held back unread: real ones are a few
 * kilobytes, and each is read whole, as one string, in the process that starts the container.
 */
export const MAX_STRIPPED_BYTES = 1024 * 1024;

/** How the copy treats a credential file: held back whole, or copied through `strip`. */
export type CredentialFileRule =
  | { holdBack: string }
  | {
      /** What the file is, for the reason recorded when it cannot be read (`an npm config (.npmrc)`). */
      format: string;
      /** Undefined when the file cannot be read as its format: it is held back then. */
      strip: (content: Buffer) => Stripped | undefined;
    };

/** Files that hold nothing but credentials, by name at any depth. */
const HELD_BY_NAME: ReadonlyMap<string, string> = new Map([
  [".netrc", "a .netrc (logins and passwords for hosts): never copied in"],
  ["_netrc", "a _netrc (logins and passwords for hosts): never copied in"],
  [".git-credentials", "git's credential store (URLs with their passwords): never copied in"],
  [".dockercfg", "docker's old registry credentials file: never copied in"],
]);

/** Line-based formats are read byte for byte (latin1), so that what is kept is copied unchanged. */
function byLines(strip: (text: string) => { text: string; removed: string[] } | undefined) {
  return (content: Buffer): Stripped | undefined => {
    const stripped = strip(content.toString("latin1"));
    if (!stripped) return undefined;
    return {
      content: stripped.removed.length ? Buffer.from(stripped.text, "latin1") : content,
      removed: stripped.removed,
    };
  };
}

/** Where a line's text starts past its indentation: spaces and tabs. */
function indentOf(line: string): number {
  let i = 0;
  while (i < line.length && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i += 1;
  return i;
}

/** Keys of npm's and yarn 1's configuration whose value is a credential (after a `//host/:` scope). */
const NPM_SECRET_KEYS = new Set(["_auth", "_authtoken", "_password", "npmauthtoken", "npmauthident"]);

/**
 * The key of an `.npmrc` (`key = value`, ini) or `.yarnrc` (`key value`, yarn 1) line, quoted or not, a
 * comment's too (`#` or `;`): a commented auth line still holds the token.
 */
function npmKey(line: string): string | undefined {
  let i = 0;
  while (i < line.length && " \t#;".includes(line[i]!)) i += 1;
  const quote = line[i];
  if (quote === '"' || quote === "'") {
    const close = line.indexOf(quote, i + 1);
    return close === -1 ? undefined : line.slice(i + 1, close);
  }
  let end = i;
  while (end < line.length && !"= \t\r".includes(line[end]!)) end += 1;
  return end > i ? line.slice(i, end) : undefined;
}

/** `.npmrc` and `.yarnrc`: auth lines (`//host/:_authToken=`, `_auth`, `_password`) dropped, URL userinfo removed. */
const stripNpmrc = byLines((text) => {
  const removed: string[] = [];
  const lines: string[] = [];
  for (const line of text.split("\n")) {
    const key = npmKey(line);
    if (key !== undefined && NPM_SECRET_KEYS.has(key.slice(key.lastIndexOf(":") + 1).toLowerCase())) {
      removed.push(maskUrlCredentials(key));
      continue;
    }
    const stripped = withoutUrlCredentials(line);
    if (stripped !== line)
      removed.push(`${key ? maskUrlCredentials(key) : "a line"} (user:password@ in a URL)`);
    lines.push(stripped);
  }
  return { text: lines.join("\n"), removed };
});

/**
 * An ini file as Python's configparser reads it (`.pypirc`, `pip.conf`): `[section]`, `key = value` or
 * `key: value` (indented or not), a value continued on the lines indented deeper than its key, full-line
 * comments (`#`, `;`; like blank lines, they do not end a value). The `secretKeys` are dropped with their
 * continuation lines; every URL loses its userinfo (pip's `index-url`, `extra-index-url`, a `.pypirc`
 * `repository`).
 */
function stripIni(secretKeys: ReadonlySet<string>) {
  return byLines((text) => {
    const removed: string[] = [];
    const lines: string[] = [];
    let section = "";
    let key = "";
    let keyIndent = -1;
    let dropping = false;
    for (const line of text.split("\n")) {
      const indent = indentOf(line);
      const body = line.slice(indent);
      const blank = body === "" || body === "\r";
      const comment = body.startsWith("#") || body.startsWith(";");
      const continued = !blank && !comment && keyIndent >= 0 && indent > keyIndent;
      if (dropping && continued) continue;
      if (!blank && !comment && !continued) {
        dropping = false;
        if (body.startsWith("[")) {
          const close = body.indexOf("]");
          section = maskUrlCredentials(body.slice(1, close === -1 ? body.length : close));
          keyIndent = -1;
        } else {
          let end = 0;
          while (end < body.length && body[end] !== "=" && body[end] !== ":") end += 1;
          key = maskUrlCredentials(body.slice(0, end).trim().toLowerCase());
          keyIndent = indent;
          if (secretKeys.has(key)) {
            removed.push(`[${section}] ${key}`);
            dropping = true;
            continue;
          }
        }
      }
      const stripped = withoutUrlCredentials(line);
      if (stripped !== line) removed.push(`[${section}] ${key} (user:password@ in a URL)`);
      lines.push(stripped);
    }
    return { text: lines.join("\n"), removed };
  });
}

/** Yarn 2+'s keys whose value is a credential, wherever they are (top level, `npmScopes`, `npmRegistries`). */
const YARN_SECRET_KEYS = ["npmauthtoken", "npmauthident"];

/** The key of a YAML block mapping line's text (past its indentation and any `- `), quoted or plain, or undefined. */
function yamlKey(body: string): string | undefined {
  const quote = body[0];
  if (quote === '"' || quote === "'") {
    const close = body.indexOf(quote, 1);
    if (close === -1) return undefined;
    let colon = close + 1;
    while (body[colon] === " " || body[colon] === "\t") colon += 1;
    return body[colon] === ":" ? body.slice(1, close) : undefined;
  }
  const colon = body.indexOf(": ");
  const end = colon !== -1 ? colon : body.endsWith(":") ? body.length - 1 : -1;
  return end > 0 && !body.startsWith("#") ? body.slice(0, end).trim() : undefined;
}

/**
 * `.yarnrc.yml`, line by line as a YAML block mapping: a `npmAuthToken` or `npmAuthIdent` key goes with its
 * value's lines (a block scalar or a continued scalar: the lines indented deeper), at any
 * level (`npmScopes.<scope>`, `npmRegistries.<url>`); URL userinfo goes from every line. A file that names
 * either key any other way (a flow mapping, an alias for the value) is refused: it is held back whole.
 * One pass over the lines (a YAML parser took seconds on a few hundred kilobytes of blank lines).
 */
const stripYarnYaml = byLines((text) => {
  const removed: string[] = [];
  const lines: string[] = [];
  const path: Array<{ indent: number; key: string }> = [];
  let droppingDeeperThan = -1;
  let refused = false;
  for (const line of text.split("\n")) {
    let indent = indentOf(line);
    let body = line.slice(indent);
    if (body === "" || body === "\r") {
      lines.push(line); // a blank line holds nothing, and does not end a value
      continue;
    }
    if (droppingDeeperThan >= 0 && indent > droppingDeeperThan) continue;
    droppingDeeperThan = -1;
    while (body.startsWith("- ")) {
      const item = 2 + indentOf(body.slice(2));
      indent += item;
      body = body.slice(item);
    }
    const key = yamlKey(body);
    if (key !== undefined) {
      while (path.length && path[path.length - 1]!.indent >= indent) path.pop();
      path.push({ indent, key });
      if (YARN_SECRET_KEYS.includes(key.toLowerCase())) {
        removed.push(maskUrlCredentials(path.map((p) => p.key).join(".")));
        if (
          body
            .slice(body.indexOf(":") + 1)
            .trimStart()
            .startsWith("*")
        )
          refused = true;
        droppingDeeperThan = indent;
        continue;
      }
    }
    const lower = body.toLowerCase();
    if (YARN_SECRET_KEYS.some((k) => lower.includes(k))) {
      if (!body.startsWith("#")) refused = true;
      removed.push(`a comment naming ${YARN_SECRET_KEYS.find((k) => lower.includes(k))}`);
      continue;
    }
    const stripped = withoutUrlCredentials(line);
    if (stripped !== line) {
      const where = path.length ? path.map((p) => p.key).join(".") : "a line";
      removed.push(`${maskUrlCredentials(where)} (user:password@ in a URL)`);
    }
    lines.push(stripped);
  }
  return refused ? undefined : { text: lines.join("\n"), removed };
});

/** The fields of a `.docker/config.json` `auths` entry that hold a credential. */
const DOCKER_SECRET_FIELDS = new Set(["auth", "password", "identitytoken", "registrytoken"]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

/** `.docker/config.json`: each registry's credentials under `auths` removed, and every URL's userinfo. */
function stripDockerConfig(content: Buffer): Stripped | undefined {
  let config: unknown;
  try {
    config = JSON.parse(content.toString("utf8"));
  } catch {
    return undefined;
  }
  const removed: string[] = [];
  if (isObject(config) && isObject(config.auths)) {
    for (const [registry, auth] of Object.entries(config.auths)) {
      if (!isObject(auth)) continue;
      for (const field of Object.keys(auth))
        if (DOCKER_SECRET_FIELDS.has(field.toLowerCase())) {
          delete auth[field];
          removed.push(`auths.${maskUrlCredentials(registry)}.${field}`);
        }
    }
  }
  // Every string, keys too, without a stack per level: a deeply nested file must not overflow it.
  const stack: unknown[] = [config];
  while (stack.length) {
    const node = stack.pop();
    if (!isObject(node)) continue;
    for (const key of Object.keys(node)) {
      const value = node[key];
      const bare = withoutUrlCredentials(key);
      if (typeof value === "string" && withoutUrlCredentials(value) !== value) {
        removed.push(`${maskUrlCredentials(key)} (user:password@ in a URL)`);
        node[key] = withoutUrlCredentials(value);
      }
      if (bare !== key) {
        removed.push(`${maskUrlCredentials(key)} (user:password@ in a key)`);
        node[bare] = node[key];
        delete node[key];
      }
      stack.push(value);
    }
  }
  return {
    content: removed.length ? Buffer.from(`${JSON.stringify(config, null, "\t")}\n`) : content,
    removed,
  };
}

/** The package managers' and tools' configuration files copied without their credentials, by name. */
const STRIPPED_BY_NAME: ReadonlyMap<string, CredentialFileRule> = new Map([
  [".npmrc", { format: "an npm config (.npmrc)", strip: stripNpmrc }],
  [".yarnrc", { format: "a yarn config (.yarnrc)", strip: stripNpmrc }],
  [".yarnrc.yml", { format: "a yarn config (.yarnrc.yml)", strip: stripYarnYaml }],
  [".pypirc", { format: "a .pypirc", strip: stripIni(new Set(["password"])) }],
  ["pip.conf", { format: "a pip config (pip.conf)", strip: stripIni(new Set()) }],
  ["pip.ini", { format: "a pip config (pip.ini)", strip: stripIni(new Set()) }],
]);

const DOCKER_CONFIG: CredentialFileRule = {
  format: "a docker config (.docker/config.json)",
  strip: stripDockerConfig,
};

/**
 * How the copy treats the file at a workspace-relative path, by its name at any depth: held back whole
 * (`.netrc`, `.git-credentials`), copied through a stripper (`.npmrc`, `.pypirc`, `.docker/config.json`, …),
 * or undefined (copied as it is).
 */
export function credentialFileRule(relPath: string): CredentialFileRule | undefined {
  const name = path.posix.basename(relPath);
  const held = HELD_BY_NAME.get(name);
  if (held) return { holdBack: held };
  if (name === "config.json" && path.posix.basename(path.posix.dirname(relPath)) === ".docker")
    return DOCKER_CONFIG;
  return STRIPPED_BY_NAME.get(name);
}
