import type { ToolContext } from "../core/context.js";
import { log } from "../core/log.js";
import { splitPowerShell } from "../permissions/powershell-split.js";
import { parseRule, type Shell } from "../permissions/rules.js";
import { commandText, splitBash } from "../permissions/shell-split.js";
import { type Availability, sandboxAvailability } from "./probe.js";

/** Whether commands of this session run in the OS sandbox, and why, in words for `cc-tools sandbox status`. */
export interface SandboxMode {
  active: boolean;
  /** Turned off in the settings (sandbox.enabled: false): nothing to warn about. */
  disabled: boolean;
  /**
   * Commands are refused: the sandbox is required (failIfUnavailable) but cannot be used, or whether it
   * works is not known yet (its probe timed out).
   */
  refuse: boolean;
  why: string;
  availability: Availability;
}

export function sandboxMode(ctx: ToolContext): SandboxMode {
  const settings = ctx.config.sandbox;
  if (settings.enabled === false) {
    return {
      active: false,
      disabled: true,
      refuse: false,
      why: "off: sandbox.enabled is false in the settings",
      availability: { ok: false, reason: "not checked (sandbox.enabled is false)", hint: "" },
    };
  }
  // The PATH commands get (childEnv's), without copying the whole environment for every command.
  const availability = sandboxAvailability(ctx.config.env.PATH ?? process.env.PATH ?? "");
  const source = settings.enabled === true ? "sandbox.enabled is true" : "on by default where it works";
  if (availability.ok) {
    const why = `on (${availability.mechanism}): ${source}`;
    return { active: true, disabled: false, refuse: false, why, availability };
  }
  if (settings.failIfUnavailable || availability.undecided) {
    return {
      active: false,
      disabled: false,
      refuse: true,
      why: availability.undecided
        ? `not known: ${availability.reason}`
        : `required by sandbox.failIfUnavailable but unavailable: ${availability.reason}`,
      availability,
    };
  }
  return {
    active: false,
    disabled: false,
    refuse: false,
    why: `off: ${availability.reason}; commands run with the permission rules alone`,
    availability,
  };
}

let warned = false;

/** The one warning per process that the sandbox is missing, with how to install it. */
export function warnIfUnavailable(mode: SandboxMode): void {
  if (warned || mode.active || mode.disabled || mode.availability.ok) return;
  warned = true;
  const { availability } = mode;
  log.warn(
    `Commands run without the OS sandbox: ${availability.reason}. Only the permission rules guard them. ${availability.hint}`,
  );
}

export interface CommandRequest {
  command: string;
  shell: Shell;
  /** The Bash/PowerShell `dangerouslyDisableSandbox` input. */
  disableSandbox?: boolean;
}

/** The excluded-command entry that covers a part of the command, if any; a command we cannot split has none. */
function excludedBy(ctx: ToolContext, request: CommandRequest): string | undefined {
  const entries = ctx.config.sandbox.excludedCommands;
  if (entries.length === 0) return undefined;
  const split = request.shell === "bash" ? splitBash(request.command) : splitPowerShell(request.command);
  if (!split.ok) return undefined;
  const tool = request.shell === "bash" ? "Bash" : "PowerShell";
  for (const entry of entries) {
    // `docker` covers `docker ps` (a prefix ending at a word); `docker:*` and `npm run *` are rule patterns.
    const text = /[*]/.test(entry) ? entry : `${entry}:*`;
    const parsed = parseRule(`${tool}(${text})`);
    if (!parsed.ok || parsed.rule.kind !== "command") continue;
    const { pattern } = parsed.rule;
    if (split.commands.some((c) => pattern.matches(commandText(c)))) return entry;
  }
  return undefined;
}

/** Whether one command runs inside the sandbox, and why not when it does not. */
export function commandSandboxed(
  ctx: ToolContext,
  request: CommandRequest,
  mode = sandboxMode(ctx),
): { sandboxed: boolean; why: string } {
  if (!mode.active) return { sandboxed: false, why: mode.why };
  const excluded = excludedBy(ctx, request);
  if (excluded) return { sandboxed: false, why: `"${excluded}" is in sandbox.excludedCommands` };
  if (request.disableSandbox) {
    if (ctx.config.sandbox.allowUnsandboxedCommands === false) {
      return {
        sandboxed: true,
        why: "dangerouslyDisableSandbox is ignored: sandbox.allowUnsandboxedCommands is false",
      };
    }
    return { sandboxed: false, why: "the call asked to run outside the sandbox (dangerouslyDisableSandbox)" };
  }
  return { sandboxed: true, why: mode.why };
}
