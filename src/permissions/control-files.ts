import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { escapes, expandTilde } from "../fs/canonical.js";
import { splitBash } from "./shell-split.js";

/** Settings files whose rules and hooks apply wherever they sit in a workspace (a subdirectory can be a cwd). */
const CONTROL_SETTINGS = new Set(["settings.json", "settings.local.json"]);

/**
 * Files in a workspace that control permissions, hooks and what runs: any .claude/settings*.json and
 * .mcp.json at any depth, and anything in or named .git (config, hooks, and the gitfile of a worktree,
 * whose gitdir line picks the config). A write there could grant the writer more than it was given.
 */
export function isControlFile(path: string, workspace: string): boolean {
  const rel = relative(workspace, path);
  if (rel === "" || escapes(rel)) return false;
  const parts = rel.split(sep);
  const name = parts[parts.length - 1]!;
  return (
    parts.includes(".git") ||
    name === ".mcp.json" ||
    (CONTROL_SETTINGS.has(name) && parts[parts.length - 2] === ".claude") ||
    wouldMakeGitDir(path, workspace)
  );
}

/** Entries of a git directory; with HEAD, objects and refs (config is what runs code) git takes it for one. */
const GIT_DIR_ENTRIES = new Set([
  "HEAD",
  "config",
  "objects",
  "refs",
  "commondir",
  "packed-refs",
  "hooks",
  "info",
]);
const GIT_DIR_MARKERS = ["HEAD", "config", "objects", "refs"];

/**
 * Whether writing `path` adds to a directory that git would discover as a repository (a bare repository
 * written file by file: HEAD, config, objects/, refs/): a directory below the workspace already holding
 * one of those entries beside the one being written. `git status` run there would obey its config
 * (core.fsmonitor runs a program).
 */
function wouldMakeGitDir(path: string, workspace: string): boolean {
  for (let child = path, dir = dirname(path); dir !== child && !escapes(relative(workspace, dir)); ) {
    if (GIT_DIR_ENTRIES.has(basename(child))) {
      const others = GIT_DIR_MARKERS.filter((entry) => entry !== basename(child));
      if (others.some((entry) => existsSync(join(dir, entry)))) return true;
    }
    child = dir;
    dir = dirname(dir);
  }
  return false;
}

/**
 * Where a workspace's control paths really lead when they are links: a repository may ship `.claude`,
 * `.git` or `.mcp.json` as a symlink to another folder, whose files then decide what runs here.
 */
export interface ControlTargets {
  /** Directories whose settings*.json are control files (the targets of linked .claude dirs). */
  settingsDirs: string[];
  /** Directories wholly control (the targets of linked .git dirs). */
  gitDirs: string[];
  /** Files that are control files: linked .mcp.json targets, hook scripts named in settings. */
  files: string[];
}

function linkTarget(path: string): string | undefined {
  try {
    const real = realpathSync.native(path);
    return real === path ? undefined : real;
  } catch {
    return undefined;
  }
}

export function controlTargets(workspaces: readonly string[], extraFiles: readonly string[]): ControlTargets {
  const targets: ControlTargets = { settingsDirs: [], gitDirs: [], files: [] };
  for (const root of workspaces) {
    const claude = linkTarget(join(root, ".claude"));
    if (claude) targets.settingsDirs.push(claude);
    const git = linkTarget(join(root, ".git"));
    if (git) targets.gitDirs.push(git);
    const mcp = linkTarget(join(root, ".mcp.json"));
    if (mcp) targets.files.push(mcp);
  }
  for (const file of extraFiles) targets.files.push(file, linkTarget(file) ?? file);
  return targets;
}

/** Whether a path (as written or where it leads) is one of the linked control targets. */
export function isControlTarget(path: string, targets: ControlTargets): boolean {
  const within = (dir: string) => path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
  return (
    targets.files.includes(path) ||
    targets.gitDirs.some(within) ||
    targets.settingsDirs.some((dir) => dirname(path) === dir && CONTROL_SETTINGS.has(basename(path)))
  );
}

/** Words of a hook command that name script files: a path with a slash, or a name with a script extension. */
const SCRIPT_WORD = /\/|\.(sh|bash|zsh|py|js|mjs|cjs|ts|rb|pl|php|ps1)$/;

/**
 * The script files that settings hooks run (`"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh`,
 * `python3 scripts/guard.py`): they are executable policy, so writing one is writing a control file.
 * Relative names resolve against the project directory, where hooks run.
 */
export function hookScripts(commands: readonly string[], projectDir: string, homeDir: string): string[] {
  const scripts = new Set<string>();
  for (const command of commands) {
    const text = command.replace(/\$\{?CLAUDE_PROJECT_DIR\}?/g, projectDir);
    const split = splitBash(text);
    if (!split.ok) continue;
    for (const part of split.commands) {
      for (const literal of part.literals) {
        if (literal === undefined || !SCRIPT_WORD.test(literal) || literal.startsWith("-")) continue;
        const expanded = expandTilde(literal, homeDir);
        const path = isAbsolute(expanded) ? expanded : resolve(projectDir, expanded);
        if (isFile(path) || !existsSync(path)) scripts.add(path);
      }
    }
  }
  return [...scripts];
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * A directory git would use as a repository when run in `dir`: the first of `dir` and its parents up to
 * (not including) the workspace root that is a git directory itself (HEAD, objects/, refs/) or holds a
 * `.git`; undefined when git would reach the workspace's own repository (or none).
 */
export function nestedRepository(dir: string, workspace: string): string | undefined {
  for (let current = dir; !escapes(relative(workspace, current)); current = dirname(current)) {
    const atRoot = relative(workspace, current) === "";
    const bare = ["HEAD", "objects", "refs"].every((entry) => existsSync(join(current, entry)));
    if (bare) return current;
    if (atRoot) return undefined;
    if (existsSync(join(current, ".git"))) return current;
    if (dirname(current) === current) return undefined;
  }
  return undefined;
}
