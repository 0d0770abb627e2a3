import type { Plugin } from "esbuild";

/** report.html's script, bundled from src/report/html-client/main.ts into one IIFE. */
export function bundleReportClient(): Promise<string>;
/** esbuild plugin replacing src/report/html-client-js.ts with the bundled script as a string constant. */
export function reportClientPlugin(): Plugin;
