/**
 * How much a tool can affect the world. The permission decision table (src/permissions/decide.ts)
 * maps a level and a permission mode to allow, ask or deny.
 */
export const PermissionLevel = {
  /** Pure bookkeeping (todos, sleeping, plan mode switches): never checked. */
  None: "none",
  /** Reads files or the network without changing anything. */
  ReadOnly: "readOnly",
  /** Changes files inside the workspace. */
  Write: "write",
  /** Runs programs (shells, MCP server tools, sub-agents). */
  Execute: "execute",
  /** Irreversible or far-reaching actions. */
  Dangerous: "dangerous",
} as const;

export type PermissionLevel = (typeof PermissionLevel)[keyof typeof PermissionLevel];

export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/**
 * How much each mode lets through without asking. Moving up widens what the model may do: a sub-agent may not
 * run above its parent, and Config asks before a mode change that moves up.
 */
export const MODE_REACH: Record<PermissionMode, number> = {
  plan: 0,
  dontAsk: 1,
  default: 2,
  acceptEdits: 3,
  bypassPermissions: 4,
};

export function isPermissionMode(value: unknown): value is PermissionMode {
  return typeof value === "string" && (PERMISSION_MODES as readonly string[]).includes(value);
}
