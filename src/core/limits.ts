/** Limits that span modules. Tool-specific limits live beside their tool, each as a named constant. */

/** Longest a single tool call may run before the executor aborts it (Bash's own maximum is 10 minutes). */
export const TOOL_CALL_DEADLINE_MS = 15 * 60_000;

/**
 * How long a cancelled or timed-out call gets to stop (kill its processes, remove temp files) before its
 * result is returned anyway; so "cancelled" means stopped, not merely abandoned. Covers TERM, then KILL.
 */
export const CANCEL_GRACE_MS = 5_000;

/** How long one hook command may run, unless its settings entry says otherwise. */
export const HOOK_DEFAULT_TIMEOUT_MS = 60_000;

/** Most output kept from one hook command. */
export const HOOK_MAX_OUTPUT_CHARS = 64 * 1024;

/** When a result is spilled to a file, how much of its start and end stays in the result. */
export const SPILL_HEAD_CHARS = 8_000;
export const SPILL_TAIL_CHARS = 2_000;

/** Most calls of one batch running at once. */
export const BATCH_CONCURRENCY = 10;

/**
 * Largest `arguments` object an MCP tools/call may carry, as characters of JSON; bigger ones are refused
 * before any tool parses them. Over HTTP the request body limit (serve-http.ts) is above it.
 */
export const MAX_ARGUMENT_CHARS = 16 * 1024 * 1024;
