import { builtinBackend } from "./builtin-backend.js";
import type { SearchBackend } from "./query.js";
import { ripgrepBackend } from "./rg-backend.js";
import { findRipgrep } from "./ripgrep.js";

/** ripgrep when a binary is found (and not switched off), else the built-in search. */
export async function searchBackend(): Promise<SearchBackend> {
  const binary = await findRipgrep();
  return binary ? ripgrepBackend(binary) : builtinBackend;
}
