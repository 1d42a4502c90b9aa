import type { ToolContextOptions } from "../../src/context.js";
import type { ToolCallContext, ToolContext } from "../../src/core/context.js";
import type { PermissionRuleEntry } from "../../src/permissions/types.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";

export function allow(...rules: string[]): PermissionRuleEntry[] {
  return rules.map((rule) => ({
    rule,
    behavior: "allow" as const,
    source: { scope: "cli" as const, root: "/" },
  }));
}

/** A context (bypassPermissions unless told) whose settings `env` holds `env`, and whose rules are `rules`. */
export function webContext(
  options: { rules?: PermissionRuleEntry[]; env?: Record<string, string> } & Partial<ToolContextOptions> = {},
): ToolContext {
  const workingDir = options.workingDir ?? tempDir();
  const { env, ...rest } = options;
  return testContext({ ...rest, workingDir, config: { ...emptySettings(workingDir), env: env ?? {} } });
}

/** The per-call view the executor gives a tool, for calling the web machinery directly. */
export function callContext(
  ctx: ToolContext,
  signal: AbortSignal = new AbortController().signal,
): ToolCallContext {
  const call = Object.create(ctx) as ToolCallContext;
  Object.defineProperties(call, {
    signal: { value: signal },
    toolUseId: { value: "test-call" },
    reportProgress: { value: () => {} },
  });
  return call;
}
