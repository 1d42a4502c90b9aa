/**
 * What the permission engine knows about programs that run other programs: wrappers (`sudo`, `timeout`,
 * `env`), shells and their `-c` scripts, `find -exec`, `source`, and the variables that make a later
 * shell run code. Deny and ask rules look through all of them (see restrictiveView).
 */
import { readdirSync } from "node:fs";
import { resolve } from "node:path";
import picomatch from "picomatch";
import type { Shell } from "./rules.js";
import { commandText, type SimpleCommand, setsOnlyShellVariables, splitBash } from "./shell-split.js";

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
  "prlimit",
  "runuser",
  "setarch",
  "setpriv",
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
/**
 * Other programs whose `-c` (or `--command`) argument is a shell command line, wherever it stands among
 * their arguments: `su root -c …`, `script -q -c … log`, `flock F -c …`, `runuser -u u -c …`.
 */
const SCRIPT_RUNNERS = new Set(["flock", "runuser", "script", "su"]);
/** A runner's option that takes the command line: `-c` (also in a cluster: `-qc`), `--command`, `--command=…`. */
const RUNNER_COMMAND_OPTION = /^(-[A-Za-z]*c[A-Za-z]*|--command)(=|$)/;
/** The same for a program not known to be a runner: only the plain spellings. */
const PLAIN_COMMAND_OPTION = /^(-c|--command)(=|$)/;
/**
 * An argument that reads as a command line (blanks or shell operators): after `-c` it makes an unknown
 * program a likely runner of it (`mytool -c 'rm x'`), whose commands the line does not show.
 */
