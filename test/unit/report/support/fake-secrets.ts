// Fake secrets shaped like real tokens, for the redaction tests. Never real values. Each is assembled at run time
// from pieces so that no token-shaped literal sits in the repository (secret scanners would flag it).

function body(
  seed: string,
  length: number,
  alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
): string {
  let out = "";
  let state = [...seed].reduce((sum, char) => (sum * 31 + char.charCodeAt(0)) >>> 0, 7);
  while (out.length < length) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    out += alphabet[state % alphabet.length];
  }
  return out;
}

const b64url = (value: string): string => Buffer.from(value).toString("base64url");

/** Values the run knows are secret (API key, GitHub token, a user-marked secret). */
export const KNOWN_SECRETS = {
  anthropicKey: [
    "sk",
    "ant",
    "api03",
    body("anthropic", 80, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"),
  ].join("-"),
  githubToken: ["ghs", body("github-actions", 36)].join("_"),
  userSecret: ["Tr0ub4dor", "&3 horse/battery+staple", body("user", 6)].join(""),
};

/** Token formats the redactor must catch without knowing the value. */
export const FORMAT_SECRETS: Record<string, string> = {
  ghp: ["ghp", body("ghp", 36)].join("_"),
  gho: ["gho", body("gho", 36)].join("_"),
  ghu: ["ghu", body("ghu", 36)].join("_"),
  ghr: ["ghr", body("ghr", 36)].join("_"),
  githubPat: ["github", "pat", body("pat1", 22), body("pat2", 59)].join("_"),
  anthropic: ["sk", "ant", "admin01", body("admin", 60)].join("-"),
  awsAkia: "AK" + "IA" + body("akia", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
  awsAsia: "AS" + "IA" + body("asia", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
  slack: ["xo" + "xb", "1234567890", "0987654321", body("slack", 24)].join("-"),
  jwt: [
    b64url('{"alg":"HS256","typ":"JWT"}'),
    b64url('{"sub":"ci-bot","exp":1893456000}'),
    body("sig", 43),
  ].join("."),
  bearer: body("bearer", 40) + "9",
  basic: Buffer.from("ci-user:" + body("basicpw", 20)).toString("base64"),
  awsSessionToken: [
    "IQoJb3JpZ2lu",
    "X2Vj",
    body("session", 300, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+"),
  ].join(""),
  googleAccessToken: [
    "ya",
    "29.",
    "a0",
    body("google", 120, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"),
  ].join(""),
  awsSecret: body("awssecret", 40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+"),
  pemBody: body("pem", 64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"),
};

export function pemBlock(): string {
  const kind = ["RSA", "PRIVATE", "KEY"].join(" ");
  return `-----BEGIN ${kind}-----\n${FORMAT_SECRETS.pemBody}\n${body("pem2", 64)}\n-----END ${kind}-----`;
}

/** The contexts a token is planted in: plain, next to ANSI codes, inside JSON escapes, in headers. */
export function plantings(): string[] {
  const known = Object.values(KNOWN_SECRETS);
  const user = KNOWN_SECRETS.userSecret;
  const formats = Object.entries(FORMAT_SECRETS).filter(
    ([name]) => !["bearer", "basic", "awsSecret", "pemBody"].includes(name),
  );
  return [
    ...known,
    ...known.map((secret) => `\u001b[31m${secret}\u001b[0m`),
    Buffer.from(user).toString("base64"),
    Buffer.from(`${user}\n`).toString("base64"),
    Buffer.from(`x-access-token:${KNOWN_SECRETS.githubToken}`).toString("base64"),
    encodeURIComponent(user),
    Buffer.from(user).toString("hex"),
    JSON.stringify({ token: user }),
    ...formats.map(([, token]) => token),
    ...formats.map(([, token]) => `\u001b[1;33m${token}\u001b[0m`),
    ...formats.map(([, token]) => JSON.stringify(JSON.stringify({ auth: token }))),
    `Authorization: Bearer ${FORMAT_SECRETS.bearer}`,
    `curl -H "Authorization: Basic ${FORMAT_SECRETS.basic}" https://api.example.com`,
    `{"Authorization":"token ${FORMAT_SECRETS.bearer}"}`,
    `aws_secret_access_key = ${FORMAT_SECRETS.awsSecret}`,
    pemBlock(),
    JSON.stringify(pemBlock()),
  ];
}

/** Strings that must appear in no output, whatever form the secret took on the way in. */
export function forbiddenStrings(): string[] {
  return [
    ...Object.values(KNOWN_SECRETS),
    Buffer.from(KNOWN_SECRETS.userSecret).toString("base64").replace(/=+$/, ""),
    encodeURIComponent(KNOWN_SECRETS.userSecret),
    Buffer.from(KNOWN_SECRETS.userSecret).toString("hex"),
    ...Object.values(FORMAT_SECRETS),
  ];
}
