// Debian's Chromium, driven by playwright-core, for the browser tests: headless, no GPU, nothing that reaches
// the network on its own (so a test can tell that a page asked for nothing).
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium package (scripts/browser-deps.sh as root)`,
    );
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
