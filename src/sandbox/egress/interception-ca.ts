// The run's own CA for `--inject-secret`: made in agent-ci's process when the sidecar starts, it signs one
// certificate for each host a secret is injected for, and is then dropped. Its private key is a WebCrypto
// key made non-extractable: it cannot be written anywhere, so neither the sandbox nor the sidecar ever holds
// it. The sandbox trusts the CA's certificate (through --ca-cert's path), the sidecar gets the hosts'
// certificates and keys: it can answer as those hosts, and nothing else can be signed.
import "reflect-metadata";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
/** A run is bounded in hours: a day of validity, from a minute back (clocks of engine and host may differ). */
const VALID_MS = 24 * 3600_000;
const SKEW_MS = 60_000;

/** The CA's certificate (for the sandbox to trust), and a certificate with its key for each host. */
export interface InterceptionCerts {
  caPem: string;
  hosts: Record<string, { cert: string; key: string }>;
}

/** The WebCrypto types as @peculiar/x509 declares them (the DOM's; Node's webcrypto is the same at run time). */
type X509Crypto = Parameters<typeof x509.cryptoProvider.set>[0];
type X509KeyPair = x509.X509CertificateCreateSelfSignedParams["keys"];
type X509Key = x509.X509CertificateCreateWithKeyParams["signingKey"];
const asKeys = (keys: webcrypto.CryptoKeyPair) => keys as unknown as X509KeyPair;
const asKey = (key: webcrypto.CryptoKey) => key as unknown as X509Key;

const serial = () => Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString("hex");

export async function makeInterceptionCerts(
  runId: string,
  hosts: readonly string[],
): Promise<InterceptionCerts> {
  x509.cryptoProvider.set(webcrypto as unknown as X509Crypto);
  const notBefore = new Date(Date.now() - SKEW_MS);
  const notAfter = new Date(Date.now() + VALID_MS);
  const caKeys = await webcrypto.subtle.generateKey(ALGORITHM, false, ["sign", "verify"]);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=agent-ci run ${runId} secret injection CA`,
    notBefore,
    notAfter,
    keys: asKeys(caKeys),
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(asKey(caKeys.publicKey)),
    ],
  });
  const certs: InterceptionCerts["hosts"] = {};
  for (const host of new Set(hosts)) {
    const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: `CN=${host}`,
      issuer: ca.subject,
      notBefore,
      notAfter,
      signingKey: asKey(caKeys.privateKey),
      publicKey: asKey(keys.publicKey),
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([{ type: "dns", value: host }]),
        await x509.AuthorityKeyIdentifierExtension.create(ca),
      ],
    });
    const pkcs8 = await webcrypto.subtle.exportKey("pkcs8", keys.privateKey);
    certs[host] = { cert: cert.toString("pem"), key: x509.PemConverter.encode(pkcs8, "PRIVATE KEY") };
  }
  return { caPem: ca.toString("pem"), hosts: certs };
}
