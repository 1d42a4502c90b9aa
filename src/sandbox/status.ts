import type { ToolContext } from "../core/context.js";
import { sandboxMode } from "./mode.js";
import { buildPolicy, type SandboxPolicy } from "./policy.js";

/** What `cc-tools sandbox status` reports: whether the sandbox is in force, why, and the policy it applies. */
export interface SandboxStatus {
  active: boolean;
  /** Commands are refused: the sandbox is required (failIfUnavailable) but unavailable, or not known to work yet. */
  refusing: boolean;
  why: string;
  mechanism?: string;
  launcher?: string;
  version?: string;
  hint?: string;
  autoAllowBashIfSandboxed: boolean;
  allowUnsandboxedCommands: boolean;
  sandboxHooks: boolean;
  excludedCommands: string[];
  ignoredSettings: string[];
  policy?: SandboxPolicy;
  /** Why the policy could not be built (it would fail every sandboxed command). */
  policyError?: string;
}

export function sandboxStatus(ctx: ToolContext): SandboxStatus {
  const mode = sandboxMode(ctx);
  const settings = ctx.config.sandbox;
  const { availability } = mode;
  const status: SandboxStatus = {
    active: mode.active,
    refusing: mode.refuse,
    why: mode.why,
    ...(availability.ok
      ? { mechanism: availability.mechanism, launcher: availability.path, version: availability.version }
      : { hint: availability.hint || undefined }),
    autoAllowBashIfSandboxed: settings.autoAllowBashIfSandboxed !== false,
    allowUnsandboxedCommands: settings.allowUnsandboxedCommands !== false,
    sandboxHooks: settings.sandboxHooks === true,
    excludedCommands: settings.excludedCommands,
    ignoredSettings: settings.ignoredKeys,
  };
  if (mode.active) {
    try {
      status.policy = buildPolicy(ctx);
    } catch (error) {
      status.policyError = (error as Error).message;
    }
  }
  return status;
}

const list = (items: readonly string[]) =>
  items.length === 0 ? "  (none)" : items.map((i) => `  ${i}`).join("\n");

export function formatStatus(status: SandboxStatus): string {
  const lines = [`Sandbox: ${status.why}`];
  if (status.launcher)
    lines.push(`Launcher: ${status.launcher}${status.version ? ` (${status.version})` : ""}`);
  if (status.hint) lines.push(`How to fix: ${status.hint}`);
  lines.push(
    `Commands inside run without asking (default, acceptEdits modes): ${status.active && status.autoAllowBashIfSandboxed ? "yes" : "no"} (sandbox.autoAllowBashIfSandboxed)`,
    `dangerouslyDisableSandbox honoured: ${status.allowUnsandboxedCommands ? "yes, such commands go through the permission rules" : "no"} (sandbox.allowUnsandboxedCommands)`,
    `Hooks sandboxed: ${status.sandboxHooks ? "yes" : "no"} (sandbox.sandboxHooks)`,
    `Excluded commands (run outside, through the rules):\n${list(status.excludedCommands)}`,
  );
  if (status.policyError)
    lines.push(`The policy cannot be applied; every sandboxed command fails:\n  ${status.policyError}`);
  const policy = status.policy;
  if (policy) {
    lines.push(
      `Writable:\n${list(policy.writable)}`,
      `Read-only inside writable places (control files, denyWrite):\n${list([...policy.readOnly, ...policy.placeholders.map((p) => `${p} (does not exist; kept from being created)`)])}`,
      `Pinned (cannot be renamed or replaced):\n${list(policy.pinned)}`,
      `Hidden:\n${list(policy.masked.map((m) => `${m.path} (${m.why})`))}`,
      `Network: ${policy.network.allowedDomains.length === 0 ? "none (no host allowed)" : "through the filtering proxy"}`,
      `  allowed: ${policy.network.allowedDomains.join(", ") || "(none)"}`,
      `  denied: ${policy.network.deniedDomains.join(", ") || "(none)"}`,
      `$TMPDIR: ${policy.tmpDir}`,
      `Package-manager cache: ${policy.cacheDir}`,
    );
  }
  if (status.ignoredSettings.length > 0) {
    lines.push(`Accepted but not acted on: ${status.ignoredSettings.join(", ")} (see docs/SANDBOX.md)`);
  }
  return `${lines.join("\n")}\n`;
}
