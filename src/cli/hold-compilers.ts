/**
 * For `cc-tools mcp`: holds V8's optimizing compilers off (src/process/compilers.ts) before anything else of
 * the entry runs. It is the entry's first import, so its body runs before the other modules' (ES module
 * order, which the CommonJS bundle keeps).
 *
 * Not later: V8 marks a function for optimization once its calls add up, counted from the process's start.
 * Node's own path code (isPosixPathSeparator, run for each character of every path Node resolves while it
 * loads the entry) reached Maglev's threshold during this bundle's module initialization, a few path joins
 * in; that one Maglev compilation left 1.5 MB of the compiler's code resident in every idle server on Node
 * 24 (docs/PERFORMANCE.md, "Idle RSS").
 *
 * When it serves stdio, stdin and stdout are set up first, so the stream modules the opening answers with
 * load as before. A held compiler changes V8's flag hash, and V8 then refuses the code cache Node ships for
 * its own modules: one loaded after the hold is compiled from its source, 2 to 3 times slower (net, stream
 * and their helpers: 4 to 5 ms on this 2-core VM), which the client's tool list would wait for. node:v8
 * itself, which the hold needs, loads next, still with its cache.
 */
import { holdOptimizingCompilers } from "../process/compilers.js";
import { servesStdio } from "./stdio-args.js";

if (process.argv[2] === "mcp") {
  if (servesStdio(process.argv)) {
    void process.stdin;
    void process.stdout;
  }
  holdOptimizingCompilers();
}
