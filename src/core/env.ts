import type { ToolContext } from "./context.js";

/**
 * A variable from the settings files' `env`, else from the process environment: Claude Code reads its
 * tuning variables (BASH_MAX_TIMEOUT_MS, CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS, …) from both.
 */
export function configuredEnv(ctx: Pick<ToolContext, "config">, name: string): string | undefined {
  return ctx.config.env[name] ?? process.env[name];
}

/** A configured positive integer, or `fallback` when it is unset or not a positive integer. */
export function configuredPositiveInt(
  ctx: Pick<ToolContext, "config">,
  name: string,
  fallback: number,
): number {
  const raw = configuredEnv(ctx, name);
  const value = raw === undefined ? Number.NaN : Number(raw);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}
