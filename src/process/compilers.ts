import { log } from "../core/log.js";

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
 * Flags V8 turns off with a compiler and does not turn back on with it, and the V8 major version from which
 * the flag exists (V8 prints an error for a flag it does not know): on Node 22, `--no-turbofan` implies
 * `--no-osr-from-maglev`. Those on before the hold are turned on again when it ends (a test holds and
 * resumes on every Node line and requires V8's flag tag to come back to what it was).
 */
const TURNED_OFF_WITH_COMPILERS = [{ flag: "osr-from-maglev", sinceV8: 12 }] as const;
const V8_MAJOR = Number(process.versions.v8.split(".")[0]);
/**
 * The newest V8 whose implications TURNED_OFF_WITH_COMPILERS is known to cover (Node 24's 13.6). A newer V8
 * may turn off another flag with TurboFan that resuming would leave off, so calls would run slower for good:
 * there the compilers are not held, which costs idle memory only.
 */
export const NEWEST_VERIFIED_V8_MAJOR = 13;

/**
 * What a hold turned off, kept on the global object under a registered symbol: the entry that holds the
 * compilers (src/cli/main.ts) is a CommonJS bundle of its own and the server that resumes them an ES module
 * one (scripts/postbuild.mjs), each with its own copy of this module.
 */
const HELD = Symbol.for("cc-tools.held-compilers");
const holder = globalThis as { [HELD]?: string[] };

/**
 * node:v8, taken when a hold starts rather than imported: the entry is bundled into one file, where an
 * import would load node:v8 first thing for every command (`--version`, `run`), not only `mcp`.
 */
const v8 = () => process.getBuiltinModule("node:v8");

/** Turns `--no-<flag>` on; true when that changed it (it was on). */
function turnOff(flag: string): boolean {
  const { cachedDataVersionTag, setFlagsFromString } = v8();
  const before = cachedDataVersionTag();
  setFlagsFromString(`--no-${flag}`);
  return cachedDataVersionTag() !== before;
}

/**
 * Turns V8's optimizing compilers off until resumeOptimizingCompilers(); a second hold does nothing, and
 * neither does a hold on a V8 newer than NEWEST_VERIFIED_V8_MAJOR. Never throws: a hold is an optimization.
 */
export function holdOptimizingCompilers(): void {
  if (holder[HELD] || V8_MAJOR > NEWEST_VERIFIED_V8_MAJOR) return;
  const held: string[] = [];
  try {
    // Which of the flags a compiler takes with it are on now (each turned off and at once on again).
    for (const { flag, sinceV8 } of TURNED_OFF_WITH_COMPILERS) {
      if (V8_MAJOR < sinceV8 || !turnOff(flag)) continue;
      v8().setFlagsFromString(`--${flag}`);
      held.push(flag);
    }
    for (const compiler of OPTIMIZING_COMPILERS) if (turnOff(compiler)) held.push(compiler);
  } catch (error) {
    log.debug("could not hold the optimizing compilers", error);
  } finally {
    holder[HELD] = held;
  }
}

/** Turns back on what holdOptimizingCompilers() turned off; nothing when nothing is held. Never throws. */
export function resumeOptimizingCompilers(): void {
  const held = holder[HELD];
  if (!held) return;
  delete holder[HELD];
  // The compilers first: turning one on again does not bring back a flag it took with it. Each flag on its
  // own, so one that fails leaves the others turned back on.
  for (const flag of [...held].reverse()) {
    try {
      v8().setFlagsFromString(`--${flag}`);
    } catch (error) {
      log.debug(`could not turn --${flag} back on`, error);
    }
  }
}

/** The compilers held off now (for tests and diagnostics). */
export function heldCompilers(): readonly string[] {
  const held = holder[HELD] ?? [];
  return held.filter((flag) => (OPTIMIZING_COMPILERS as readonly string[]).includes(flag));
}
