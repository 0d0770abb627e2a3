import { defineConfig } from "vitest/config";

const shared = {
  restoreMocks: true,
  unstubEnvs: true,
  testTimeout: 60_000,
  hookTimeout: 120_000,
  retry: process.env.CI ? 1 : 0,
};

export default defineConfig({
  test: {
    // The integration tests share one Docker engine on a 2-core machine: a few files at a time.
    maxWorkers: 3,
    projects: [
      // Pure logic against fakes: runs on a machine with no Docker engine (`npm run test:unit`).
      { test: { ...shared, name: "unit", include: ["test/unit/**/*.test.ts"] } },
      // Everything that needs the engine and the sandbox image, built once before the files start.
      {
        test: {
          ...shared,
          name: "engine",
          include: ["test/**/*.test.ts"],
          exclude: ["test/unit/**"],
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
    ],
  },
});
