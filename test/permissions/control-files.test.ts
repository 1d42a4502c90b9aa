import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PermissionMode } from "../../src/core/permission-level.js";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";

/** Files that decide what may run: writing one could grant the writer more than it was given. */
describe("control files of the workspace", () => {
  function setup(mode: PermissionMode, allow: string[] = []) {
    // The rules alone (docs/SANDBOX.md covers the kernel's side: these files are read-only inside).
    const workingDir = tempDir();
    const config = emptySettings(workingDir);
    config.sandbox.enabled = false;
    const ctx = testContext({ permissionMode: mode, workingDir, config });
    mkdirSync(join(ctx.workingDir, ".claude"));
    mkdirSync(join(ctx.workingDir, ".git", "hooks"), { recursive: true });
    ctx.addRules(
      allow.map((rule) => ({ rule, behavior: "allow", source: { scope: "cli", root: ctx.workingDir } })),
    );
    return ctx;
  }
  const write = (ctx: ReturnType<typeof setup>, file: string) =>
    runTool("Write", { file_path: file, content: '{"permissions":{"allow":["Bash"]}}\n' }, ctx);

  it.each([
    ".claude/settings.local.json",
    ".claude/settings.json",
    ".mcp.json",
    ".git/hooks/pre-commit",
    ".git/config",
  ])("acceptEdits asks before writing %s, which it allows for ordinary files", async (file) => {
    const ctx = setup("acceptEdits");
    const result = await write(ctx, file);
    expect(result.isError).toBe(true);
    expect(ToolResult.text(result)).toContain("decides what may run here");
    expect((await write(ctx, "notes.json")).isError).toBe(false);
  });

  it.each([
    ["sub/.claude/settings.json", "a nested settings file"],
    ["pkg/.mcp.json", "a nested .mcp.json"],
    [".git/objects/x", "anything inside .git"],
  ])("acceptEdits asks before writing %s (%s)", async (file) => {
    const ctx = setup("acceptEdits");
    expect((await write(ctx, file)).isError).toBe(true);
  });

  it("sees through a symlinked .git and guards a worktree's .git file", async () => {
    const ctx = setup("acceptEdits");
    mkdirSync(join(ctx.workingDir, "real-git", "hooks"), { recursive: true });
    mkdirSync(join(ctx.workingDir, "wt"));
    symlinkSync("../real-git", join(ctx.workingDir, "wt", ".git"));
    expect((await write(ctx, "wt/.git/hooks/pre-commit")).isError).toBe(true);
    expect((await write(ctx, "wt/.git/config")).isError).toBe(true);
    mkdirSync(join(ctx.workingDir, "wt2"));
    writeFileSync(join(ctx.workingDir, "wt2", ".git"), "gitdir: ../real-git\n");
    await runTool("Read", { file_path: "wt2/.git" }, ctx);
    expect((await write(ctx, "wt2/.git")).isError).toBe(true);
  });

  it("a shell redirection into them asks too, even when the command is allowed", async () => {
    const ctx = setup("acceptEdits", ["Bash(echo:*)"]);
    const result = await runTool("Bash", { command: "echo 'rm -rf ~' > .git/hooks/pre-commit" }, ctx);
    expect(result.isError).toBe(true);
    expect(ToolResult.text(result)).toContain("always needs approval");
    expect((await runTool("Bash", { command: "echo ok > notes.txt" }, ctx)).isError).toBe(false);
  });

  it("bypassPermissions and an explicit Edit rule still allow them", async () => {
    expect((await write(setup("bypassPermissions"), ".mcp.json")).isError).toBe(false);
    expect((await write(setup("acceptEdits", ["Edit(./.mcp.json)"]), ".mcp.json")).isError).toBe(false);
  });
});
