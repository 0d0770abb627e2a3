import type { Plugin } from "esbuild";

/** One of the programs agent-ci carries as text, bundled from its sources (see embedded.mjs). */
export function bundleEmbedded(
  name: "reportClient" | "egressProxy" | "sandboxHelper" | "watchdogWorker",
): Promise<string>;
/** esbuild plugin replacing each program's module with its bundled text as a string constant. */
export function embeddedPlugin(): Plugin;
/** esbuild's target for the toolbelt's Node (`node24`), from the version toolbelt/Dockerfile pins. */
export function toolbeltNodeTarget(): string;
