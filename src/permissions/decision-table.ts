import type { PermissionLevel, PermissionMode } from "../core/permission-level.js";
import type { RuleBehavior } from "./types.js";

/** The levels the table speaks about (`none` never reaches it: such tools need no permission). */
export type TableLevel = Exclude<PermissionLevel, "none">;

/**
 * What a mode does with a level when no rule speaks, for a subject inside the workspace and outside it.
 * dontAsk uses the default row and then turns every remaining ask into a deny. Rules act around this
 * table: deny rules win over everything, plan's denials win over ask and allow rules, ask rules win over
 * the table's allow, and allow rules turn the table's ask into allow (never for Dangerous).
 */
export const DECISION_TABLE: Record<
  PermissionMode,
  Record<TableLevel, { inside: RuleBehavior; outside: RuleBehavior }>
> = {
  default: {
    readOnly: { inside: "allow", outside: "ask" },
    write: { inside: "ask", outside: "ask" },
    execute: { inside: "ask", outside: "ask" },
    dangerous: { inside: "ask", outside: "ask" },
  },
  acceptEdits: {
    readOnly: { inside: "allow", outside: "ask" },
    write: { inside: "allow", outside: "ask" },
    execute: { inside: "ask", outside: "ask" },
    dangerous: { inside: "ask", outside: "ask" },
  },
  plan: {
    readOnly: { inside: "allow", outside: "ask" },
    write: { inside: "deny", outside: "deny" },
    execute: { inside: "deny", outside: "deny" },
    dangerous: { inside: "deny", outside: "deny" },
  },
  bypassPermissions: {
    readOnly: { inside: "allow", outside: "allow" },
    write: { inside: "allow", outside: "allow" },
    execute: { inside: "allow", outside: "allow" },
    dangerous: { inside: "allow", outside: "allow" },
  },
  dontAsk: {
    readOnly: { inside: "allow", outside: "ask" },
    write: { inside: "ask", outside: "ask" },
    execute: { inside: "ask", outside: "ask" },
    dangerous: { inside: "ask", outside: "ask" },
  },
};

/** One cell of the table: what `mode` does with `level` for a subject inside the workspace or outside it. */
export function tableCell(mode: PermissionMode, level: TableLevel, inside: boolean): RuleBehavior {
  const row = DECISION_TABLE[mode][level];
  return inside ? row.inside : row.outside;
}
