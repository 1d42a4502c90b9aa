import type { ToolContext } from "../core/context.js";
import type { PermissionSubject } from "../core/tool.js";

/** What permission rules see for a file tool's call: the absolute path, read or written. */
export function pathSubject(ctx: ToolContext, path: string, access: "read" | "write"): PermissionSubject {
  return { kind: "path", path: ctx.resolvePath(path), access };
}
