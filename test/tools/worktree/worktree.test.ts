import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../../src/core/result.js";
import { Session } from "../../../src/core/session.js";
import { runTool } from "../../../src/executor/run.js";
import { tempDir, testContext } from "../../helpers/context.js";

type Ctx = ReturnType<typeof testContext>;

async function call(ctx: Ctx, name: string, input: Record<string, unknown>) {
  const result = await runTool(name, input, ctx);
  return { result, text: ToolResult.text(result) };
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    },
  }).trim();

function repo(): string {
  const dir = tempDir();
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "a.txt"), "one\n");
  git(dir, "add", ".");
  git(dir, "commit", "-qm", "first");
  return dir;
}

describe("EnterWorktree and ExitWorktree (real git)", () => {
  it("creates a worktree on a new branch and moves the working directory, the shell and the permission workspace", async () => {
    const dir = repo();
    const ctx = testContext({ workingDir: dir });
    const entered = await call(ctx, "EnterWorktree", { name: "feature" });
    expect(entered.result.isError).toBe(false);
    const path = join(dir, ".claude", "worktrees", "feature");
    expect(entered.text).toContain(`Created and entered the worktree ${path} on branch worktree-feature`);
    expect(ctx.workingDir).toBe(path);
    expect(git(path, "branch", "--show-current")).toBe("worktree-feature");
    expect((await call(ctx, "Bash", { command: "pwd" })).text.trim()).toBe(path);
    // Relative paths land in the worktree; the main checkout does not see its files.
    await call(ctx, "Write", { file_path: "b.txt", content: "two\n" });
    expect(existsSync(join(path, "b.txt"))).toBe(true);
    expect(existsSync(join(dir, "b.txt"))).toBe(false);
    // The main checkout's status does not list the worktrees directory.
    expect(git(dir, "status", "--porcelain")).toBe("");

    const kept = await call(ctx, "ExitWorktree", { action: "keep" });
    expect(kept.text).toContain(`Back in ${dir}`);
    expect(ctx.workingDir).toBe(dir);
    expect((await call(ctx, "Bash", { command: "pwd" })).text.trim()).toBe(dir);
    expect(existsSync(path)).toBe(true);

    const again = await call(ctx, "EnterWorktree", { name: "feature" });
    expect(again.text).toContain("Entered the worktree");
  });

  it("remove refuses uncommitted changes and unmerged commits unless discard_changes", async () => {
    const dir = repo();
    const ctx = testContext({ workingDir: dir });
    await call(ctx, "EnterWorktree", { name: "wip" });
    const path = ctx.workingDir;
    writeFileSync(join(path, "a.txt"), "changed\n");
    const dirty = await call(ctx, "ExitWorktree", { action: "remove" });
    expect(dirty.result.isError).toBe(true);
    expect(dirty.text).toContain("1 uncommitted change (a.txt)");
    expect(ctx.workingDir).toBe(path);

    git(path, "commit", "-qam", "work");
    const unmerged = await call(ctx, "ExitWorktree", { action: "remove" });
    expect(unmerged.text).toContain("1 commit no other branch has");
    expect(unmerged.text).toContain("work");
    expect(existsSync(path)).toBe(true);

    const removed = await call(ctx, "ExitWorktree", { action: "remove", discard_changes: true });
    expect(removed.result.isError).toBe(false);
    expect(removed.text).toContain("branch worktree-wip deleted");
    expect(existsSync(path)).toBe(false);
    expect(git(dir, "branch", "--list", "worktree-wip")).toBe("");
    expect(ctx.workingDir).toBe(dir);
  });

  it("removes a clean worktree whose commits are merged", async () => {
    const dir = repo();
    const ctx = testContext({ workingDir: dir });
    await call(ctx, "EnterWorktree", { name: "done" });
    const path = ctx.workingDir;
    writeFileSync(join(path, "c.txt"), "c\n");
    git(path, "add", ".");
    git(path, "commit", "-qm", "c");
    git(dir, "merge", "-q", "worktree-done");
    const removed = await call(ctx, "ExitWorktree", { action: "remove" });
    expect(removed.result.isError).toBe(false);
    expect(existsSync(path)).toBe(false);
    expect(readFileSync(join(dir, "c.txt"), "utf8")).toBe("c\n");
  });

  it("enters an existing worktree by path, and keeps the move in the saved session", async () => {
    const dir = repo();
    const other = join(tempDir(), "elsewhere");
    git(dir, "worktree", "add", "-q", "-b", "side", other);
    const ctx = testContext({ workingDir: dir });
    const entered = await call(ctx, "EnterWorktree", { path: other });
    expect(entered.text).toContain(`Entered the worktree ${other} on branch side`);
    const later = testContext({
      workingDir: dir,
      session: new Session({ saved: JSON.parse(JSON.stringify(ctx.session.snapshot())) }),
    });
    expect(later.workingDir).toBe(other);
    expect((await call(later, "ExitWorktree", { action: "keep" })).text).toContain(`Back in ${dir}`);
    const notOne = await call(ctx, "ExitWorktree", { action: "keep" });
    expect(notOne.result.isError).toBe(false);
    const bogus = await call(ctx, "EnterWorktree", { path: tempDir() });
    expect(bogus.result.isError).toBe(true);
    expect(bogus.text).toContain("is not a worktree of this repository");
  });

  it("gives clear errors: outside a repository, bad names, both name and path, twice, exit without enter", async () => {
    const plain = testContext();
    const outside = await call(plain, "EnterWorktree", { name: "x" });
    expect(outside.result.isError).toBe(true);
    expect(outside.text).toContain("is not inside a git repository");
    expect((await call(plain, "ExitWorktree", { action: "keep" })).text).toContain("not in a worktree");

    const ctx = testContext({ workingDir: repo() });
    expect((await call(ctx, "EnterWorktree", { name: "../up" })).text).toContain("cannot name a worktree");
    expect((await call(ctx, "EnterWorktree", { name: "a", path: "/b" })).text).toContain("not both");
    await call(ctx, "EnterWorktree", {});
    expect(ctx.workingDir).toContain(join(".claude", "worktrees", "session-"));
    expect((await call(ctx, "EnterWorktree", { name: "b" })).text).toContain("already in the worktree");
  });

  it("says git is missing when it is not on PATH", async () => {
    const ctx = testContext({ workingDir: repo() });
    const saved = process.env.PATH;
    process.env.PATH = tempDir();
    try {
      const missing = await call(ctx, "EnterWorktree", { name: "x" });
      expect(missing.result.isError).toBe(true);
      expect(missing.text).toContain("git is not installed");
    } finally {
      process.env.PATH = saved;
    }
  });
});

