import * as z from "zod";
import { InputError, ToolError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { workspaceSlot } from "../../core/workspace.js";
import { shellCwdSlot } from "../../process/cwd.js";
import { git, gitOk, worktreeSlot } from "./git.js";

/** Commits of the worktree's HEAD that no other branch has: removing the worktree would orphan them. */
async function unmergedCommits(path: string, branch: string | undefined): Promise<string[]> {
  const refs = (await gitOk(["for-each-ref", "--format=%(refname)", "refs/heads"], path, "list the branches"))
    .split("\n")
    .filter((r) => r && r !== `refs/heads/${branch}`);
  const out = await gitOk(
    ["log", "--format=%h %s", "HEAD", ...(refs.length > 0 ? ["--not", ...refs] : [])],
    path,
    "find unmerged commits",
  );
  return out.split("\n").filter(Boolean);
}

export const exitWorktreeTool = defineTool({
  name: ToolName.ExitWorktree,
  description: [
    `Leaves the worktree ${ToolName.EnterWorktree} moved this session into and returns to the original directory.`,
    "",
    "- action keep: leaves the worktree and its branch on disk for later.",
    "- action remove: deletes the worktree (and the branch EnterWorktree made). Refused while it has uncommitted changes or commits no other branch has, unless discard_changes is true.",
  ].join("\n"),
  permissionLevel: PermissionLevel.Write,
  inputSchema: z.strictObject({
    action: z.enum(["keep", "remove"]).describe("keep the worktree on disk, or remove it."),
    discard_changes: z
      .boolean()
      .optional()
      .describe("With remove: delete it even with uncommitted changes or unmerged commits."),
  }),
  permissionSubject: (_input, ctx) => ({
    kind: "path",
    path: ctx.session.get(worktreeSlot).current?.path ?? ctx.workingDir,
    access: "write",
  }),
  async execute(input, ctx) {
    const state = ctx.session.get(worktreeSlot);
    const current = state.current;
    if (!current) {
      throw new InputError(`The session is not in a worktree; ${ToolName.EnterWorktree} enters one.`);
    }
    const notes: string[] = [];
    if (input.action === "remove") {
      const status = await git(["status", "--porcelain"], current.path, ctx.signal);
      if (status.code !== 0 && !input.discard_changes) {
        throw new ToolError(
          `Cannot check ${current.path} for changes (${status.stderr.trim()}); nothing was removed. Pass discard_changes: true to remove it anyway.`,
        );
      }
      const dirty = status.stdout.split("\n").filter(Boolean);
      const commits = status.code === 0 ? await unmergedCommits(current.path, current.branch) : [];
      if (!input.discard_changes && (dirty.length > 0 || commits.length > 0)) {
        const what = [
          dirty.length > 0
            ? `${dirty.length} uncommitted change${dirty.length === 1 ? "" : "s"} (${dirty
                .slice(0, 5)
                .map((l) => l.slice(3))
                .join(", ")}${dirty.length > 5 ? ", …" : ""})`
            : "",
          commits.length > 0
            ? `${commits.length} commit${commits.length === 1 ? "" : "s"} no other branch has (${commits.slice(0, 3).join("; ")}${commits.length > 3 ? "; …" : ""})`
            : "",
        ].filter(Boolean);
        throw new InputError(
          `The worktree ${current.path} has ${what.join(" and ")}; it was not removed and the session stays in it. Commit and merge the work, use action "keep", or pass discard_changes: true to throw it away.`,
        );
      }
      await gitOk(
        ["worktree", "remove", "--force", current.path],
        current.from,
        `remove the worktree ${current.path}`,
      );
      if (current.createdBranch && current.branch) {
        const deleted = await git(["branch", "-D", current.branch], current.from);
        if (deleted.code === 0) notes.push(`branch ${current.branch} deleted`);
        else notes.push(`branch ${current.branch} kept (${deleted.stderr.trim()})`);
      }
    }
    const workspace = ctx.session.get(workspaceSlot);
    workspace.workingDir = current.returnTo;
    ctx.session.get(shellCwdSlot).dir = current.shellDir;
    state.current = undefined;
    const done =
      input.action === "remove"
        ? `Removed the worktree ${current.path}`
        : `Left the worktree ${current.path} (kept on disk${current.branch ? `, branch ${current.branch}` : ""})`;
    return ToolResult.success(
      `${done}${notes.length > 0 ? `; ${notes.join(", ")}` : ""}. Back in ${ctx.workingDir}.`,
      {
        path: current.path,
        action: input.action,
        workingDir: ctx.workingDir,
      },
    );
  },
});
