import { existsSync } from "node:fs";
import type { ToolContext } from "../core/context.js";
import type { SessionSlot } from "../core/session.js";
import { canonicalPath, isWithin } from "../fs/canonical.js";

/** The shell's working directory for a session; undefined means the workspace root. Shared by every shell. */
interface ShellCwd {
  dir: string | undefined;
}

export const shellCwdSlot: SessionSlot<ShellCwd> = {
  key: "shellCwd",
  create: () => ({ dir: undefined }),
  save: (value) => (value.dir ? { dir: value.dir } : {}),
  load: (data) => {
    const dir = (data as { dir?: unknown } | undefined)?.dir;
    return { dir: typeof dir === "string" ? dir : undefined };
  },
};

/**
 * True when `dir` is the workspace, an additional directory, or below one, judged as permissions judge
 * paths: where it really leads, so a symlink inside the workspace that points outside is outside.
 */
export function isAllowedDir(ctx: ToolContext, dir: string): boolean {
  const real = canonicalPath(dir, "/");
  return [ctx.workingDir, ...ctx.additionalDirectories].some((root) =>
    isWithin(real, canonicalPath(root, "/")),
  );
}

/** The directory the shell is in, as remembered (it may have been removed since). */
export function currentDir(ctx: ToolContext): string {
  return ctx.session.get(shellCwdSlot).dir ?? ctx.workingDir;
}

/**
 * Where the next command will start: the remembered directory while it exists and is allowed, else the
 * workspace. Permission checks judge a command here, at the directory startingDir will really use, never
 * at a remembered one that was removed (the command would run, and write, elsewhere).
 */
export function nextCommandDir(ctx: ToolContext): string {
  const dir = ctx.session.get(shellCwdSlot).dir;
  return dir !== undefined && existsSync(dir) && isAllowedDir(ctx, dir) ? dir : ctx.workingDir;
}

/** Where the next command starts, and a note when the remembered directory had to be given up. */
export function startingDir(ctx: ToolContext): { dir: string; note?: string } {
  const state = ctx.session.get(shellCwdSlot);
  const dir = state.dir;
  if (dir === undefined) return { dir: ctx.workingDir };
  if (nextCommandDir(ctx) === dir) return { dir };
  state.dir = undefined;
  return {
    dir: ctx.workingDir,
    note: `The shell's previous directory ${dir} is gone or no longer allowed; this command ran in ${ctx.workingDir}.`,
  };
}

/**
 * Remembers where the command left the shell. A directory outside the workspace and the additional
 * directories is refused: the shell stays where it was, and the returned note says so.
 */
export function settleDir(ctx: ToolContext, from: string, to: string | undefined): string | undefined {
  if (to === undefined || to === from) return undefined;
  if (!isAllowedDir(ctx, to)) {
    return (
      `The command changed directory to ${to}, which is outside the allowed directories; ` +
      `the shell stays in ${from}. Refer to paths there by their absolute path instead.`
    );
  }
  ctx.session.get(shellCwdSlot).dir = to === ctx.workingDir ? undefined : to;
  return undefined;
}
