import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Shell and MCP tests spawn real processes; two cores are all CI has.
    maxWorkers: 2,
    // The web tests serve made-up host names from loopback: a proxy in the developer's environment would
    // take those requests away (test/web/proxy.test.ts passes its proxies explicitly).
    env: { HTTPS_PROXY: "", https_proxy: "", HTTP_PROXY: "", http_proxy: "" },
  },
});
