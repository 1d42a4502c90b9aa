import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Shell and MCP tests spawn real processes; two cores are all CI has.
    maxWorkers: 2,
  },
});
