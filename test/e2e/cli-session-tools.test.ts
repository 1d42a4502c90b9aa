import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/context.js";
import { cli } from "./cli.js";

function workspace() {
  const dir = tempDir();
  const home = tempDir("cc-tools-home-");
  const env = { CLAUDE_CONFIG_DIR: home, CC_TOOLS_STATE_DIR: join(home, "state") };
  const run = (tool: string, input: unknown, ...flags: string[]) =>
    cli(["run", tool, JSON.stringify(input), "--cwd", dir, ...flags], { env });
  return { dir, run };
}

describe("session tools through `cc-tools run --session`", () => {
  it("keeps work items and plan mode between runs of a named session", () => {
    const { run } = workspace();
    expect(run("TaskCreate", { subject: "First", description: "one" }, "--session", "w").stdout).toContain(
      "work_1",
    );
    expect(run("TaskCreate", { subject: "Second", description: "two" }, "--session", "w").stdout).toContain(
      "work_2",
    );
    expect(run("TaskUpdate", { taskId: "work_2", addBlockedBy: ["work_1"] }, "--session", "w").code).toBe(0);
    expect(run("TaskList", {}, "--session", "w").stdout).toBe(
      "work_1 [pending] First\nwork_2 [pending] Second [blocked by work_1]\n",
    );
    expect(run("TaskList", {}).stdout).toContain("No tasks yet");

    run("EnterPlanMode", {}, "--session", "w", "--permission-mode", "acceptEdits");
    const blocked = run("Write", { file_path: "a.txt", content: "a" }, "--session", "w");
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain("plan mode is on");
    // Nobody at the terminal (input is not a TTY): the denial names the flag and the rule.
    const exit = run("ExitPlanMode", { plan: "p" }, "--session", "w");
    expect(exit.stderr).toContain("--permission-mode default");
    const allowed = run("ExitPlanMode", { plan: "p" }, "--session", "w", "--allow", "ExitPlanMode");
    expect(allowed.stdout).toContain("acceptEdits mode now");
  });

  it("moves a named session into a worktree and back", () => {
    const { dir, run } = workspace();
    execFileSync("git", ["init", "-q"], { cwd: dir });
    writeFileSync(join(dir, "f"), "x");
    execFileSync(
      "git",
      ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init", "--allow-empty"],
      { cwd: dir },
    );
    const entered = run("EnterWorktree", { name: "side" }, "--session", "w", "--allow", "EnterWorktree");
    expect(entered.code).toBe(0);
    expect(run("Bash", { command: "pwd" }, "--session", "w", "--allow", "Bash(pwd)").stdout.trim()).toBe(
      join(dir, ".claude", "worktrees", "side"),
    );
    expect(
      run("ExitWorktree", { action: "keep" }, "--session", "w", "--allow", "ExitWorktree").stdout,
    ).toContain(`Back in ${dir}`);
  });
});
