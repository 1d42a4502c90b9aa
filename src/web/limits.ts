/** Limits of the web tools (WebFetch, WebSearch), each named once. */

/** Longest one fetch may take, connecting, redirects and body included. */
export const FETCH_TIMEOUT_MS = 30_000;

/** Most redirects followed within one host; a redirect to another host is never followed. */
export const MAX_REDIRECTS = 10;

/** Most bytes of a body read (after decompression, so a small gzip bomb stops here too). */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** Longest page text a WebFetch result carries; the rest is saved to a file the result names. */
export const MAX_PAGE_CHARS = 100_000;

/** How long a fetched page is served from the session's cache. */
export const CACHE_TTL_MS = 15 * 60_000;

/** Most characters of page text the cache holds per session; the oldest entries go first. */
export const CACHE_MAX_CHARS = 50_000_000;

/** Most characters of page text handed to the model that applies a prompt. */
export const PROMPT_INPUT_MAX_CHARS = MAX_PAGE_CHARS;

/** Longest answer the prompt model may write, in tokens. */
export const PROMPT_MAX_OUTPUT_TOKENS = 2_048;

/** Longest the prompt model may take to answer. */
export const PROMPT_TIMEOUT_MS = 60_000;

/** Most search results listed. */
export const MAX_SEARCH_RESULTS = 10;

/** Most results asked of a provider, so domain filters still leave enough to list. */
export const SEARCH_FETCH_COUNT = 20;

/** Most bytes of a search provider's response read. */
export const MAX_SEARCH_RESPONSE_BYTES = 4 * 1024 * 1024;
