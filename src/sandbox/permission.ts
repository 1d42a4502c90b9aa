import type { ToolContext } from "../core/context.js";
import type { AnyTool } from "../core/tool.js";
import type { PermissionDecision } from "../permissions/types.js";
import { commandSandboxed } from "./mode.js";

/** Modes in which a sandboxed command is allowed without asking (autoAllowBashIfSandboxed). */
const AUTO_ALLOW_MODES = new Set(["default", "acceptEdits"]);

/**
 * With the sandbox on and sandbox.autoAllowBashIfSandboxed (the default), a command that will run inside
 * it needs no approval: the kernel holds the boundary the question was about. Only an `ask` that came
 * from the mode changes; deny rules, ask rules and plan mode's refusals stand, and a command that leaves
 * the sandbox (dangerouslyDisableSandbox, sandbox.excludedCommands) keeps the rules' answer.
 */
export function sandboxAutoAllow(
  ctx: ToolContext,
  tool: AnyTool,
  input: unknown,
  decision: PermissionDecision,
): PermissionDecision | undefined {
  if (decision.behavior !== "ask" || decision.rule !== undefined) return undefined;
  if (!AUTO_ALLOW_MODES.has(ctx.permissionMode)) return undefined;
  if (ctx.config.sandbox.autoAllowBashIfSandboxed === false) return undefined;
  const subject = tool.permissionSubject(input, ctx);
  if (subject.kind !== "command") return undefined;
  const disableSandbox =
    (input as { dangerouslyDisableSandbox?: unknown }).dangerouslyDisableSandbox === true;
  const verdict = commandSandboxed(ctx, { command: subject.command, shell: subject.shell, disableSandbox });
  if (!verdict.sandboxed) return undefined;
  return {
    behavior: "allow",
    reason:
      "it runs inside the OS sandbox, which confines its writes and network (sandbox.autoAllowBashIfSandboxed)",
  };
}
