// The egress sidecar's program, as text. From source (vitest, tsx) it is bundled here from ./proxy-main.ts
// when this module is first imported; `npm run build` replaces this whole module with the bundled text
// (scripts/egress-proxy.mjs), so the built CLI and Action carry the string and never load esbuild.
import { bundleEgressProxy } from "../../../scripts/egress-proxy.mjs";

export const EGRESS_PROXY_JS: string = await bundleEgressProxy();
