/**
 * Finding and running the ripgrep binary. Order: the binary shipped in `@vscode/ripgrep`, then `RG_PATH`,
 * then `rg` on PATH; `CC_TOOLS_RIPGREP=off` forces the built-in TypeScript search (tests run both ways).
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import type { Session } from "../core/session.js";
import { readInBatches } from "../process/batched-reads.js";
import { untrackGroup } from "../process/groups.js";
import { runInWaitingShell } from "../process/prestart.js";
import { hostProgram } from "../process/shells.js";
import { sandboxCouldWrite } from "../sandbox/host-programs.js";

/** Set to "off" to search without ripgrep even when a binary is available. */
export const RIPGREP_ENV = "CC_TOOLS_RIPGREP";

/** How much of rg's stderr is kept for error messages. */
const MAX_STDERR_CHARS = 4_000;

function executable(path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return undefined;
  }
}

async function bundledBinary(): Promise<string | undefined> {
  try {
    // Imported lazily: the package throws at import time when its platform binary is not installed.
    const { rgPath } = await import("@vscode/ripgrep");
    return executable(rgPath);
  } catch {
    return undefined;
  }
}

/** rg on PATH; it runs outside the sandbox, so never one a sandboxed command could have put there. */
const onPath = () => hostProgram(process.platform === "win32" ? "rg.exe" : "rg");

/** `path` unless a sandboxed command could have written it (a cc-tools installed inside the workspace). */
const outsideSandbox = (path: string | undefined) => (path && !sandboxCouldWrite(path) ? path : undefined);

// The binary's location does not change while the process runs; the env switch is read on every call.
let located: Promise<string | undefined> | undefined;

/** The ripgrep binary to use, or undefined when none is found or the env switch turns it off. */
export function findRipgrep(): Promise<string | undefined> {
  if (process.env[RIPGREP_ENV] === "off") return Promise.resolve(undefined);
  located ??= bundledBinary().then(
    (p) => outsideSandbox(p) ?? outsideSandbox(executable(process.env.RG_PATH)) ?? onPath(),
  );
  return located;
}

export interface RgRun {
  /** 0 = matches, 1 = none, 2 = error (possibly with partial output). */
  code: number;
  stderr: string;
  /** True when `stop()` or the signal ended rg before it finished. */
  stopped: boolean;
}

export interface RgOptions {
  cwd: string;
  signal: AbortSignal;
  /** Where rg may start in the session's waiting shell instead of a fork of this process. */
  session?: Session;
  /** Receives stdout as it arrives; call `stop` to end rg early (enough results collected). */
  onData(chunk: Buffer, stop: () => void): void;
}

/** Runs rg with stdin closed (so it never waits on, or searches, stdin); abort kills it. */
export function runRipgrep(binary: string, args: readonly string[], options: RgOptions): Promise<RgRun> {
  return new Promise((resolve, reject) => {
    // A plain copy: the claim reads the environment several times over, and every read of process.env
    // itself asks the C++ side for each variable again (0.52 ms a claim after a pause, 0.42 with the copy).
    const prestarted = runInWaitingShell(options.session, binary, args, options.cwd, { ...process.env });
    const child =
      prestarted?.child ?? spawn(binary, args, { cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] });
    const stdout = prestarted?.stdout ?? child.stdout!;
    const stderrStream = prestarted?.stderr ?? child.stderr!;
    let stopped = false;
    let stderr = "";
    const stop = () => {
      if (stopped) return;
      stopped = true;
      child.kill("SIGKILL");
    };
    const onAbort = () => stop();
    if (options.signal.aborted) stop();
    else options.signal.addEventListener("abort", onAbort, { once: true });
    stdout.on("data", (chunk: Buffer) => {
      if (!stopped) options.onData(chunk, stop);
    });
    // rg writes one piece per file (or path), each ending in a newline or a NUL, as batching needs.
    readInBatches(stdout, child);
    stderrStream.on("data", (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR_CHARS) stderr += chunk.toString("utf8");
    });
    child.on("error", (error) => {
      options.signal.removeEventListener("abort", onAbort);
      reject(error);
    });
    child.on("close", (code) => {
      options.signal.removeEventListener("abort", onAbort);
      // The waiting shell's group was tracked for host exit; rg, which it became, has ended.
      if (prestarted?.child.pid !== undefined) untrackGroup(prestarted.child.pid);
      resolve({ code: code ?? 2, stderr: stderr.slice(0, MAX_STDERR_CHARS).trim(), stopped });
    });
  });
}
