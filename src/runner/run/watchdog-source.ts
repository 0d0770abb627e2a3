// The watchdog's worker program (./watchdog-worker.ts), as text: the worker is started from it with `eval`.
// From source (vitest, tsx) it is bundled here when this module is first imported; `npm run build` replaces
// this whole module with the bundled text (scripts/embedded.mjs), so the built CLI and Action carry the
// string and never load esbuild.
import { bundleEmbedded } from "../../../scripts/embedded.mjs";

export const WATCHDOG_WORKER_JS: string = await bundleEmbedded("watchdogWorker");
