// The in-container exec helper's program, as text: agent-ci starts it with `node -e` in each run's container.
// From source (vitest, tsx) it is bundled here from ./helper/main.ts when this module is first imported;
// `npm run build` replaces this whole module with the bundled text (scripts/embedded.mjs), so the built CLI
// and Action carry the string and never load esbuild.
import { bundleEmbedded } from "../../../scripts/embedded.mjs";

export const HELPER_JS: string = await bundleEmbedded("sandboxHelper");
