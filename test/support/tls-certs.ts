// Certificates made with openssl for one test run: a CA, and certificates it signs — a server's for the
// names and addresses a test serves (the egress and web tests' origins, an engine reached over TCP with
// mutual TLS) and a client's, laid out as DOCKER_CERT_PATH expects (ca.pem, cert.pem, key.pem).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

function openssl(dir: string, ...args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

/** A CA in `dir`: ca.pem and its key. */
export function makeCa(dir: string, cn: string): void {
  fs.mkdirSync(dir, { recursive: true });
  openssl(
    dir,
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    "ca-key.pem",
    "-out",
    "ca.pem",
    "-days",
    "1",
    "-subj",
    `/CN=${cn}`,
  );
}

/** What a certificate is for: a server at these names and addresses, or a client. */
export type CertUse = { server: { names?: readonly string[]; addresses: readonly string[] } } | "client";

/** A certificate signed by the CA in `caDir`, written to `outDir` (cert.pem, key.pem, and the CA's ca.pem). */
export function makeCert(caDir: string, outDir: string, use: CertUse, cn = "agent-ci-test"): void {
  fs.mkdirSync(outDir, { recursive: true });
  const ext = path.join(outDir, "cert.ext");
  const alt =
    use === "client"
      ? []
      : [...(use.server.names ?? []).map((n) => `DNS:${n}`), ...use.server.addresses.map((a) => `IP:${a}`)];
  fs.writeFileSync(
    ext,
    use === "client"
      ? "extendedKeyUsage=clientAuth\n"
      : `subjectAltName=${alt.join(",")}\nextendedKeyUsage=serverAuth\n`,
  );
  const csr = "req.csr";
  openssl(
    outDir,
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    "key.pem",
    "-out",
    csr,
    "-subj",
    `/CN=${cn}`,
  );
  openssl(
    outDir,
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    path.join(caDir, "ca.pem"),
    "-CAkey",
    path.join(caDir, "ca-key.pem"),
    "-CAcreateserial",
    "-out",
    "cert.pem",
    "-days",
    "1",
    "-extfile",
    ext,
  );
  if (path.resolve(outDir) !== path.resolve(caDir))
    fs.copyFileSync(path.join(caDir, "ca.pem"), path.join(outDir, "ca.pem"));
}

/** The engine's server certificate for 127.0.0.1. */
export const ENGINE_SERVER: CertUse = { server: { addresses: ["127.0.0.1"] } };
