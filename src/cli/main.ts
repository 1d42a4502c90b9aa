#!/usr/bin/env node
/**
 * The `cc-tools` entry. It does as little as possible before handing over to the command line
 * (program.ts): it turns on Node's compile cache where Node has one, for `cc-tools mcp` on stdio it
 * answers the client's opening (initialize, tools/list) before the rest loads, and for `cc-tools mcp` it
 * holds off V8's optimizing compilers while the server loads (src/process/compilers.ts).
 *
 * The build makes this file a CommonJS bundle of its own (scripts/postbuild.mjs): Node starts a CommonJS
 * entry sooner than an ES module (no ES module loader to set up, one file instead of a graph of chunks),
 * which on a slow machine is 15 to 20 ms of a client's wait for the tool list. The command line is ESM
 * and loads once the opening is answered. So no top-level await here.
 */
import "./hold-compilers.js";
import { enableCompileCache } from "./compile-cache.js";
import { closeUntakenStdio, startEarlyOpening } from "./early-opening.js";

async function main(): Promise<void> {
  enableCompileCache();
  // Started first: it has set up stdin when this returns, and answers the opening while we go on. (The
  // MCP server loads with V8's optimizing compilers held off since the first import; its first call resumes them.)
  const opening = startEarlyOpening(process.argv);
  await opening;
  await import("./program.js");
  await closeUntakenStdio();
}

main().catch(async (error: unknown) => {
  process.exitCode = 1;
  console.error(error);
  // A client may hold the connection that answered its opening: close it, or the process would wait on
  // stdin for good and the client's next request would never be answered.
  await closeUntakenStdio().catch(() => undefined);
});
