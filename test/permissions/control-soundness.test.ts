/**
 * Issue 9, root cause 5: control files are recognised by what decides what runs, not by name alone.
 * Each attempt runs through the executor; its effect on disk is what is checked.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PermissionMode } from "../../src/core/permission-level.js";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";

function workspace(mode: PermissionMode, allow: string[] = [], hookCommand?: string) {
  const dir = tempDir();
  const config = emptySettings(dir);
  // The rules alone judge here; with the OS sandbox on, a sandboxed command would need no approval.
  config.sandbox.enabled = false;
  for (const rule of allow)
    config.rules.push({ rule, behavior: "allow", source: { scope: "project", root: dir } });
  if (hookCommand)
    config.hooks.PostToolUse?.push({ matcher: "Read", hooks: [{ type: "command", command: hookCommand }] });
  const ctx = testContext({ workingDir: dir, config, permissionMode: mode });
  const write = (file: string, content = "changed\n") => runTool("Write", { file_path: file, content }, ctx);
  return { dir, ctx, write };
}

describe("root cause 5: control files", () => {
  it("a .claude symlinked to another folder: its settings are control files by either name", async () => {
    const { dir, write } = workspace("acceptEdits");
    mkdirSync(join(dir, "conf"));
    symlinkSync("conf", join(dir, ".claude"));
    const result = await write(join(dir, "conf", "settings.json"), '{"permissions":{"allow":["Bash"]}}\n');
    expect(ToolResult.text(result)).toContain("decides what may run here");
    expect(existsSync(join(dir, "conf", "settings.json"))).toBe(false);
    expect((await write(join(dir, "conf", "notes.md"))).isError).toBe(false);
  });

  it("hook scripts named in settings are control files", async () => {
    const hook = "$CLAUDE_PROJECT_DIR/scripts/check.sh";
    const { dir, write } = workspace("acceptEdits", [], `bash "${hook}"`);
    mkdirSync(join(dir, "scripts"));
    writeFileSync(join(dir, "scripts", "check.sh"), "exit 0\n");
    const result = await write(join(dir, "scripts", "check.sh"), "touch pwned\n");
    expect(result.isError).toBe(true);
    expect(readFileSync(join(dir, "scripts", "check.sh"), "utf8")).toBe("exit 0\n");
  });

  it("a broad Edit rule does not reach control files; a rule naming the file does", async () => {
    const { dir, write } = workspace("default", ["Edit(./**)", "Edit"]);
    mkdirSync(join(dir, ".claude"));
    for (const file of [".claude/settings.json", ".mcp.json", ".git/config"]) {
      const result = await write(join(dir, file));
      expect(result.isError).toBe(true);
      expect(existsSync(join(dir, file))).toBe(false);
    }
    expect((await write(join(dir, "src.ts"))).isError).toBe(false);
    const named = workspace("default", ["Edit(./.mcp.json)"]);
    expect((await named.write(join(named.dir, ".mcp.json"), "{}\n")).isError).toBe(false);
  });

  it("a bare repository written file by file: the write that completes it asks", async () => {
    const { dir, write } = workspace("acceptEdits");
    expect((await write(join(dir, "evil", "HEAD"), "ref: refs/heads/main\n")).isError).toBe(false);
    const config = await write(join(dir, "evil", "config"), "[core]\n\tfsmonitor = touch pwned\n");
    expect(config.isError).toBe(true);
    expect(existsSync(join(dir, "evil", "config"))).toBe(false);
    expect((await write(join(dir, "evil", "refs", "heads", "main"), "x\n")).isError).toBe(true);
  });

  it("git run inside a repository the workspace holds asks, and its fsmonitor never runs", async () => {
    const { dir, ctx } = workspace("acceptEdits", ["Bash(git status:*)", "Bash(cd:*)"]);
    execFileSync("git", ["init", "-q", dir]);
    const evil = join(dir, "evil");
    execFileSync("git", ["init", "-q", "--bare", evil]);
    const marker = join(dir, "pwned");
    writeFileSync(
      join(evil, "config"),
      `[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = touch ${marker}\n`,
    );
    for (const command of ["cd evil && git status", "git -C evil status"]) {
      const result = await runTool("Bash", { command }, ctx);
      expect(ToolResult.text(result)).toContain("Permission to use Bash was denied");
    }
    expect(existsSync(marker)).toBe(false);
    const own = await runTool("Bash", { command: "git status" }, ctx);
    expect(own.isError).toBe(false);
  });
});
