// The setup cache (docs/setup-cache.md): the sandbox's start restores or saves the setup's snapshot; the run
// says what it did once the sandbox is ready, and waits for its save beyond the engine (the Actions cache),
// which went on while the agent worked, before the record.
import { setupCacheLine } from "../../../report/index.js";
import type { Capability } from "../capability.js";
import { setupCacheSection } from "./record.js";

export const setupCache: Capability = {
  name: "setup-cache",
  options: ["setup", "setup_refresh", "setup_cache", "setup_cache_key_files", "setup_cache_max_age"],
  forRun: () => ({
    opened: (sandbox, log) => {
      if (sandbox.setupCache) log(setupCacheLine(sandbox.setupCache));
    },
    settle: async (start) => {
      await start.setupCacheStoring;
    },
    section: setupCacheSection,
  }),
};
