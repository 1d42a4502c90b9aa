import { stat } from "node:fs/promises";
import type { ToolContext } from "../core/context.js";
import { InputError } from "../core/errors.js";

/** The search root a call names, resolved and checked; a missing one is an error naming the working dir. */
export async function searchRoot(
  ctx: ToolContext,
  path: string | undefined,
  tool: string,
  /** What the tool's path may name, for the message: "directory" or "file or directory". */
  accepts: string,
): Promise<{ root: string; isFile: boolean }> {
  const root = ctx.resolvePath(path ?? ".");
  const info = await stat(root).catch(() => undefined);
  if (!info) {
    throw new InputError(
      `${root} does not exist (the working directory is ${ctx.workingDir}). ` +
        `Give ${tool} an existing ${accepts}, absolute or relative to the working directory, or leave path out.`,
    );
  }
  return { root, isFile: !info.isDirectory() };
}