const COMMAND_LINE_TEXT = /[\s;&|`$()<>]/;
/** A shell option cluster holding `-c` (`-c`, `-lc`, `-ec`). */
const SHELL_COMMAND_FLAG = /^-[A-Za-z]*c[A-Za-z]*$/;
/** Shell options that take the next word as their argument (`bash --rcfile X -c …`). */
const SHELL_OPTION_WITH_ARGUMENT = /^([-+][oO]|--rcfile|--init-file)$/;
/** find actions whose following words, up to `;` or `+`, are a command find runs. */
const FIND_ACTIONS = new Set(["-exec", "-execdir", "-ok", "-okdir"]);
/**
 * Wrappers that take one operand before the command: `flock LOCKFILE cmd`, `chroot DIR cmd`,
 * `taskset MASK cmd`, `setarch ARCH cmd`, `runuser USER cmd`.
 */
const WRAPPERS_WITH_OPERAND = new Set(["chroot", "flock", "runuser", "setarch", "taskset"]);
/**
 * Variables that make a program started later run code from them: `BASH_ENV=<(…) bash -c true`,
 * `GIT_SSH_COMMAND=… git fetch`, git configuration passed through the environment.
 */
const SHELL_CODE_VARIABLE =
  /^'?(BASH_ENV|ENV|BASH_FUNC_[^=]*|SHELLOPTS|BASHOPTS|PROMPT_COMMAND|GIT_(CONFIG[A-Z_]*|SSH|SSH_COMMAND|EXTERNAL_DIFF|PAGER|EDITOR|SEQUENCE_EDITOR|ASKPASS|EXEC_PATH|DIR|WORK_TREE|PROXY_COMMAND|TEMPLATE_DIR))=/;
/**
 * git configuration keys that name programs git runs, or that change what git runs (`alias.*`, which a
 * `!` turns into a shell command; `core.fsmonitor`, `core.pager`, `core.sshCommand`, hooks, filters…).
 * `git -c` with one of them hides a command from deny rules.
 */
const GIT_CODE_CONFIG =
  /^(alias|core|include|includeif|filter|diff|merge|credential|gpg|sequence|uploadpack|receive|protocol|remote|url|http|submodule|pager|interactive|instaweb|web|man|difftool|mergetool|gui|ssh|sendemail|uploadarchive|fetch|transfer)\./i;
/** Builtins that run a file's lines as commands of this shell. */
const SOURCE_COMMANDS = new Set([".", "source"]);
/**
 * Programs that read the files named in their arguments: Read deny and ask rules apply to those
 * arguments as they do to `<` redirections (`cat .env` is denied under `Read(.env)`).
 */
const FILE_READERS = new Set([
  ".",
  "awk",
  "base64",
  "bat",
  "bzcat",
  "cat",
  "cmp",
  "comm",
  "cp",
  "cut",
  "dd",
  "diff",
  "egrep",
  "expand",
  "fgrep",
  "file",
  "fold",
  "gawk",
  "grep",
  "gunzip",
  "gzip",
  "head",
  "hexdump",
  "iconv",
  "jq",
  "join",
  "less",
  "more",
  "nl",
  "od",
  "paste",
  "rg",
  "rsync",
  "scp",
  "sed",
  "sha1sum",
  "sha256sum",
  "md5sum",
  "sort",
  "source",
  "strings",
  "tac",
  "tail",
  "tar",
  "tee",
  "tr",
  "uniq",
  "view",
  "vim",
  "wc",
  "xxd",
  "yq",
  "zcat",
  "zip",
]);
/** Readers that read whole directories given to them, whatever their options. */
const TREE_READERS = new Set(["rg", "rsync", "tar", "zip"]);
/** Readers whose first operand is a pattern or program, not a file, unless an option gives it (`grep -e`). */
const PATTERN_FIRST = new Set(["awk", "egrep", "fgrep", "gawk", "grep", "jq", "rg", "sed", "yq"]);
/** Options of those readers that give the pattern or program (their argument is not a file). */
const PATTERN_OPTION = /^(-e|--regexp|--expression|-[A-Za-z]*e)$/;
/** Options of those readers that name a file of patterns or a program file (their argument is read). */
const PATTERN_FILE_OPTION = /^(-f|--file|--from-file)$/;
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
 * Programs that create, move or replace paths: with one of them in a command line, a redirection in the
 * same line may go through a link or directory that did not exist (or was elsewhere) when it was checked.
 */
export const PATH_CHANGERS = new Set([
  "cp",
  "install",
  "ln",
  "mkdir",
  "mktemp",
  "mv",
  "rm",
  "rmdir",
  "rsync",
  "tar",
  "unzip",
]);
/** Most files a reader's glob argument is expanded to for the check; beyond that it asks. */
const MAX_GLOB_MATCHES = 256;

/**
 * A path as the shell sees it: `/proc/self/cwd/…` is the shell's directory (not ours), `/proc/self/root`
 * is `/`; a path through a descriptor (`/dev/fd/3/x`) or another process's directory leads somewhere
 * this check cannot know (`unknown` says why).
 */
export function shellPath(target: string, cwd: string): { path: string; unknown?: string } {
  const own = /^\/proc\/(self|thread-self)\/(cwd|root)(\/.*)?$/.exec(target);
  if (own) return { path: `${own[2] === "cwd" ? cwd : "/"}${own[3] ?? ""}` };
  if (/^\/(dev\/fd\/[^/]+|proc\/[^/]+\/(fd\/[^/]+|cwd|root|map_files\/[^/]+))\/./.test(target)) {
    return { path: target, unknown: `${target} goes through a descriptor or another process's directory` };
  }
  if (/^\/proc\/(?!self\/|thread-self\/)[^/]+\/(cwd|root)$/.test(target)) {
    return { path: target, unknown: `${target} is another process's directory` };
  }
  return { path: target };
}

/**
 * The files a reader's glob argument names, as bash would expand it (hidden files included, to be safe);
 * undefined when the pattern is not one this check expands (a glob in a directory part, braces) or
 * matches too many files. No match leaves the word itself, as bash does.
 */
