import { holdOptimizingCompilers } from "../process/compilers.js";

// The entry (main.ts) imports this module first, so that for `cc-tools mcp` V8's optimizing compilers are
// held off before anything else of the entry runs: resolving its paths alone runs Node's path code hot
// enough for Maglev on Node 24, and that one compilation made 2 MB of the binary resident. The server
// resumes them with its first call (src/process/compilers.ts).
if (process.argv[2] === "mcp") holdOptimizingCompilers();
