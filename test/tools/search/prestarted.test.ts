import { usePrestartedShells } from "../../../src/process/prestart.js";

// Grep and Glob again, with ripgrep started in the session's waiting shell wherever it fits (as in the MCP
// server and the agent): the results must be the same.
// At once, not after a quiet moment: the suites run their calls back to back.
usePrestartedShells({ quietMs: 0 });
await import("./grep.test.js");
await import("./glob.test.js");