export function expandGlob(glob: string, cwd: string): string[] | undefined {
  const slash = glob.lastIndexOf("/");
  const dir = slash < 0 ? "." : glob.slice(0, slash) || "/";
  const name = glob.slice(slash + 1);
  if (/[*?[{]/.test(dir) || name.includes("{")) return undefined;
  let entries: string[];
  try {
    entries = readdirSync(resolve(cwd, dir));
  } catch {
    return [glob];
  }
  const matches = picomatch(name, { dot: true });
  const found = entries
    .filter((entry) => matches(entry))
    .map((entry) => (slash < 0 ? entry : `${dir}/${entry}`));
  if (found.length > MAX_GLOB_MATCHES) return undefined;
  return found.length > 0 ? found : [glob];
}

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
  const name = words[start]!.slice(words[start]!.lastIndexOf("/") + 1);
  if (SCRIPT_RUNNERS.has(name)) {
    // A runner's -c may come after its operands (`su root -c …`, `flock F -c …`).
    for (let p = start + 1; p < words.length; p++) {
      const option = RUNNER_COMMAND_OPTION.exec(words[p]!);
      if (!option) continue;
      return option[2] === "=" ? literals[p]?.slice(literals[p]!.indexOf("=") + 1) : literals[p + 1];
    }
    return "file";
  }
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
  /** Files it reads: `<` targets and the file arguments of readers (cat, grep, sed, cp, source, …). */
  reads: string[];
  /** Reader arguments that are globs (`cat *.env`): the files they expand to are read. */
  globReads: string[];
  /** Reader arguments only known at run time (`cat "$F"`), as written. */
  unknownReads: string[];
  /** Reads of recursive readers (`grep -r`, `rg`, `cp -r`, `tar`): a directory among them is read whole. */
  treeReads: string[];
  /** Names of every program it runs, through wrappers and -c scripts. */
  programs: Set<string>;
  /** Why part of what it runs cannot be seen (`eval` after a wrapper, `sh -c "$x"`), if so. */
  hidden?: string;
}

/** An empty view, to be filled by restrictiveView. */
export function emptyView(): RestrictiveView {
  return {
    texts: new Set(),
    writes: [],
    reads: [],
    globReads: [],
    unknownReads: [],
    treeReads: [],
    programs: new Set(),
  };
}

/** The file operands of a reader at `start`: every argument that is not an option or a pattern. */
function readerOperands(command: SimpleCommand, start: number, name: string, view: RestrictiveView): void {
  const { words, literals } = command;
  let patternPending = PATTERN_FIRST.has(name);
  if (
    patternPending &&
    words.slice(start + 1).some((w) => PATTERN_OPTION.test(w) || PATTERN_FILE_OPTION.test(w))
  )
    patternPending = false;
  const add = (p: number) => readerOperandAt(command, p, view);
  let options = true;
  const before = view.reads.length + view.globReads.length + view.unknownReads.length;
  for (let p = start + 1; p < words.length; p++) {
    const word = words[p]!;
    if (options && word === "--") {
      options = false;
      continue;
    }
    if (options && word.startsWith("-") && word !== "-") {
      if (PATTERN_FILE_OPTION.test(word) && p + 1 < words.length) add(++p);
      else if (PATTERN_OPTION.test(word)) p++;
      // `if=FILE` style and `--file=FILE` options name files too.
      else if (/^--[a-z-]*file=/.test(word) && literals[p] !== undefined)
        view.reads.push(literals[p]!.split("=")[1]!);
      continue;
    }
    if (patternPending) {
      patternPending = false;
      continue;
    }
    if (/^if=/.test(literals[p] ?? "")) view.reads.push(literals[p]!.slice(3));
    add(p);
  }
  const recursive =
    TREE_READERS.has(name) ||
    words.slice(start + 1).some((w) => /^(-[A-Za-z]*[rRa][A-Za-z]*|--recursive|--archive)$/.test(w));
  if (!recursive) return;
  // `rg x` and `grep -r x` with no file search the working directory.
  if (view.reads.length + view.globReads.length + view.unknownReads.length === before) view.reads.push(".");
  view.treeReads.push(...view.reads.slice(before));
}

/**
 * `git -c key=value`: keys that make git run a program hide it, except a `!` alias, whose shell command
 * is inspected like `sh -c`. `git diff --no-index A B` reads its operands.
 */
function gitOptions(
  command: SimpleCommand,
  start: number,
  shell: Shell,
  view: RestrictiveView,
  depth: number,
) {
  const { words, literals } = command;
  for (let p = start + 1; p < words.length; p++) {
    const word = words[p]!;
    if (word === "-c" || word === "--config-env" || word.startsWith("-c")) {
      const setting = word === "-c" || word === "--config-env" ? literals[++p] : literals[p]!.slice(2);
      if (setting === undefined) {
        view.hidden ??= "`git -c` sets configuration only known at run time";
        continue;
      }
      const [key = "", ...rest] = setting.split("=");
      const value = rest.join("=");
      if (/^alias\./i.test(key) && value.startsWith("!")) inspectScript(value.slice(1), shell, view, depth);
      else if (GIT_CODE_CONFIG.test(key) || word === "--config-env")
        view.hidden ??= `\`git -c ${key}\` changes which programs git runs`;
      continue;
    }
    if (word === "-C" || word === "--git-dir" || word === "--work-tree" || word === "--namespace") p++;
    else if (!word.startsWith("-")) {
      if (word === "diff" && words.includes("--no-index")) {
        for (let q = p + 1; q < words.length; q++) {
          if (!words[q]!.startsWith("-")) readerOperandAt(command, q, view);
        }
      }
      return;
    }
  }
}

/** A reader's operand as a file read: literal, a glob to expand, or only known at run time. */
function readerOperandAt(command: SimpleCommand, p: number, view: RestrictiveView): void {
  const literal = command.literals[p];
  const word = command.words[p]!;
  if (literal === undefined) view.unknownReads.push(word);
  else if (EXPANDING_WORD.test(word)) view.globReads.push(literal);
  // A quoted `~` is a directory named "~", not home.
  else view.reads.push(literal.startsWith("~") && !word.startsWith("~") ? `./${literal}` : literal);
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
    view.hidden ??= `${code.split("=")[0]} makes a program started later run code the line does not show`;
  const seen = new Set<number>();
  // `fed`: the program gets more arguments at run time (`xargs cat`, `find … -exec cat {} ;`).
  const visit = (start: number, fed = false) => {
    if (start >= words.length || seen.has(start)) return;
    seen.add(start);
    // A wrapped program whose name is built at run time (`command $X`, `env {rm,x}`) cannot be matched.
    if (start > 0 && (command.literals[start] === undefined || EXPANDING_WORD.test(words[start]!)))
      view.hidden ??= `the program ${words[start]} that \`${words[0]}\` runs is only known at run time`;
    const name = words[start]!.slice(words[start]!.lastIndexOf("/") + 1);
    view.programs.add(name);
    const ends = optionEnds(words, start + 1);
    for (const end of ends) {
      view.texts.add([words[start], ...words.slice(end)].join(" "));
      view.texts.add([name, ...words.slice(end)].join(" "));
    }
    if (WRAPPERS.has(name)) for (const end of ends) visit(end, fed || name === "xargs");
    if (WRAPPERS_WITH_OPERAND.has(name)) for (const end of ends) visit(end + 1, fed);
    if (HIDDEN_RUNNERS.has(name)) view.hidden ??= `\`${name}\` runs a command built at run time`;
    if (SOURCE_COMMANDS.has(name) && isStream(command.literals[start + 1]))
      view.hidden ??= `\`${name}\` runs commands read from a stream, which the command line does not show`;
    if (name === "find") {
      for (let p = start + 1; p < words.length; p++) if (FIND_ACTIONS.has(words[p]!)) visit(p + 1, true);
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
    if (FILE_READERS.has(name)) {
      readerOperands(command, start, name, view);
      if (fed) view.unknownReads.push(`the files \`${words[0]}\` hands to ${name}`);
    }
    if (name === "git") gitOptions(command, start, shell, view, depth);
    if (!SHELLS.has(name) && !SCRIPT_RUNNERS.has(name) && !WRAPPERS.has(name) && name !== "git") {
      // An unknown program given a command line after -c probably runs it: its commands are not seen.
      // (Readers are not: for `head -c 10`, `cut -c 1-3`, -c is a count.)
      const at = words.findIndex((w, p) => p > start && PLAIN_COMMAND_OPTION.test(w));
      if (at >= 0 && !FILE_READERS.has(name)) {
        const inline = words[at]!.includes("=");
        const raw = inline ? words[at] : words[at + 1];
        const literal = inline ? command.literals[at]?.replace(/^[^=]*=/, "") : command.literals[at + 1];
        if (raw !== undefined && (literal === undefined || COMMAND_LINE_TEXT.test(literal)))
          view.hidden ??= `\`${name} -c\` may run its argument as a command line, which this check cannot see into`;
      }
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
  if (setsOnlyShellVariables(command)) return "";
  return commandText(command, (name) => !SAFE_ENV_VARS.has(name));
}
