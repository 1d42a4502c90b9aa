import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";

describe("shell redirections are judged where the shell is", () => {
  it("resolves a relative redirect target against the session's shell directory", async () => {
    // The rules alone: with the OS sandbox on, a sandboxed command would need no approval.
    const workingDir = tempDir();
    const config = emptySettings(workingDir);
    config.sandbox.enabled = false;
    const ctx = testContext({ permissionMode: "default", workingDir, config });
    mkdirSync(join(ctx.workingDir, "sub"));
    ctx.addRules(
      ["Bash(cd:*)", "Bash(echo:*)", "Edit(./sub/**)"].map((rule) => ({
        rule,
        behavior: "allow" as const,
        source: { scope: "cli" as const, root: ctx.workingDir },
      })),
    );
    expect((await runTool("Bash", { command: "cd sub" }, ctx)).isError).toBe(false);
    const result = await runTool("Bash", { command: "echo hi > note.txt" }, ctx);
    expect(ToolResult.text(result)).not.toContain("denied");
    expect(existsSync(join(ctx.workingDir, "sub", "note.txt"))).toBe(true);

    // From the workspace root the same command writes outside what Edit(./sub/**) allows.
    await runTool("Bash", { command: "cd .." }, ctx);
    const denied = await runTool("Bash", { command: "echo hi > note.txt" }, ctx);
    expect(denied.isError).toBe(true);
    expect(ToolResult.text(denied)).toContain("Permission to use Bash was denied");
    expect(existsSync(join(ctx.workingDir, "note.txt"))).toBe(false);
  });
});
