import { cachedDataVersionTag, setFlagsFromString } from "node:v8";

/**
 * V8's optimizing compilers (TurboFan; Maglev where this Node runs it) held off while a long-running host
 * loads, and given back once it serves.
 *
 * Loading the MCP server runs some functions thousands of times once (Node's own path and URL code over
 * every module it resolves, zod building the tools' schemas), and V8 optimizes whatever runs hot. The
 * optimized code is never used again, but compiling it makes the compilers' own code resident: the node
 * binary's pages of TurboFan and Maglev, 4.5 MB on Node 20, 5.7 MB on Node 22 and 7.7 MB on Node 24, plus
 * their zone memory, in a server that then sits idle until the client calls (docs/PERFORMANCE.md, "Idle
 * RSS"). With the compilers held, the load runs in the interpreter and the baseline compiler, which is what
 * code that runs once wants anyway. Calls get the compilers back: a host resumes them once it has loaded.
 *
 * Only what was on is turned off, and only that is turned back on, so a compiler someone turned off
 * (`--no-opt` in NODE_OPTIONS) stays off, and one this Node does not run (Maglev on Node 20 and 22) is not
 * started. Node has no way to read a V8 flag, but V8's cached-data version tag hashes every flag that
 * differs from its default: a compiler turned off changes the tag; one already off, or one this V8 cannot
 * run (a read-only flag), does not.
 */
const OPTIMIZING_COMPILERS = ["turbofan", "maglev"] as const;

/**
 * The compilers this process holds off, kept on the global object under a registered symbol: the entry that
 * holds them (src/cli/main.ts) is a CommonJS bundle of its own and the server that resumes them an ES module
 * one (scripts/postbuild.mjs), each with its own copy of this module.
 */
const HELD = Symbol.for("cc-tools.held-compilers");
const holder = globalThis as { [HELD]?: string[] };

/** Turns V8's optimizing compilers off until resumeOptimizingCompilers(); a second hold does nothing. */
export function holdOptimizingCompilers(): void {
  if (holder[HELD]) return;
  const held: string[] = [];
  try {
    for (const compiler of OPTIMIZING_COMPILERS) {
      const before = cachedDataVersionTag();
      setFlagsFromString(`--no-${compiler}`);
      if (cachedDataVersionTag() !== before) held.push(compiler);
    }
  } finally {
    holder[HELD] = held;
  }
}

/** Turns back on the compilers holdOptimizingCompilers() turned off; nothing when none are held. */
export function resumeOptimizingCompilers(): void {
  const held = holder[HELD];
  if (!held) return;
  delete holder[HELD];
  for (const compiler of held) setFlagsFromString(`--${compiler}`);
}

/** The compilers held off now (for tests and diagnostics). */
export function heldCompilers(): readonly string[] {
  return holder[HELD] ?? [];
}
