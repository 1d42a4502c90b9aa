import { relative, sep } from "node:path";
import { escapes } from "../fs/canonical.js";

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
    (CONTROL_SETTINGS.has(name) && parts[parts.length - 2] === ".claude")
  );
}