describe("EnterWorktree's permission check", () => {
  it("judges the directory the worktree lands in: the repository's, above a workspace in a subdirectory", async () => {
    const dir = repo();
    const sub = join(dir, "pkg");
    execFileSync("mkdir", [sub]);
    const ctx = testContext({ workingDir: sub, permissionMode: "acceptEdits" });
    const asked = await call(ctx, "EnterWorktree", { name: "up" });
    // acceptEdits allows writes inside the workspace without asking; this lands outside it, so it is asked
    // (and, with nobody to ask, denied), and nothing was created.
    expect(asked.result.isError).toBe(true);
    expect(asked.text).toContain(join(dir, ".claude", "worktrees", "up"));
    expect(existsSync(join(dir, ".claude", "worktrees", "up"))).toBe(false);
    const inside = testContext({ workingDir: dir, permissionMode: "acceptEdits" });
    expect((await call(inside, "EnterWorktree", { name: "in" })).result.isError).toBe(false);
  });
});

describe("Task with isolation worktree (shares the worktree helpers)", () => {
  it("runs the sub-agent in a new worktree on branch agent/<name>, kept out of the main checkout's status", async () => {
    const { anthropicProvider } = await import("../../../src/agent/anthropic.js");
    const { AgentRuntime } = await import("../../../src/agent/runtime.js");
    const { createHost } = await import("../../../src/core/host.js");
    const { autoHandler } = await import("../../../src/permissions/handlers.js");
    const { startStandIn, text } = await import("../../agent/standin.js");
    const stand = await startStandIn([text("done in the worktree")]);
    try {
      const runtime = new AgentRuntime({
        provider: anthropicProvider({ apiKey: "k", baseURL: stand.url, idleMs: 2_000 }),
        model: "claude-sonnet-4-5",
        configDir: tempDir("cc-tools-config-"),
      });
      const dir = repo();
      const ctx = testContext({ workingDir: dir, host: createHost({ model: runtime }, autoHandler) });
      const result = await call(ctx, "Task", {
        description: "isolated",
        prompt: "work",
        isolation: "worktree",
        name: "iso",
      });
      expect(result.result.isError).toBe(false);
      const path = join(dir, ".claude", "worktrees", "iso");
      expect(git(path, "branch", "--show-current")).toBe("agent/iso");
      expect(git(dir, "status", "--porcelain")).toBe("");
      const outside = testContext({ host: createHost({ model: runtime }, autoHandler) });
      const refused = await call(outside, "Task", { description: "x", prompt: "y", isolation: "worktree" });
      expect(refused.text).toContain('isolation "worktree" needs a git repository');
    } finally {
      await stand.close();
    }
  });
});
