import { existsSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import { InputError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { workspaceSlot } from "../../core/workspace.js";
import { canonicalPath } from "../../fs/canonical.js";
import { shellCwdSlot } from "../../process/cwd.js";
import {
  addWorktree,
  gitOk,
  listWorktrees,
  repositoryRoot,
  repositoryRootSync,
  WORKTREES_DIR,
  worktreeSlot,
} from "./git.js";

/** A worktree name: one path segment git accepts in a branch name too. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function generatedName(): string {
  const stamp = new Date().toISOString().replace(/[-:T]/g, "").slice(0, 14);
  return `session-${stamp}`;
}

export const enterWorktreeTool = defineTool({
  name: ToolName.EnterWorktree,
  description: [
    "Moves this session into a git worktree, to work on a separate branch without touching the main checkout.",
    "",
    "- name: creates .claude/worktrees/<name> on a new branch worktree-<name> from the current HEAD (or enters it when it exists). Without name or path, a name is made up.",
    "- path: enters an existing worktree of this repository instead.",
    `- The working directory, the shell's directory and the permission workspace all move there; ${ToolName.ExitWorktree} comes back.`,
  ].join("\n"),
  permissionLevel: PermissionLevel.Write,
  inputSchema: z.strictObject({
    name: z.string().optional().describe("Name of the worktree to create or enter under .claude/worktrees/."),
    path: z.string().optional().describe("Path of an existing worktree to enter."),
  }),
  // Where the worktree really lands: under the repository's root, which may be above the workspace.
  permissionSubject: (input, ctx) => ({
    kind: "path",
    path: input.path
      ? ctx.resolvePath(input.path)
      : join(repositoryRootSync(ctx.workingDir) ?? ctx.workingDir, WORKTREES_DIR, input.name ?? ""),
    access: "write",
  }),
  async execute(input, ctx) {
    if (input.name !== undefined && input.path !== undefined) {
      throw new InputError(
        "Give name (to create or enter .claude/worktrees/<name>) or path (an existing worktree), not both.",
      );
    }
    const state = ctx.session.get(worktreeSlot);
    if (state.current) {
      throw new InputError(
        `The session is already in the worktree ${state.current.path}. Call ${ToolName.ExitWorktree} first.`,
      );
    }
    const root = await repositoryRoot(ctx.workingDir, ctx.signal);
    const known = await listWorktrees(root);
    let path: string;
    let branch: string | undefined;
    let created = false;
    if (input.path !== undefined) {
      path = canonicalPath(ctx.resolvePath(input.path), "/");
      const found = known.find((w) => canonicalPath(w.path, "/") === path);
      if (!found) {
        throw new InputError(
          `${path} is not a worktree of this repository. Worktrees: ${known.map((w) => w.path).join(", ")}. Pass name to create one.`,
        );
      }
      branch = found.branch;
    } else {
      const name = input.name ?? generatedName();
      if (!NAME.test(name)) {
        throw new InputError(
          `"${name}" cannot name a worktree: use letters, digits, dots, dashes and underscores (up to 64), starting with a letter or digit.`,
        );
      }
      path = join(root, WORKTREES_DIR, name);
      const found = known.find((w) => canonicalPath(w.path, "/") === canonicalPath(path, "/"));
      if (found) {
        branch = found.branch;
      } else {
        if (existsSync(path)) {
          throw new InputError(`${path} exists but is not a git worktree; remove it or choose another name.`);
        }
        branch = `worktree-${name}`;
        created = (await gitOk(["branch", "--list", branch], root, "check the branch")).trim() === "";
        await addWorktree(root, path, branch, ctx.signal);
      }
    }
    const from = ctx.workingDir;
    const workspace = ctx.session.get(workspaceSlot);
    const shell = ctx.session.get(shellCwdSlot);
    state.current = {
      path,
      branch,
      createdBranch: created,
      returnTo: workspace.workingDir,
      from,
      shellDir: shell.dir,
    };
    workspace.workingDir = path;
    shell.dir = undefined;
    return ToolResult.success(
      `${created ? "Created and entered" : "Entered"} the worktree ${path}${branch ? ` on branch ${branch}` : ""}. The working directory, the shell and the permission workspace are there now; ${ToolName.ExitWorktree} returns to ${from}.`,
      { path, branch, created, from },
    );
  },
});
