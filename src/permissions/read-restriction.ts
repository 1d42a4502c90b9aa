import { homedir } from "node:os";
import type { ToolContext } from "../core/context.js";
import { readRestriction } from "./evaluate.js";

/**
 * For Grep and Glob: a test that says which files the session's Read deny and ask rules keep out of a
 * directory-wide search, or undefined when no rule does.
 */
export function hiddenFromSearch(
  ctx: ToolContext,
  toolName: string,
): ((path: string) => boolean) | undefined {
  return readRestriction({
    toolName,
    rules: ctx.rules(),
    workingDir: ctx.workingDir,
    additionalDirectories: ctx.additionalDirectories,
    homeDir: homedir(),
  });
}
