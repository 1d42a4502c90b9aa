/**
 * What the permission engine knows about programs that run other programs: wrappers (`sudo`, `timeout`,
 * `env`), shells and their `-c` scripts, `find -exec`, `source`, and the variables that make a later
 * shell run code. Deny and ask rules look through all of them (see restrictiveView).
 */
import type { Shell } from "./rules.js";
import { commandText, type SimpleCommand, splitBash } from "./shell-split.js";

/**
 * Environment assignments that cannot change which program runs or what it loads, so `NODE_ENV=test npm
 * test` is covered by `Bash(npm test:*)`. Any other assignment (PATH, LD_PRELOAD, NODE_OPTIONS, …) stays
 * part of the command an allow rule must match: `Bash(FOO=1 npm test:*)`.
 */
export const SAFE_ENV_VARS = new Set([
  "CI",
  "DEBUG",
  "FORCE_COLOR",
  "GOARCH",
  "GOOS",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "NO_COLOR",
  "NODE_ENV",
  "PYTHONDONTWRITEBYTECODE",
  "PYTHONUNBUFFERED",
  "RUST_BACKTRACE",
  "RUST_LOG",
  "TERM",
  "TZ",
]);

/**
 * Programs that run the command in their arguments. Deny and ask rules also look through them, so
 * `Bash(rm:*)` denies `sudo rm x` and `timeout 5 rm x`. (Allow rules need not: the wrapper itself
 * must be allowed, and `Bash(timeout:*)` is the user's explicit choice.)
 */
const WRAPPERS = new Set([
  "builtin",
  "busybox",
  "chroot",
  "chrt",
  "command",
  "doas",
  "env",
  "exec",
  "flock",
  "ionice",
  "ltrace",
  "nice",
  "nohup",
  "nsenter",
  "setsid",
  "stdbuf",
  "strace",
  "sudo",
  "taskset",
  "time",
  "timeout",
  "unshare",
  "watch",
  "xargs",
]);
/** Words a wrapper takes before the wrapped command: options, assignments, durations, niceness values. */
const WRAPPER_ARGUMENT = /^(-.*|[A-Za-z_][A-Za-z0-9_]*=.*|\d+(\.\d+)?[smhd]?)$/;
/** Shells whose `-c` argument is a command line of its own: deny and ask rules look into it. */
const SHELLS = new Set(["ash", "bash", "dash", "ksh", "mksh", "sh", "zsh"]);
/** Other programs whose `-c` argument is a shell command line: `su -c`, `script -c`, `flock -c`. */
const SCRIPT_RUNNERS = new Set(["su", "script", "flock"]);
/** A shell option cluster holding `-c` (`-c`, `-lc`, `-ec`). */
const SHELL_COMMAND_FLAG = /^-[A-Za-z]*c[A-Za-z]*$/;
/** Shell options that take the next word as their argument. */
const SHELL_OPTION_WITH_ARGUMENT = /^[-+][oO]$/;
/** find actions whose following words, up to `;` or `+`, are a command find runs. */
const FIND_ACTIONS = new Set(["-exec", "-execdir", "-ok", "-okdir"]);
/** Wrappers that take one operand before the command: `flock LOCKFILE cmd`, `chroot DIR cmd`, `taskset MASK cmd`. */
const WRAPPERS_WITH_OPERAND = new Set(["chroot", "flock", "taskset"]);
/** Variables that make a shell started later run code from them: `BASH_ENV=<(…) bash -c true`. */
const SHELL_CODE_VARIABLE = /^'?(BASH_ENV|ENV|BASH_FUNC_[^=]*|SHELLOPTS|BASHOPTS|PROMPT_COMMAND)=/;
/** Builtins that run a file's lines as commands of this shell. */
const SOURCE_COMMANDS = new Set([".", "source"]);
/** Builtins whose commands only exist at run time (the splitter refuses them as command names). */
const HIDDEN_RUNNERS = new Set(["eval", "trap", "alias"]);
/**
 * Script files whose text is not on disk for anyone to review: a pipe (`<(…)`), standard input or another
 * descriptor. `bash <(echo rm x)` and `. /dev/stdin <<< "rm x"` are commands fed in, not programs.
 */
const STREAM_FILE = /^\/(dev\/(stdin|fd\/)|proc\/)/;
/** A word bash turns into other words: an unquoted glob or a brace expansion (`{rm,x}`; `{}` stays). */
const EXPANDING_WORD = /[*?[]|\{[^}]*(,|\.\.)[^}]*\}/;
/** How deep `sh -c 'sh -c …'` is followed before the inner command counts as unknown. */
const MAX_SHELL_DEPTH = 4;
/** Commands that change the directory later relative paths in the same command line resolve against. */
export const DIRECTORY_CHANGERS = new Set(["cd", "pushd", "popd"]);

/**
 * Where the words after `from` may stop being options: after each option, and after each option's
 * possible argument (`sudo -u root rm`, `git -C dir push`, `timeout -s KILL 5 rm`). Over-generous on
 * purpose: deny and ask rules would rather see a spelling that is not the command than miss one that is.
 */
function optionEnds(words: readonly string[], from: number): number[] {
  const ends = new Set([from]);
  for (let p = from; p < words.length; p++) {
    const word = words[p]!;
    if (!ends.has(p) || !WRAPPER_ARGUMENT.test(word)) continue;
    ends.add(p + 1);
    if (word.startsWith("-") && !word.includes("=") && p + 2 <= words.length) ends.add(p + 2);
  }
  return [...ends];
}

