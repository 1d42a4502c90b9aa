import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PermissionRequest } from "../../../src/core/permission.js";
import type { PermissionMode } from "../../../src/core/permission-level.js";
import { ToolResult } from "../../../src/core/result.js";
import { runTool } from "../../../src/executor/run.js";
import { loadSettings } from "../../../src/settings/load.js";
import { tempDir, testContext } from "../../helpers/context.js";

type Ctx = ReturnType<typeof testContext>;

async function call(ctx: Ctx, input: Record<string, unknown>) {
  const result = await runTool("Config", input, ctx);
  return { result, text: ToolResult.text(result), meta: result.metadata ?? {} };
}

let saved: string | undefined;
beforeEach(() => {
  saved = process.env.CLAUDE_CONFIG_DIR;
  process.env.CLAUDE_CONFIG_DIR = tempDir("cc-tools-user-");
});
afterEach(() => {
  if (saved === undefined) delete process.env.CLAUDE_CONFIG_DIR;
  else process.env.CLAUDE_CONFIG_DIR = saved;
});

/** A context on a workspace with settings loaded from disk, whose permission questions are recorded and answered. */
function configContext(mode: PermissionMode, answer: "allow" | "deny" = "allow") {
  const dir = tempDir();
  mkdirSync(join(dir, ".claude"));
  const asked: PermissionRequest[] = [];
  const ctx = testContext({
    workingDir: dir,
    config: loadSettings(dir),
    permissionMode: mode,
    permissionHandler: {
      name: "recorder",
      interactive: true,
      ask: async (request) => {
        asked.push(request);
        return answer === "allow"
          ? { behavior: "allow", scope: "once" }
          : { behavior: "deny", message: "no" };
      },
    },
  });
  return { ctx, asked, local: join(dir, ".claude", "settings.local.json") };
}

describe("Config", () => {
  it("writes a setting keeping the file's comments and formatting, and applies it to the session", async () => {
    const { ctx, local, asked } = configContext("acceptEdits");
    writeFileSync(local, '{\n    // my model\n    "model": "old",\n    "other": [1, 2]\n}\n');
    const set = await call(ctx, { setting: "model", value: "claude-sonnet" });
    expect(set.result.isError).toBe(false);
    expect(readFileSync(local, "utf8")).toBe(
      '{\n    // my model\n    "model": "claude-sonnet",\n    "other": [1, 2]\n}\n',
    );
    expect(ctx.config.raw.model).toBe("claude-sonnet");
    // Not a widening change: acceptEdits lets it through without asking.
    expect(asked).toEqual([]);
    const read = await call(ctx, { setting: "model" });
    expect(read.text).toContain('model = "claude-sonnet"');
    expect(read.text).toContain(`${local} (local): "claude-sonnet"`);
  });

  it("asks before a change that widens permissions, in every mode but bypassPermissions", async () => {
    for (const mode of ["default", "acceptEdits"] as const) {
      const { ctx, asked, local } = configContext(mode);
      const added = await call(ctx, { setting: "permissions.allow", value: "Bash(npm test:*)" });
      expect(added.result.isError, mode).toBe(false);
      expect(
        asked.map((a) => a.toolName),
        mode,
      ).toEqual(["Config"]);
      expect(JSON.parse(readFileSync(local, "utf8"))).toEqual({
        permissions: { allow: ["Bash(npm test:*)"] },
      });
      expect(ctx.rules().some((r) => r.rule === "Bash(npm test:*)" && r.behavior === "allow")).toBe(true);
    }
    const bypass = configContext("bypassPermissions");
    expect(
      (await call(bypass.ctx, { setting: "permissions.allow", value: ["Bash", "Write"] })).result.isError,
    ).toBe(false);
    expect(bypass.asked).toEqual([]);

    const refused = configContext("acceptEdits", "deny");
    const denied = await call(refused.ctx, {
      setting: "permissions.defaultMode",
      value: "bypassPermissions",
    });
    expect(denied.result.isError).toBe(true);
    expect(denied.text).toContain("The change widens permissions, so the user must approve it");
    expect(refused.ctx.permissionMode).toBe("acceptEdits");
    expect(() => readFileSync(refused.local)).toThrow();

    const plan = configContext("plan");
    const inPlan = await call(plan.ctx, { setting: "env.PATH", value: "/evil" });
    expect(inPlan.result.isError).toBe(true);
    expect(inPlan.text).toContain("plan mode is on");
  });

  it("changes the mode of the running session and the environment of its commands", async () => {
    const { ctx } = configContext("default");
    await call(ctx, { setting: "permissions.defaultMode", value: "plan" });
    expect(ctx.permissionMode).toBe("plan");
    const { ctx: other } = configContext("bypassPermissions");
    await call(other, { setting: "env.GREETING", value: "hello" });
    const echo = await runTool("Bash", { command: 'echo "$GREETING"' }, other);
    expect(ToolResult.text(echo).trim()).toBe("hello");
  });

  it("names the known settings for an unknown one, and what is accepted for a bad value", async () => {
    const { ctx, local } = configContext("bypassPermissions");
    const unknown = await call(ctx, { setting: "theme", value: "dark" });
    expect(unknown.result.isError).toBe(true);
    expect(unknown.text).toContain('Unknown setting "theme". Known settings: model, permissions.defaultMode');
    expect(unknown.text).toContain("env.<NAME>");
    const badMode = await call(ctx, { setting: "permissions.defaultMode", value: "yolo" });
    expect(badMode.text).toContain("give one of default, acceptEdits, plan, bypassPermissions, dontAsk");
    const badRule = await call(ctx, { setting: "permissions.deny", value: "Bash(" });
    expect(badRule.text).toContain('"Bash(" is not a valid rule');
    writeFileSync(local, "{ not json");
    const broken = await call(ctx, { setting: "model", value: "x" });
    expect(broken.result.isError).toBe(true);
    expect(broken.text).toContain("cannot be edited");
    expect(readFileSync(local, "utf8")).toBe("{ not json");
  });
});
