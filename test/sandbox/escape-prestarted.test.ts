import { usePrestartedShells } from "../../src/process/prestart.js";

// Every escape attempt again, each command run by the shell the session started ahead of it (as the MCP
// server and the agent run commands): only the fork moves, never the policy.
// At once, not after a quiet moment: the suites run their calls back to back.
usePrestartedShells({ quietMs: 0 });
await import("./escape.test.js");
