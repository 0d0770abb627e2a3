// Certificates for an engine reached over TCP with mutual TLS, made with openssl for one test run: a CA,
// a server certificate for 127.0.0.1 and a client certificate, laid out as DOCKER_CERT_PATH expects.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

function openssl(dir: string, ...args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

/** A CA, and a certificate signed by it for `name` (server: IP SAN 127.0.0.1; client: clientAuth). */
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

export function makeCert(caDir: string, outDir: string, kind: "server" | "client"): void {
  fs.mkdirSync(outDir, { recursive: true });
  const ext = path.join(outDir, `${kind}.ext`);
  fs.writeFileSync(
    ext,
    kind === "server"
      ? "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
      : "extendedKeyUsage=clientAuth\n",
  );
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
    "req.csr",
    "-subj",
    `/CN=agent-ci-${kind}`,
  );
  openssl(
    outDir,
    "x509",
    "-req",
    "-in",
    "req.csr",
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
  fs.copyFileSync(path.join(caDir, "ca.pem"), path.join(outDir, "ca.pem"));
}
