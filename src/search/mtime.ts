import { statSync } from "node:fs";
import { resolve } from "node:path";
import { ToolError } from "../core/errors.js";

/** Stats between yields to the event loop, so a huge listing still lets an abort or progress through. */
const STATS_PER_TURN = 4_096;

/**
 * Sorts display paths newest first (ties by name, so the order is stable). Synchronous stats in
 * slices: measured faster than fs.promises.stat with any concurrency, and than `rg --sortr modified`
 * (which makes rg single-threaded).
 */
export async function newestFirst(
  cwd: string,
  paths: readonly string[],
  signal: AbortSignal,
): Promise<string[]> {
  const times = new Float64Array(paths.length);
  for (let i = 0; i < paths.length; i++) {
    if (i > 0 && i % STATS_PER_TURN === 0) {
      await new Promise((r) => setImmediate(r));
      if (signal.aborted) throw new ToolError("The search was cancelled.");
    }
    times[i] = statSync(resolve(cwd, paths[i]!), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  }
  const order = Array.from(paths.keys());
  order.sort((a, b) => times[b]! - times[a]! || (paths[a]! < paths[b]! ? -1 : paths[a]! > paths[b]! ? 1 : 0));
  return order.map((i) => paths[i]!);
}
