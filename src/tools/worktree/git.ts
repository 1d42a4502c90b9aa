import { execFile } from "node:child_process";
import { appendFile, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ToolError } from "../../core/errors.js";
import type { SessionSlot } from "../../core/session.js";
import { spawnSyncAnnounced } from "../../process/forks.js";
import { hostProgram } from "../../process/shells.js";
import { hostEnv } from "../../sandbox/host-programs.js";

const GIT_MISSING =
  "git is not installed (or not on PATH outside the places sandboxed commands can write); worktrees need git.";

/** Longest one git command of the worktree tools may take. */
const GIT_TIMEOUT_MS = 60_000;

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs git; a missing git is a clear error, a failing command a result the caller judges. */
export function git(args: string[], cwd: string, signal?: AbortSignal): Promise<GitResult> {
  const program = hostProgram("git");
  if (!program) return Promise.reject(new ToolError(GIT_MISSING));
  return new Promise((resolvePromise, reject) => {
    execFile(
      program,
      args,
      {
        cwd,
        timeout: GIT_TIMEOUT_MS,
        signal,
        maxBuffer: 16 * 1024 * 1024,
        // The programs git starts (filters, hooks' commands) come from outside the sandbox's reach too.
        env: { ...hostEnv(), GIT_TERMINAL_PROMPT: "0" },
      },
      (error, stdout, stderr) => {
        const code = (error as NodeJS.ErrnoException | null)?.code;
        if (code === "ENOENT" && !stderr) {
          reject(new ToolError(GIT_MISSING));
          return;
        }
        resolvePromise({ code: error ? (typeof code === "number" ? code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Like git(), but a failure is a ToolError that says what was being done and what git said. */
export async function gitOk(
  args: string[],
  cwd: string,
  doing: string,
  signal?: AbortSignal,
): Promise<string> {
  const result = await git(args, cwd, signal);
  if (result.code !== 0) {
    throw new ToolError(
      `Could not ${doing}: git ${args[0]} failed: ${result.stderr.trim() || result.stdout.trim()}`,
    );
  }
  return result.stdout;
}

/** The top of the repository `dir` is in; an error saying so when it is in none. */
export async function repositoryRoot(dir: string, signal?: AbortSignal): Promise<string> {
  const result = await git(["rev-parse", "--show-toplevel"], dir, signal);
  if (result.code !== 0) {
    throw new ToolError(
      `${dir} is not inside a git repository, so there is nothing to make a worktree of. Run git init first, or work without a worktree.`,
    );
  }
  return result.stdout.trim();
}

/**
 * The repository root, found synchronously for the permission check (which must judge the directory the
 * worktree really lands in, the repository's, not the workspace's); undefined outside a repository.
 */
export function repositoryRootSync(dir: string): string | undefined {
  const program = hostProgram("git");
  if (!program) return undefined;
  const result = spawnSyncAnnounced(program, ["rev-parse", "--show-toplevel"], {
    cwd: dir,
    env: hostEnv(),
    encoding: "utf8",
    timeout: GIT_TIMEOUT_MS,
  });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/** The worktrees git knows for the repository of `dir`: path and branch. */
export async function listWorktrees(dir: string): Promise<Array<{ path: string; branch?: string }>> {
  const out = await gitOk(["worktree", "list", "--porcelain"], dir, "list the worktrees");
  return out
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const path = /^worktree (.+)$/m.exec(block)?.[1] ?? "";
      const branch = /^branch refs\/heads\/(.+)$/m.exec(block)?.[1];
      return { path, branch };
    });
}

/** Where worktrees go, under the repository root (EnterWorktree's, and isolated sub-agents'). */
export const WORKTREES_DIR = join(".claude", "worktrees");

/** Creates a worktree at `path` on a new branch from HEAD (or on `branch` when it exists), kept out of `git status`. */
export async function addWorktree(
  root: string,
  path: string,
  branch: string,
  signal?: AbortSignal,
): Promise<void> {
  const exists = (await gitOk(["branch", "--list", branch], root, "check the branch", signal)).trim() !== "";
  const args = exists ? ["worktree", "add", path, branch] : ["worktree", "add", "-b", branch, path, "HEAD"];
  await gitOk(args, root, `create the worktree ${path}`, signal);
  await excludeWorktreesDir(root);
}

/** Keeps `.claude/worktrees/` out of the main checkout's `git status`, through the repository's own exclude file. */
async function excludeWorktreesDir(root: string): Promise<void> {
  const common = (await gitOk(["rev-parse", "--git-common-dir"], root, "find the git directory")).trim();
  const file = join(resolve(root, common), "info", "exclude");
  const line = "/.claude/worktrees/";
  const text = await readFile(file, "utf8").catch(() => "");
  if (text.split("\n").includes(line)) return;
  await appendFile(file, `${text === "" || text.endsWith("\n") ? "" : "\n"}${line}\n`).catch(() => undefined);
}

/** The worktree the session is in, and where it came from, so ExitWorktree can return. */
export interface WorktreeState {
  current:
    | {
        path: string;
        branch: string | undefined;
        /** True when EnterWorktree made the branch (ExitWorktree remove deletes only such a branch). */
        createdBranch: boolean;
        /** The session's working directory before it entered; undefined when it was the original one. */
        returnTo: string | undefined;
        /** The directory the session worked in before it entered (git runs there to remove the worktree). */
        from: string;
        /** The shell's directory before it entered. */
        shellDir: string | undefined;
      }
    | undefined;
}

export const worktreeSlot: SessionSlot<WorktreeState> = {
  key: "worktree",
  create: () => ({ current: undefined }),
  save: (state) => state,
  load: (data) => {
    const current = (data as Partial<WorktreeState> | null)?.current;
    return { current: current && typeof current.path === "string" ? current : undefined };
  },
};
