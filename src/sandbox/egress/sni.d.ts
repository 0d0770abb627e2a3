// The `sni` package ships no types: one function from a buffer holding a TLS ClientHello to its server name.
declare module "sni" {
  export default function extractSni(data: Buffer): string | null;
}
