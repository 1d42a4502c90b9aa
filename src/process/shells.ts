import { accessSync, constants, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { sandboxCouldWrite } from "../sandbox/host-programs.js";
import type { InitDuties } from "../sandbox/launch.js";

/**
 * What differs between the shells we run: where the executable is, and how a command is wrapped so its
 * stderr joins stdout in order and its final working directory is written to a file. Everything else
 * (process groups, output, timeouts, cwd policy) is shared.
 */
export interface ShellAdapter {
  /** Matches PermissionSubject's `shell`. */
  readonly kind: "bash" | "powershell";
  /** The tool's name, for messages. */
  readonly toolName: string;
  readonly executable: string;
  /** What to tell the user when the executable is missing. */
  readonly missingHint: string;
  /** Extension of a script file the shell runs (a command too long for one argument goes in one). */
  readonly scriptExtension: string;
  /** A command that runs the script at `path` in the shell itself, as if its text had been given. */
  sourceCommand(path: string): string;
  /** The argv running `command`; with `cwdFile`, the shell writes its final directory there on exit. */
  invocation(
    executablePath: string,
    command: string,
    cwdFile: string | undefined,
  ): { file: string; args: string[] };
  /**
   * `invocation`, with the shell itself doing the duties of the sandbox's PID-namespace init: `setup`
   * before the command, `atExit` when it exits. Only for a shell that reaps orphans while it runs.
   */
  invocationAsInit?(
    executablePath: string,
    command: string,
    cwdFile: string | undefined,
    duties: InitDuties,
  ): { file: string; args: string[] };
}

/**
 * The descriptor on which a command's shell in the sandbox waits for the host's go-ahead before it runs
 * anything (sandbox/launch.ts's gate); a spawn and a waiting shell's exec both give it a pipe there.
 */
export const GO_AHEAD_FD = 3;

/** What the host writes on GO_AHEAD_FD to let the command run. */
export const GO_AHEAD = "g";

/** POSIX single-quoting: safe for any path. */
export function shQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * `text` as one bash word on one line of the script (so that bash counts the lines of an `eval` of it from
 * 1): single-quoted lines joined by `$'\n'`. No backslash follows a byte of the text, where a locale such
 * as GBK or Big5 would read the two as one character.
 */
export function oneLineQuote(text: string): string {
  return text.split("\n").map(shQuote).join("$'\\n'");
}

function psQuote(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * What bash is given with `-c`: the command's script comes as `$1` (after `$0`, the shell's own path) and
 * runs through `eval`, as a waiting shell runs the script it reads (prestart.ts), so the two run it at the
 * same depth (`set -x` shows as many `+`) under the same outermost command (`$BASH_COMMAND` in an EXIT trap).
 */
export const BASH_RUNS_SCRIPT = 'eval "$1"';

/**
 * How every bash command script begins: no positional parameters (the script was `$1`), and stderr joins
 * stdout. `exec` also sets `$_`, so the command finds the same `$_` in a spawned shell and a waiting one.
 */
export const BASH_SCRIPT_START = "set --; exec 2>&1; ";

function bashInvocation(
  executablePath: string,
  command: string,
  cwdFile: string | undefined,
  duties?: InitDuties,
): { file: string; args: string[] } {
  // The command runs through `eval`, as in Claude Code: its syntax errors read `bash: eval: line N:`, with
  // the command's own line numbers, and come after the prefix has run (stderr joined, directory recorded).
  // It also lets a waiting shell run the very same script in itself instead of exec'ing a second bash.
  // An EXIT trap records the directory even when the command calls `exit`, and keeps its exit status.
  const record = cwdFile ? `pwd -P 2>/dev/null >| ${shQuote(cwdFile)}` : undefined;
  const atExit = [duties?.atExit, record].filter((part) => part !== undefined).join("; ");
  const trap = atExit ? `trap ${shQuote(atExit)} EXIT; ` : "";
  const setup = duties ? `${duties.setup}; ` : "";
  const script = `${BASH_SCRIPT_START}${setup}${trap}eval ${oneLineQuote(command)}`;
  return { file: executablePath, args: ["-c", BASH_RUNS_SCRIPT, executablePath, script] };
}

export const bashAdapter: ShellAdapter = {
  kind: "bash",
  toolName: "Bash",
  executable: "bash",
  missingHint: "bash was not found on PATH; install bash or add its directory to PATH.",
  scriptExtension: ".sh",
  sourceCommand: (path) => `. ${shQuote(path)}`,
  invocation: (executablePath, command, cwdFile) => bashInvocation(executablePath, command, cwdFile),
  invocationAsInit: bashInvocation,
};

/** Holds the success of the command's last statement; named so no command would use it. */
const PS_STATUS_VAR = "__ccToolsLastOk";

export const powershellAdapter: ShellAdapter = {
  kind: "powershell",
  toolName: "PowerShell",
  executable: "pwsh",
  missingHint:
    "PowerShell (pwsh) is not installed or not on PATH. Install PowerShell 7 (https://aka.ms/powershell) or use the Bash tool.",
  scriptExtension: ".ps1",
  sourceCommand: (path) => `. ${psQuote(path)}`,
  invocation(executablePath, command, cwdFile) {
    // pwsh's exit code follows the status of the script's last statement, which would be our wrapper's, so
    // a failing cmdlet ended with 0. The command's own last status is kept and decides, as in bash: a failing
    // native command gives its exit code, a failing cmdlet 1. `finally` records the directory even on exit.
    const recordDir = cwdFile
      ? `Set-Content -LiteralPath ${psQuote(cwdFile)} -NoNewline -Value (Get-Location).ProviderPath`
      : "";
    const script =
      `try {\n${command}\n$${PS_STATUS_VAR} = $?\n} finally { ${recordDir} }\n` +
      `if (-not $${PS_STATUS_VAR}) { if ($LASTEXITCODE) { exit $LASTEXITCODE }; exit 1 }`;
    // pwsh cannot merge its own error stream into stdout at the descriptor level; sh does, then execs it.
    return {
      file: "/bin/sh",
      args: ["-c", 'exec "$0" -NoProfile -NonInteractive -Command "$1" 2>&1', executablePath, script],
    };
  },
};

const located = new Map<string, string | undefined>();

/** The executable's path on PATH, or undefined; cached per PATH so each call costs no file-system walk. */
export function locateExecutable(name: string, path = process.env.PATH ?? ""): string | undefined {
  const key = `${name}\0${path}`;
  if (located.has(key)) return located.get(key);
  const found = path
    .split(delimiter)
    .map((dir) => dir && join(dir, name))
    .find((candidate) => candidate && isExecutable(candidate));
  located.set(key, found);
  return found;
}

/** What hostProgram found, per program and PATH. */
const hostPrograms = new Map<string, string>();

/**
 * Where `name` is found on `pathEnv` outside the places a sandboxed command can write (see
 * sandbox/host-programs.ts), for a program this process runs outside the sandbox; else undefined.
 */
export function hostProgram(name: string, pathEnv: string = process.env.PATH ?? ""): string | undefined {
  const key = `${name}\0${pathEnv}`;
  // Only the user can put a program into a directory no sandbox may write, so the program found last is
  // still the first on PATH while it is there and still out of every sandbox's reach (both checked again
  // now). Like locateExecutable's cache, a program (or link) put earlier on PATH meanwhile is not seen.
  const last = hostPrograms.get(key);
  if (
    last !== undefined &&
    isExecutable(last) &&
    !sandboxCouldWrite(dirname(last)) &&
    !sandboxCouldWrite(last)
  )
    return last;
  hostPrograms.delete(key);
  // locateExecutable on hostSearchPath(pathEnv), without resolving every directory of PATH through
  // symlinks: only a directory that has the program is asked whether a sandboxed command could have
  // written it (and skipped if so), as hostSearchPath would have dropped it.
  for (const dir of pathEnv.split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (!isExecutable(candidate) || sandboxCouldWrite(dir)) continue;
    // A link from outside into such a place (npm link) leads there all the same.
    if (sandboxCouldWrite(candidate)) return undefined;
    hostPrograms.set(key, candidate);
    return candidate;
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  // Most directories of PATH do not have the program: a stat that does not throw for them is several
  // times cheaper than an access() that does (Node builds an error with its stack for each).
  try {
    if (!statSync(path, { throwIfNoEntry: false })) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why a tool cannot work on this machine, or undefined when it can: a shell tool needs its shell on PATH.
 * Hosts leave such a tool out of what they offer (a model would only learn it by failing), and say why.
 */
export function toolUnavailable(toolName: string, path = process.env.PATH ?? ""): string | undefined {
  const adapter = [bashAdapter, powershellAdapter].find((a) => a.toolName === toolName);
  // As shell-run.ts looks it up: outside the places a sandboxed command writes (sandbox/host-programs.ts).
  return adapter && !hostProgram(adapter.executable, path) ? adapter.missingHint : undefined;
}
