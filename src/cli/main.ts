#!/usr/bin/env node
/**
 * The `cc-tools` entry. It does as little as possible before handing over to the command line
 * (program.ts): it turns on Node's compile cache where Node has one, and for `cc-tools mcp` on stdio it
 * answers the client's opening (initialize, tools/list) before the rest loads.
 */
import { enableCompileCache } from "./compile-cache.js";
import { closeUntakenStdio, startEarlyOpening } from "./early-opening.js";

enableCompileCache();
await startEarlyOpening(process.argv);
await import("./program.js");
await closeUntakenStdio();
