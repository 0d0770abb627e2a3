// The script inlined into report.html, as text. From source (vitest, tsx) it is bundled here from
// ./html-client/main.ts when this module is first imported; `npm run build` replaces this whole module with the
// bundled text (scripts/embedded.mjs), so the built CLI and Action carry the string and never load esbuild.
import { bundleEmbedded } from "../../scripts/embedded.mjs";

export const REPORT_CLIENT_JS: string = await bundleEmbedded("reportClient");