/**
 * What a shell invocation runs: the script of `sh -c 'script'` (its text; undefined when only known at run
 * time), "file" for `sh script.sh` (a program, like any other), or "stdin" when it reads its commands from
 * standard input (`bash <<< "rm x"`, `… | sh`), which the command line does not show.
 */
function shellScript(command: SimpleCommand, start: number): string | undefined | "file" | "stdin" {
  const { words, literals } = command;
  let hasFlag = false;
  let readsStdin = false;
  let p = start + 1;
  for (; p < words.length && /^[-+]/.test(words[p]!); p++) {
    if (words[p] === "--") {
      p++;
      break;
    }
    if (words[p] === "-s" || words[p] === "-") readsStdin = true;
    if (SHELL_COMMAND_FLAG.test(words[p]!)) hasFlag = true;
    if (SHELL_OPTION_WITH_ARGUMENT.test(words[p]!)) p++;
  }
  if (hasFlag) return p < words.length ? literals[p] : "stdin";
  return readsStdin || p >= words.length || isStream(literals[p]) ? "stdin" : "file";
}

/** A script argument that is a stream rather than a file (or only known at run time). */
function isStream(script: string | undefined): boolean {
  return script === undefined || STREAM_FILE.test(script);
}

/** `env -S 'cmd args'` / `--split-string`: env splits that string into the command it runs. */
function envSplitString(command: SimpleCommand, start: number): string | undefined | null {
  const { words, literals } = command;
  for (let p = start + 1; p < words.length; p++) {
    const word = words[p]!;
    if (word === "-S" || word === "--split-string") return literals[p + 1];
    if (word.startsWith("--split-string=")) return literals[p]?.slice("--split-string=".length);
    if (word.startsWith("-S") && word.length > 2) return literals[p]?.slice(2);
    if (!word.startsWith("-") && !word.includes("=")) break;
  }
  return null;
}

/** What deny and ask rules see of one simple command. */
export interface RestrictiveView {
  /** Spellings of every command it runs: without assignments, through wrappers, without leading options. */
  texts: Set<string>;
  writes: string[];
  reads: string[];
  /** Why part of what it runs cannot be seen (`eval` after a wrapper, `sh -c "$x"`), if so. */
  hidden?: string;
}

export function restrictiveView(
  command: SimpleCommand,
  shell: Shell,
  view: RestrictiveView,
  depth = 0,
): void {
  view.texts.add(commandText(command));
  view.texts.add(commandText(command, () => false));
  view.writes.push(...command.writes);
  view.reads.push(...command.reads);
  const { words } = command;
  const code = [...command.assignments.map((a) => a.text), ...words].find((w) => SHELL_CODE_VARIABLE.test(w));
  if (code)
    view.hidden ??= `${code.split("=")[0]} makes a shell started later run code the line does not show`;
  const seen = new Set<number>();
  const visit = (start: number) => {
    if (start >= words.length || seen.has(start)) return;
    seen.add(start);
    // A wrapped program whose name is built at run time (`command $X`, `env {rm,x}`) cannot be matched.
    if (start > 0 && (command.literals[start] === undefined || EXPANDING_WORD.test(words[start]!)))
      view.hidden ??= `the program ${words[start]} that \`${words[0]}\` runs is only known at run time`;
    const name = words[start]!.slice(words[start]!.lastIndexOf("/") + 1);
    const ends = optionEnds(words, start + 1);
    for (const end of ends) {
      view.texts.add([words[start], ...words.slice(end)].join(" "));
      view.texts.add([name, ...words.slice(end)].join(" "));
    }
    if (WRAPPERS.has(name)) for (const end of ends) visit(end);
    if (WRAPPERS_WITH_OPERAND.has(name)) for (const end of ends) visit(end + 1);
    if (HIDDEN_RUNNERS.has(name)) view.hidden ??= `\`${name}\` runs a command built at run time`;
    if (SOURCE_COMMANDS.has(name) && isStream(command.literals[start + 1]))
      view.hidden ??= `\`${name}\` runs commands read from a stream, which the command line does not show`;
    if (name === "find") {
      for (let p = start + 1; p < words.length; p++) if (FIND_ACTIONS.has(words[p]!)) visit(p + 1);
    }
    if (SHELLS.has(name) || SCRIPT_RUNNERS.has(name)) {
      const script = shellScript(command, start);
      if (script === "stdin") {
        if (SHELLS.has(name))
          view.hidden ??= `\`${name}\` reads the commands it runs from standard input or a stream`;
      } else if (script !== "file") inspectScript(script, shell, view, depth);
    }
    if (name === "env") {
      const split = envSplitString(command, start);
      if (split !== null) inspectScript(split, shell, view, depth);
    }
  };
  visit(0);
}

function inspectScript(script: string | undefined, shell: Shell, view: RestrictiveView, depth: number): void {
  const split = script !== undefined && depth < MAX_SHELL_DEPTH ? splitBash(script) : undefined;
  if (!split?.ok) {
    view.hidden ??= `a shell's -c script ${split ? `cannot be split (${split.reason})` : "is only known at run time"}`;
    return;
  }
  for (const inner of split.commands) restrictiveView(inner, shell, view, depth + 1);
}

export function allowText(command: SimpleCommand): string {
  return commandText(command, (name) => !SAFE_ENV_VARS.has(name));
}
