// Secrets the egress proxy adds on the sandbox's behalf (`--inject-secret NAME=header:host`): the sandbox's
// commands see NAME as a placeholder only, and the proxy puts the value of the host's environment variable
// NAME in place of the placeholder in that header, on requests to that host over TLS (which it terminates
// with a per-run CA, interception-ca.ts, and opens again to the host, verified). This module is the pure
// part, shared by the host and the sidecar's bundle: the syntax, the placeholder, the substitution.
import { normalizeHost } from "../../policy/network.js";

/** One `--inject-secret`: the variable the value comes from, the header it goes in, where it may go. */
export interface InjectRule {
  /** The host environment variable holding the value; inside the sandbox, the same name holds the placeholder. */
  name: string;
  /** The request header the placeholder is replaced in (lower case): `authorization` for npm, pip and git. */
  header: string;
  host: string;
  /** Only this port; undefined: any port of the host. */
  port?: number;
}

/** An injection as a run carries it: the placeholder the sandbox sees, and the value (never serialised). */
export interface Injection extends InjectRule {
  placeholder: string;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** An HTTP header name (RFC 9110's token). */
const HEADER = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** Headers that are the proxy's, the connection's or the message's framing: never a place for a secret. */
const RESERVED_HEADERS = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-connection",
  "transfer-encoding",
  "content-length",
  "te",
  "trailer",
  "upgrade",
]);

/** Reads `NAME=header:host[:port]`; a string saying what is wrong otherwise. */
export function parseInjectRule(text: string): InjectRule | string {
  const match = /^([^=]*)=([^:]*):([^:]*)(?::(\d{1,5}))?$/.exec(text.trim());
  const syntax =
    "give NAME=header:host[:port] (NAME: the environment variable holding the secret; e.g. NPM_TOKEN=authorization:npm.example.com)";
  if (!match) return syntax;
  const [, name = "", rawHeader = "", rawHost = "", rawPort] = match;
  if (!ENV_NAME.test(name)) return `${JSON.stringify(name)} is not an environment variable name; ${syntax}`;
  const header = rawHeader.toLowerCase();
  if (!HEADER.test(header)) return `${JSON.stringify(rawHeader)} is not a header name; ${syntax}`;
  if (RESERVED_HEADERS.has(header)) return `the ${header} header cannot carry a secret`;
  const host = normalizeHost(rawHost);
  if (!host || /^[0-9.]+$/.test(host)) return `${JSON.stringify(rawHost)} is not a host name; ${syntax}`;
  const port = rawPort === undefined ? undefined : Number(rawPort);
  if (port !== undefined && (port < 1 || port > 65535)) return "port out of range";
  return { name, header, host, port };
}

/** Is `host:port` where `rule` sends its secret? */
export const injectsAt = (rule: InjectRule, host: string, port: number): boolean =>
  normalizeHost(host) === rule.host && (rule.port === undefined || rule.port === port);

/** A rule the way it is written, without the variable: `header:host[:port]`. */
export const injectTarget = (rule: InjectRule): string =>
  `${rule.header}:${rule.host}${rule.port === undefined ? "" : `:${rule.port}`}`;

/**
 * The header's value with the placeholder replaced by the secret, or undefined when the placeholder is not
 * in it. Also inside `Basic` credentials (base64 of user:password), as git and pip send a token.
 */
export function substituteSecret(value: string, placeholder: string, secret: string): string | undefined {
  if (value.includes(placeholder)) return value.split(placeholder).join(secret);
  const basic = /^(Basic[ \t]+)([A-Za-z0-9+/]{1,4096}={0,2})[ \t]*$/i.exec(value);
  if (!basic?.[1] || !basic[2]) return undefined;
  const decoded = Buffer.from(basic[2], "base64").toString("utf8");
  if (!decoded.includes(placeholder)) return undefined;
  return `${basic[1]}${Buffer.from(decoded.split(placeholder).join(secret), "utf8").toString("base64")}`;
}

/** A value a header may carry: no control characters (a newline would start another header). */
export const headerSafe = (value: string): boolean => !/[\0-\x1f\x7f]/.test(value);
