import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createToolContext } from "../../src/context.js";
import { ToolResult } from "../../src/core/result.js";
import { defineTool } from "../../src/core/tool.js";
import { localSettingsPath } from "../../src/permissions/persist.js";
import type { PermissionHandler, PermissionRequest } from "../../src/permissions/types.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir } from "../helpers/context.js";

/** The rules alone decide here: with the OS sandbox on, a sandboxed command would need no approval. */
function rulesOnly(dir: string) {
  const config = emptySettings(dir);
  config.sandbox.enabled = false;
  return config;
}

const shell = defineTool({
  name: "Bash",
  description: "test shell",
  permissionLevel: "execute",
  inputSchema: z.strictObject({ command: z.string() }),
  execute: async () => ToolResult.success("ran"),
  permissionSubject: (input) => ({ kind: "command", command: input.command, shell: "bash" }),
});

describe("the context asks the handler and remembers 'always' answers", () => {
  it("grants every suggested rule for the session and saves them to settings.local.json", async () => {
    const dir = tempDir();
    const asked: PermissionRequest[] = [];
    const handler: PermissionHandler = {
      name: "always",
      async ask(request) {
        asked.push(request);
        return { behavior: "allow", scope: "always" };
      },
    };
    const ctx = createToolContext({
      workingDir: dir,
      permissionMode: "default",
      permissionHandler: handler,
      config: rulesOnly(dir),
    });
    const first = await ctx.checkPermission(shell, { command: "npm test && git status" });
    expect(first.behavior).toBe("allow");
    expect(asked[0]!.suggestedRules).toEqual(["Bash(npm test)", "Bash(git status)"]);
    const again = await ctx.checkPermission(shell, { command: "git status; npm test" });
    expect(again.behavior).toBe("allow");
    expect(asked).toHaveLength(1);
    expect(JSON.parse(readFileSync(localSettingsPath(dir), "utf8")).permissions.allow).toEqual([
      "Bash(npm test)",
      "Bash(git status)",
    ]);
  });

  it("the default (auto) handler denies with the rule that would allow the call", async () => {
    const dir = tempDir();
    const ctx = createToolContext({ workingDir: dir, permissionMode: "default", config: rulesOnly(dir) });
    const decision = await ctx.checkPermission(shell, { command: "ls | sh" });
    expect(decision.behavior).toBe("deny");
    expect(decision.reason).toContain("`ls` is not covered");
    expect(decision.reason).toContain("Bash(ls), Bash(sh)");
  });
});

describe("dontAsk refusals", () => {
  it("say plainly that nothing is asked, and name the allow rule that would let the call through", async () => {
    const dir = tempDir();
    const ctx = createToolContext({ workingDir: dir, permissionMode: "dontAsk", config: emptySettings(dir) });
    const decision = await ctx.checkPermission(shell, { command: "npm test" });
    expect(decision.behavior).toBe("deny");
    expect(decision.reason).toContain(
      "dontAsk mode refuses, instead of asking, whatever no allow rule covers",
    );
    expect(decision.reason).toContain("Bash(npm test)");
    expect(decision.reason).not.toMatch(/asks before|would need approval/);
  });
});
