/** The agent loop's limits, in one place. */

/** Longest quiet time in a model's stream before it counts as stalled and is retried. */
export const STREAM_IDLE_MS = 90_000;
/** Attempts of one model call (the first included) on 429, 529, 5xx and stalled streams. */
export const MODEL_MAX_ATTEMPTS = 5;
/** First wait between attempts; it doubles each time, up to MODEL_RETRY_MAX_DELAY_MS, with jitter. */
export const MODEL_RETRY_BASE_DELAY_MS = 1_000;
export const MODEL_RETRY_MAX_DELAY_MS = 30_000;
/** Turns (model replies) one run may take before it stops and says so. */
export const DEFAULT_MAX_TURNS = 100;
/** Output tokens a reply may use. */
export const DEFAULT_MAX_TOKENS = 16_000;
/** How many times a reply cut at max_tokens is asked to continue in a row. */
export const MAX_CONTINUATIONS = 3;
/** Share of the context window at which old tool results are elided, then the history summarised. */
export const COMPACT_AT_FRACTION = 0.8;
/** Tool results kept whole (the most recent) when old ones are elided. */
export const KEEP_RECENT_TOOL_RESULTS = 4;
/** Characters of a tool call's unparseable arguments quoted back to the model. */
export const MALFORMED_INPUT_SHOWN = 2_000;
/** Nesting depth of sub-agents (a sub-agent's own Task calls count one deeper). */
export const MAX_AGENT_DEPTH = 2;
/** Output tokens of WebFetch's one-shot prompt answers and of summaries. */
export const SMALL_MAX_TOKENS = 4_096;
