import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    restoreMocks: true,
    unstubEnvs: true,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The integration tests share one Docker engine on a 2-core machine: a few files at a time.
    maxWorkers: 3,
    retry: process.env.CI ? 1 : 0,
    globalSetup: ["test/support/global-setup.ts"],
  },
});
