import { log } from "./log.js";

/**
 * Keeps a long-lived host (the MCP server) serving when one call's code throws where nothing catches it:
 * an error in a stream callback or a promise nobody awaited. The executor already turns errors inside a
 * call into that call's error result; this is the net under it, so one bad call never takes down every
 * session in the process. The error is logged with its stack, so it is seen and fixed, not hidden.
 */
let installed = false;

export function installCrashGuard(host: string): void {
  if (installed) return;
  installed = true;
  process.on("uncaughtException", (error, origin) => {
    log.error(
      `${host}: uncaught ${origin === "unhandledRejection" ? "rejection" : "exception"}; still serving`,
      error,
    );
  });
  process.on("unhandledRejection", (reason) => {
    log.error(
      `${host}: unhandled promise rejection; still serving`,
      reason instanceof Error ? reason : String(reason),
    );
  });
}
