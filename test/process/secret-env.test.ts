import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { modelCommandEnv } from "../../src/process/env.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";

const DECOYS = {
  CC_TEST_API_KEY: "decoy-api-key-1190",
  CC_TEST_GITHUB_TOKEN: "decoy-token-2281",
  AWS_SECRET_ACCESS_KEY: "decoy-aws-3372",
  CC_TEST_DB_PASSWORD: "decoy-password-4463",
};
const saved: Record<string, string | undefined> = {};

beforeEach(() => {
  for (const [name, value] of Object.entries(DECOYS)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

const printAll = Object.keys(DECOYS)
  .map((name) => `echo "${name}=$${name}"`)
  .join("; ");

describe("credentials stay out of the commands the model runs", () => {
  it("Bash sees none of them, and ordinary variables still arrive", async () => {
    const ctx = testContext();
    const text = ToolResult.text(await runTool("Bash", { command: `${printAll}; echo "home=$HOME"` }, ctx));
    for (const decoy of Object.values(DECOYS)) expect(text).not.toContain(decoy);
    expect(text).toContain(`home=${process.env.HOME}`);
  });

  it("nor does a background job", async () => {
    const ctx = testContext();
    const out = join(ctx.workingDir, "bg.txt");
    const started = await runTool(
      "Bash",
      { command: `(${printAll}) > bg.txt`, run_in_background: true },
      ctx,
    );
    expect(started.isError).toBe(false);
    for (let i = 0; i < 100 && !readFileSync(out, { flag: "a+" }).toString().includes("PASSWORD"); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const text = readFileSync(out, "utf8");
    expect(text).toContain("CC_TEST_DB_PASSWORD=");
    for (const decoy of Object.values(DECOYS)) expect(text).not.toContain(decoy);
  });

  it("shellEnvPassthrough lets chosen names through (exact names and globs)", async () => {
    const dir = tempDir();
    const config = emptySettings(dir);
    config.envPassthrough.push("CC_TEST_GITHUB_TOKEN", "AWS_*");
    const ctx = testContext({ workingDir: dir, config });
    const text = ToolResult.text(await runTool("Bash", { command: printAll }, ctx));
    expect(text).toContain(DECOYS.CC_TEST_GITHUB_TOKEN);
    expect(text).toContain(DECOYS.AWS_SECRET_ACCESS_KEY);
    expect(text).not.toContain(DECOYS.CC_TEST_API_KEY);
    expect(text).not.toContain(DECOYS.CC_TEST_DB_PASSWORD);
  });

  it("hooks, the user's own commands, keep the whole environment", async () => {
    const dir = tempDir();
    const config = emptySettings(dir);
    const out = join(dir, "hook-env.txt");
    config.hooks.PreToolUse?.push({
      matcher: "Bash",
      hooks: [{ type: "command", command: `echo "$CC_TEST_API_KEY" > '${out}'` }],
    });
    const ctx = testContext({ workingDir: dir, config });
    await runTool("Bash", { command: "true" }, ctx);
    expect(readFileSync(out, "utf8")).toContain(DECOYS.CC_TEST_API_KEY);
  });

  it("names that only look alike are kept", () => {
    process.env.CC_TEST_SSH_AUTH_SOCK = "/tmp/agent.sock";
    try {
      expect(modelCommandEnv().CC_TEST_SSH_AUTH_SOCK).toBe("/tmp/agent.sock");
      expect(modelCommandEnv().CC_TEST_API_KEY).toBeUndefined();
    } finally {
      delete process.env.CC_TEST_SSH_AUTH_SOCK;
    }
  });
});
