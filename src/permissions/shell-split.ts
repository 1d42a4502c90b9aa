/**
 * Splits a bash command line into the simple commands it would run, so that a permission rule has to
 * cover every one of them. Claude Code matched rules against the whole line, so `Bash(ls:*)` allowed
 * `ls | sh`; here `ls | sh` is two commands and `sh` needs its own rule.
 *
 * It fails closed: a line is split only when every byte of it is a construct modelled here, and any
 * other construct makes the split fail, so the caller asks. Modelled: operators and pipelines, quoting
 * and escapes, comments, command substitution (also inside double quotes, `${…}` and here-documents),
 * process substitution (anywhere in a word and in `${…}`), subshells, groups, `if`/`while`/`until`/`for`/`for ((…))`/`select`/`case`,
 * function definitions, `[[ … ]]`, `(( … ))`, `time`, `coproc`, `!`, array assignments, redirections
 * with the descriptors they change (see bash/descriptors.ts), and the builtins that evaluate variable
 * names or arithmetic (see bash/variables.ts). Not modelled, so refused: a command name built at run
 * time, `eval` and friends, unbalanced quotes, quoting or substitutions inside arithmetic, expansions in
 * a here-document delimiter, and whatever else is not listed. test/permissions/shell-split.fuzz.test.ts
 * runs generated lines through real bash and checks that the split reports all that bash ran.
 */
import {
  type Descriptor,
  DescriptorTable,
  namedDescriptor,
  throughDescriptorTree,
} from "./bash/descriptors.js";
import { type Argument, checkVariableArguments, isShellLocal, VariableTracker } from "./bash/variables.js";

/** Deepest nesting of substitutions, subshells and groups followed before a command counts as too complex. */
export const MAX_SHELL_NESTING = 32;

/** A `NAME=value` prefix of a simple command. */
export interface ShellAssignment {
  name: string;
  /** The assignment as normalised text (`FOO=1`, `MSG='a b'`). */
  text: string;
}

/** One program invocation, with its arguments normalised and its file redirections pulled out. */
export interface SimpleCommand {
  assignments: ShellAssignment[];
  /**
   * The command name and arguments: literal words after quote removal, re-quoted when they hold
   * spaces or shell characters (so `'git commit'` never reads as `git commit`); words with expansions
   * keep their source text (`$HOME`, `$(date)`), which no literal rule text can be confused with.
   */
  words: string[];
  /** Each word's value after quote removal, or undefined when it is only known at run time. */
  literals: Array<string | undefined>;
  /** Files this command writes through `>`, `>>`, `>|`, `&>`, `<>` and friends (not /dev/null, not fd copies). */
  writes: string[];
  /** Files it reads through `<` or `<>`: literal names, or the word as written when only known at run time. */
  reads: string[];
}

export function emptyCommand(): SimpleCommand {
  return { assignments: [], words: [], literals: [], writes: [], reads: [] };
}

export type ShellSplit = { ok: true; commands: SimpleCommand[] } | { ok: false; reason: string };

export interface SplitOptions {
  /**
   * Rule mode: glob characters in the command name are wildcards of a permission rule, not a name
   * chosen at run time, so they do not make the split fail; and nested commands are not reported, so
   * `Bash(echo $(date))` is one rule for the outer command (the inner one needs its own rule).
   */
  patterns?: boolean;
}

/** Thrown inside the parser; turned into `{ ok: false }` at the entry point. */
class TooComplex extends Error {}

function refuse(reason: string): never {
  throw new TooComplex(reason);
}

/** Words of a `for` list that can only give a loop variable a number: `1`, `-2`, `{1..10}`. */
const NUMERIC_WORD = /^(-?\d+|\{-?\d+\.\.-?\d+(\.\.-?\d+)?\})$/;
/** An assignment value that is a number or a single arithmetic expansion (whose result is a number). */
const NUMERIC_VALUE = /^(-?\d*|\$\(\([^`$]*\)\))$/s;

/** Commands whose real command line only exists at run time. */
const OPAQUE_COMMANDS = new Set(["eval", "trap", "complete", "compgen", "alias", "bind", "fc"]);
/**
 * Builtins that, with these options (or any option only known at run time), make a later command name run
 * another program or loaded code, or change how later lines parse.
 */
const REBINDING_OPTIONS: Record<string, RegExp> = {
  hash: /^-\w*p/,
  enable: /^-\w*f/,
  shopt: /^(expand_aliases|compat\d+)$/,
  // `set -k` turns `cmd NAME=value` into an environment assignment; posix mode parses differently;
  // `set -H` with a history expands `!:1-2` on a later line into words of earlier commands.
  set: /^(-\w*[kH]\w*|keyword|posix|histexpand|history)$/,
};
/** Keywords that only group or sequence other commands: the commands around them are what runs. */
const TRANSPARENT_KEYWORDS = new Set([
  "if",
  "then",
  "elif",
  "else",
  "fi",
  "do",
  "done",
  "while",
  "until",
  "!",
]);
/** Keywords after which redirections apply to the whole compound command (`done > log`). */
const CLOSING_KEYWORDS = new Set(["fi", "done", "}"]);
const RESERVED =
  /(if|then|elif|else|fi|do|done|while|until|for|select|case|esac|function|coproc|time|!|\{|\}|\[\[|\]\])(?=[ \t\n;&|()<>]|$)/y;
/** A redirection operator, with a descriptor number or `{var}` only where bash reads one (not before `&>`). */
const REDIRECT = /(?:(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})?(<<<|<<-|<<|<>|<&|<|>>|>&|>\||>)|()(&>>|&>))/y;
/** A `NAME=`, `NAME+=` or `NAME[sub]=` word, read after `\<newline>` continuations are dropped (as bash does). */
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=/;
/** Redirection targets that reach no file: writing into them changes nothing on disk. */
const DISCARDING_TARGETS = /^\/dev\/(null|tty|zero|full)$/;
const FD_COPY = /^(\d+)(-?)$/;
const METACHARS = " \t\n;&|<>()";
/** Characters a normalised word may hold without quoting. */
const PLAIN_WORD = /^[\w@%+=:,./*?[\]{}~^#-]+$/;
/** A here-document delimiter bash takes literally: plain characters, quoted as a whole or not at all. */
const PLAIN_DELIMITER = /^(?:[\w.+-]+|'[\w .+-]+'|"[\w .+-]+"|\\[\w.+-]+)$/;
/** A function name this splitter accepts (bash allows more, which stays too complex). */
const FUNCTION_NAME = /^[A-Za-z_][\w-]*$/;
/** Operators of `[[ … ]]` whose operands bash evaluates as arithmetic. */
const ARITHMETIC_TESTS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);
/** Builtins that declare variables and accept array values: `declare -a x=(1 2)`. */
const ARRAY_DECLARERS = new Set(["declare", "typeset", "local", "readonly", "export"]);
/** Where a reserved word may end. */
const WORD_END = /^[ \t\n;&|()<>]?$/;

/** Quotes a literal word for normalised command text, only when it needs it. */
export function quoteWord(value: string): string {
  if (PLAIN_WORD.test(value) && !value.startsWith("#")) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

interface Word {
  value: string;
  /** Source text, for words whose value is only known at run time. */
  raw: string;
  /** Holds a parameter expansion, command substitution or ANSI-C string. */
  expanded: boolean;
  /** Holds unquoted glob or brace characters. */
  pattern: boolean;
  /** Any quoting or escaping appeared (a quoted here-doc delimiter disables expansion). */
  quoted: boolean;
  /** Starts with an unquoted `~` (tilde expansion). */
  tilde: boolean;
  /** The whole word is one process substitution `<(…)` / `>(…)`: a pipe, not a file. */
  process: boolean;
  /** An array value `(…)` of an assignment. */
  array: boolean;
}

interface PendingHeredoc {
  delimiter: string;
  stripTabs: boolean;
  expand: boolean;
  /** Nesting depth of the `<<`: its body starts after the next newline at that same depth. */
  depth: number;
}

/** State shared by a line's parser and the parsers of its backtick and here-document bodies. */
interface LineState {
  vars: VariableTracker;
  /** Descriptors that a redirection to /dev/fd/N and friends assumed still point where the tool left them. */
  descriptorRefs: Set<number>;
  /** Descriptors that may point at a file for commands other than the one redirecting them. */
  redirectedForOthers: Set<number>;
  /** Functions the line defines: a call's redirections apply to the whole body. */
  functions: Set<string>;
  /** Each command's name and the descriptors its redirections point at files. */
  calls: Array<{ name: string | undefined; fds: number[] }>;
  /** A `{var}>file` redirection opened a descriptor whose number only bash knows. */
  allocatesDescriptors: boolean;
}

/** Text as bash reads it once `\<newline>` line continuations are dropped. */
function withoutContinuations(text: string): string {
  return text.replace(/\\\n/g, "");
}

function emptyWord(): Word {
  return {
    value: "",
    raw: "",
    expanded: false,
    pattern: false,
    quoted: false,
    tilde: false,
    process: false,
    array: false,
  };
}

function wordText(word: Word): string {
  return word.expanded || word.array ? word.raw : quoteWord(word.value);
}

/** The descriptors that now point at a file (or somewhere unknown). */
function fileDescriptors(table: DescriptorTable): number[] {
  return [...table.changed].filter((fd) => ["file", "unknown"].includes(table.get(fd).kind));
}

/**
 * How many words (`builtin`, `command` and their options) stand before the builtin or function a command
 * runs: `command exec 1<f` is an `exec`.
 */
function runnerPrefix(command: SimpleCommand): number {
  let p = 0;
  while (command.literals[p] === "builtin" || command.literals[p] === "command") {
    p++;
    while (command.literals[p]?.startsWith("-")) p++;
  }
  return p;
}

type Close = ")" | "}" | "case" | undefined;

class BashParser {
  private i = 0;
  private heredocs: PendingHeredoc[] = [];

  constructor(
    private readonly src: string,
    private out: SimpleCommand[],
    private depth: number,
    private readonly options: SplitOptions,
    readonly line: LineState,
  ) {}

  parseAll(): void {
    this.parseSequence(undefined);
  }

  private nest(run: () => void): void {
    if (++this.depth > MAX_SHELL_NESTING) refuse(`nesting deeper than ${MAX_SHELL_NESTING} levels`);
    // Rule mode reports only the outer command (see SplitOptions.patterns).
    const out = this.out;
    if (this.options.patterns) this.out = [];
    run();
    this.out = out;
    this.depth--;
  }

  private child(src: string): BashParser {
    if (this.depth + 1 > MAX_SHELL_NESTING) refuse(`nesting deeper than ${MAX_SHELL_NESTING} levels`);
    return new BashParser(
      src,
      this.options.patterns ? [] : this.out,
      this.depth + 1,
      this.options,
      this.line,
    );
  }

  private skipBlanks(): void {
    const { src } = this;
    while (this.i < src.length) {
      const c = src[this.i];
      if (c === " " || c === "\t") this.i++;
      else if (c === "\\" && src[this.i + 1] === "\n") this.i += 2;
      else break;
    }
  }

  /** Blanks, newlines (which start pending here-document bodies) and comments. */
  private skipLines(): void {
    for (;;) {
      this.skipBlanks();
      const c = this.src[this.i];
      if (c === "#") this.skipComment();
      else if (c === "\n") {
        this.i++;
        this.readHeredocs();
      } else return;
    }
  }

  private skipComment(): void {
    while (this.i < this.src.length && this.src[this.i] !== "\n") this.i++;
  }

  /** Whether `word` is at the cursor as a whole word (a reserved word or operator of a compound). */
  private at(word: string): boolean {
    if (!this.src.startsWith(word, this.i)) return false;
    // Bash joins `time --\<newline>x` into `time --x`… or not, by what follows: not modelled.
    if (this.src.startsWith("\\\n", this.i + word.length))
      refuse(`a line continuation right after "${word}"`);
    return WORD_END.test(this.src[this.i + word.length] ?? "");
  }

  /**
   * Reads commands until the end, the `)` / `}` that closes the current subshell, group or substitution,
   * or (in a `case` branch) the `;;`, `;&`, `;;&` or `esac` that ends the branch.
   */
  private parseSequence(close: Close): void {
    const { src } = this;
    let pipelineStart = true;
    for (;;) {
      this.skipBlanks();
      if (this.i >= src.length) {
        if (close)
          refuse(close === "case" ? "an unterminated `case`" : `unbalanced "${close === ")" ? "(" : "{"}"`);
        return;
      }
      const c = src[this.i];
      const next = src[this.i + 1];
      const wasStart = pipelineStart;
      pipelineStart = true;
      if (c === "#") this.skipComment();
      else if (c === "\n") {
        this.i++;
        this.readHeredocs();
      } else if (c === ";") {
        if (next === ";" || next === "&") {
          if (close !== "case") refuse("a `;;` or `;&` outside a `case` branch");
          this.i += src.startsWith(";;&", this.i) ? 3 : 2;
          return;
        }
        this.i++;
      } else if (c === "&" && next !== ">") this.i += next === "&" ? 2 : 1;
      else if (c === "|") {
        pipelineStart = next === "|";
        this.i += next === "|" || next === "&" ? 2 : 1;
      } else if (c === ")") {
        if (close !== ")") refuse('unbalanced ")"');
        this.i++;
        return;
      } else if (c === "(") {
        // `(\<newline>(` is `((`, an arithmetic command, once bash drops the continuation.
        if (next === "\\" && src[this.i + 2] === "\n") refuse("a line continuation right after `(`");
        if (next === "(") {
          this.i += 2;
          this.parseArithmetic("))");
        } else {
          this.i++;
          this.nest(() => this.parseSequence(")"));
        }
        this.parseTrailingRedirects();
      } else {
        const keyword = this.parseKeyword(close, wasStart);
        if (keyword === "closed") return;
        if (keyword === "none") this.parseCommand();
        if (keyword === "prefix") pipelineStart = true;
        else if (keyword === "none") pipelineStart = false;
      }
    }
  }

  /**
   * Handles a reserved word at command position: "closed" when it ended the current group or `case`
   * branch, "prefix" for `time`/`!` (a command follows), "none" when there is no reserved word here.
   */
  private parseKeyword(close: Close, pipelineStart: boolean): "none" | "handled" | "prefix" | "closed" {
    RESERVED.lastIndex = this.i;
    const match = RESERVED.exec(this.src);
    if (!match) return "none";
    const keyword = match[1]!;
    // `a | time b` runs a program named time; only at the start of a pipeline is it the keyword.
    if (keyword === "time" && !pipelineStart) return "none";
    if (keyword === "esac") {
      if (close !== "case") refuse("`esac` outside a `case`");
      return "closed";
    }
    this.i += keyword.length;
    switch (keyword) {
      case "{":
        this.nest(() => this.parseSequence("}"));
        this.parseTrailingRedirects();
        return "handled";
      case "}":
        if (close !== "}") refuse('unbalanced "}"');
        return "closed";
      case "for":
      case "select":
        this.parseLoopHeader(keyword);
        return "handled";
      case "case":
        this.parseCase();
        return "handled";
      case "function":
        this.skipBlanks();
        this.parseFunction(this.parseWord());
        return "handled";
      case "[[":
        this.parseConditional();
        this.parseTrailingRedirects();
        return "handled";
      case "]]":
        return refuse("`]]` without `[[`");
      case "coproc":
        this.parseCoproc();
        return "prefix";
      case "time":
        // `time [-p] [--] pipeline`: bash skips both (spelled without quotes; continuations dropped).
        for (const option of ["-p", "--"]) {
          this.skipBlanks();
          if (this.src[this.i] !== "-") break;
          const [before, reported] = [this.i, this.out.length];
          if (withoutContinuations(this.parseWord().raw) !== option) {
            // Not the option: the word is the command's, parsed again (and reported once) there.
            this.i = before;
            this.out.length = reported;
          }
        }
        return "prefix";
      case "!":
        return "prefix";
    }
    if (CLOSING_KEYWORDS.has(keyword)) this.parseTrailingRedirects();
    else if (!TRANSPARENT_KEYWORDS.has(keyword)) refuse(`the keyword "${keyword}"`);
    return "handled";
  }

  /** After `for`/`select`: `NAME in words`, or for `for` an arithmetic `((init; test; step))`. */
  private parseLoopHeader(keyword: string): void {
    this.skipBlanks();
    if (keyword === "for" && this.src.startsWith("((", this.i)) {
      this.i += 2;
      this.parseArithmetic("))", true);
      return;
    }
    // The loop header is not a command, but substitutions in its word list run.
    const header = this.parseCommand(false);
    const [variable, ...list] = header.literals;
    if (variable === undefined || !/^[A-Za-z_]\w*$/.test(variable) || header.writes.length > 0)
      refuse(`a \`${keyword}\` loop whose header is not \`NAME in WORDS\``);
    if (list.length > 0 && list[0] !== "in")
      refuse(`a \`${keyword}\` loop whose header is not \`NAME in WORDS\``);
    const values = header.words.slice(2);
    this.line.vars.setUnseen(
      variable,
      keyword === "for" && values.every((word) => NUMERIC_WORD.test(word)),
      refuse,
    );
  }

  /** `case WORD in [(]PATTERN[|PATTERN]…) LIST ;; … esac`: patterns and lists may hold substitutions. */
  private parseCase(): void {
    this.skipBlanks();
    this.parseWord();
    this.skipLines();
    if (!this.at("in")) refuse("a `case` without `in`");
    this.i += 2;
    for (;;) {
      this.skipLines();
      if (this.at("esac")) {
        this.i += 4;
        this.parseTrailingRedirects();
        return;
      }
      if (this.src[this.i] === "(") this.i++;
      for (;;) {
        this.skipBlanks();
        const pattern = this.parseWord();
        if (pattern.raw === "" || pattern.raw.startsWith("#"))
          refuse("a `case` pattern that is not a plain word");
        this.skipBlanks();
        const c = this.src[this.i];
        this.i++;
        if (c === ")") break;
        if (c !== "|") refuse("a `case` pattern that is not a plain word");
      }
      this.nest(() => this.parseSequence("case"));
    }
  }

  /** `NAME () BODY` or `function NAME [()] BODY`, the `()` already read when `name` came from a command. */
  private parseFunction(name: Word): void {
    if (name.expanded || name.quoted || name.pattern || !FUNCTION_NAME.test(name.value))
      refuse(`a function name other than a plain word (${name.raw})`);
    this.skipBlanks();
    if (this.src.startsWith("(", this.i)) {
      this.i++;
      this.skipBlanks();
      if (this.src[this.i] !== ")") refuse("a function definition without `()`");
      this.i++;
    }
    this.skipLines();
    this.line.functions.add(name.value);
    // Bash allows any compound command as a body; groups and subshells are what is modelled.
    if (this.at("{")) {
      this.i++;
      this.nest(() => this.parseSequence("}"));
    } else if (this.src[this.i] === "(" && this.src[this.i + 1] !== "(") {
      this.i++;
      this.nest(() => this.parseSequence(")"));
    } else refuse(`the body of the function ${name.value} is not \`{ … }\` or \`( … )\``);
    // Redirections after the body apply to every call.
    this.parseTrailingRedirects();
  }

  /** `coproc [NAME] COMMAND`: NAME only before a compound command (`coproc C pa` runs `C pa`). */
  private parseCoproc(): void {
    this.skipBlanks();
    const name = /^([A-Za-z_]\w*)[ \t]+(?=[{(])/.exec(this.src.slice(this.i));
    if (name) {
      this.i += name[0].length;
      this.line.vars.setUnseen(name[1]!, true, refuse);
    }
  }

  /**
   * `[[ … ]]` after the `[[`. Its words are not split or globbed; `-v NAME` evaluates a subscript in the
   * name, and the operands of `-eq` and friends are arithmetic. Runs no program itself.
   */
  private parseConditional(): void {
    const { src } = this;
    const args: Argument[] = [];
    let regex = false;
    for (;;) {
      this.skipBlanks();
      if (this.i >= src.length || src[this.i] === "\n") refuse("an unterminated `[[`");
      if (this.at("]]")) {
        this.i += 2;
        break;
      }
      const two = src.slice(this.i, this.i + 2);
      const c = src[this.i]!;
      if (regex && "()|<>".includes(c)) refuse("a `=~` pattern holding unquoted parentheses, `|` or `<`/`>`");
      if (two === "&&" || two === "||") {
        this.i += 2;
        args.push({ literal: two, raw: two });
      } else if (c === "(" || c === ")" || ((c === "<" || c === ">") && src[this.i + 1] !== "(")) {
        this.i++;
        args.push({ literal: c, raw: c });
      } else if (";&|".includes(c)) refuse(`"${c}" inside \`[[ … ]]\``);
      else if (c === "#") refuse("a `#` starting a word inside `[[ … ]]`");
      else {
        const word = this.parseWord();
        if (regex && src[this.i] !== " " && src[this.i] !== "\t")
          refuse("a `=~` pattern the splitter cannot delimit (bash reads parentheses and `|` into it)");
        args.push({ literal: word.expanded ? undefined : word.value, raw: word.raw });
        regex = withoutContinuations(word.raw) === "=~";
        continue;
      }
      regex = false;
    }
    const { vars } = this.line;
    args.forEach((arg, k) => {
      if (arg.literal === "-v" || arg.literal === "-R") vars.name(args[k + 1]?.literal, refuse, false);
      if (arg.literal !== undefined && ARITHMETIC_TESTS.has(arg.literal)) {
        for (const operand of [args[k - 1], args[k + 1]]) {
          if (!operand) refuse(`\`${arg.literal}\` without an operand in \`[[ … ]]\``);
          // An arithmetic expansion was checked where it was parsed; its value is a number.
          if (operand.literal === undefined && NUMERIC_VALUE.test(operand.raw)) continue;
          // `"$n"` is the value of n, like `$n`; other quoting inside arithmetic is refused.
          vars.arithmetic(operand.literal ?? operand.raw.replace(/^"(\$\{?\w+\}?)"$/, "$1"), refuse);
        }
      }
    });
  }

  /** Redirections after `)`, `}`, `done`, `fi`, `esac` or `]]` apply to everything inside: record them as a command. */
  private parseTrailingRedirects(): void {
    const command = emptyCommand();
    const table = new DescriptorTable();
    for (;;) {
      this.skipBlanks();
      if (!this.parseRedirect(command, table)) break;
    }
    for (const fd of fileDescriptors(table)) this.line.redirectedForOthers.add(fd);
    if (command.writes.length > 0 || command.reads.length > 0) this.out.push(command);
  }

  private parseCommand(record = true): SimpleCommand {
    const { src } = this;
    const command = emptyCommand();
    const table = new DescriptorTable();
    const args: Argument[] = [];
    let name: Word | undefined;
    for (;;) {
      this.skipBlanks();
      if (this.i >= src.length) break;
      const c = src[this.i];
      const next = src[this.i + 1];
      if (c === "\n" || c === ";" || c === "|" || c === ")" || (c === "&" && next !== ">")) break;
      if (c === "#") {
        this.skipComment();
        break;
      }
      if (c === "(") {
        if (
          record &&
          name &&
          command.words.length === 1 &&
          command.assignments.length === 0 &&
          args.length === 1
        ) {
          this.parseFunction(name);
          return command;
        }
        refuse("a `(` inside a command");
      }
      if (!((c === "<" || c === ">") && next === "(") && this.parseRedirect(command, table)) continue;
      const word = this.parseWord();
      const source = withoutContinuations(word.raw);
      // `2\<newline>>f` is `2>f` to bash: a descriptor number, not a word.
      if (/^(\d+|\{\w+\})$/.test(source) && source !== word.raw && "<>".includes(src[this.i] ?? ""))
        refuse("a line continuation inside a redirection's descriptor number");
      const assignment = name === undefined ? ASSIGNMENT.exec(source) : null;
      if (assignment) {
        const numeric = this.assignmentValue(word, source, assignment[0].length);
        command.assignments.push({ name: assignment[1]!, text: wordText(word) });
        if (assignment[2]) this.line.vars.arithmetic(assignment[2].slice(1, -1), refuse);
        this.line.vars.set(assignment[1]!, numeric, refuse);
        continue;
      }
      if (name === undefined) {
        name = word;
        this.checkCommandName(word);
      } else if (
        ARRAY_DECLARERS.has(command.literals[0] ?? "") &&
        src[this.i] === "(" &&
        /^[A-Za-z_]\w*\+?=$/.test(word.raw)
      ) {
        this.parseArray(word);
      }
      command.words.push(wordText(word));
      command.literals.push(word.expanded || word.array ? undefined : word.value);
      args.push({
        literal: word.expanded || word.array ? undefined : word.value,
        raw: word.raw,
        array: word.array,
      });
    }
    this.checkBuiltin(command, args);
    this.line.calls.push({ name: command.literals[runnerPrefix(command)], fds: fileDescriptors(table) });
    if (
      record &&
      (command.words.length > 0 ||
        command.assignments.length > 0 ||
        command.writes.length > 0 ||
        command.reads.length > 0)
    ) {
      this.out.push(command);
    }
    return command;
  }

  /** Reads an array value if one follows; whether the assigned value can only be a number. */
  private assignmentValue(word: Word, source: string, nameLength: number): boolean {
    if (this.src[this.i] === "(" && source.length === nameLength) {
      return this.parseArray(word);
    }
    return NUMERIC_VALUE.test(source.slice(nameLength));
  }

  /** An array value `(…)` right after `NAME=` (the word so far); whether every element is a number. */
  private parseArray(word: Word): boolean {
    const { src } = this;
    const start = this.i - word.raw.length;
    this.i++;
    let numeric = true;
    for (;;) {
      this.skipLines();
      if (this.i >= src.length) refuse("an unbalanced array value");
      if (src[this.i] === ")") {
        this.i++;
        break;
      }
      const element = this.parseWord();
      if (element.raw === "") refuse(`"${src[this.i]}" inside an array value`);
      const keyed = /^\[([^\]]*)\]\+?=/.exec(element.raw);
      if (keyed) this.line.vars.arithmetic(keyed[1]!, refuse);
      else if (element.raw.startsWith("[")) refuse("an array element that starts with `[`");
      if (!/^-?\d+$/.test(element.raw.slice(keyed?.[0].length ?? 0))) numeric = false;
    }
    if (!WORD_END.test(src[this.i] ?? "")) refuse("text right after an array value");
    word.raw = src.slice(start, this.i);
    word.array = true;
    return numeric;
  }

  /** Builtins that run other code or evaluate names, checked once the command's words are known. */
  private checkBuiltin(command: SimpleCommand, args: Argument[]): void {
    const skip = runnerPrefix(command);
    const name = command.literals[skip];
    if (name === undefined) return;
    if (skip === 1 && OPAQUE_COMMANDS.has(name)) refuse(`\`${name}\` runs a command built at run time`);
    const rebinding = REBINDING_OPTIONS[name];
    if (rebinding && command.literals.some((word) => word === undefined || rebinding.test(word)))
      refuse(
        `\`${command.words.slice(skip).join(" ")}\` changes what later command names run or how later lines parse`,
      );
    checkVariableArguments(name, args.slice(skip + 1), this.line.vars, refuse);
  }

  private checkCommandName(word: Word): void {
    if (word.expanded) refuse(`the command name ${word.raw} is only known at run time`);
    if (word.pattern && !this.options.patterns)
      refuse(`the command name ${word.raw} is a glob or brace pattern`);
    if (OPAQUE_COMMANDS.has(word.value)) refuse(`\`${word.value}\` runs a command built at run time`);
    // `ca\<newline>se` is the keyword `case` to bash; the keyword check above only saw the raw text.
    RESERVED.lastIndex = 0;
    const reserved = RESERVED.exec(word.value);
    if (reserved && reserved[0] === word.value && word.raw !== word.value)
      refuse(`the reserved word ${word.value} spelled with quotes or a line continuation`);
  }

  /** Parses one redirection at the cursor into `command` and the descriptor table; false when there is none. */
  private parseRedirect(command: SimpleCommand, table: DescriptorTable): boolean {
    REDIRECT.lastIndex = this.i;
    const match = REDIRECT.exec(this.src);
    if (!match) return false;
    const fdText = match[1];
    const op = (match[2] ?? match[4])!;
    this.i += match[0].length;
    this.skipBlanks();
    const c = this.src[this.i];
    const processTarget = (c === "<" || c === ">") && this.src[this.i + 1] === "(";
    if (this.i >= this.src.length || (METACHARS.includes(c!) && !processTarget) || c === "#")
      refuse(`a redirection "${op}" without a target`);
    let fd: number | undefined;
    if (fdText?.startsWith("{")) this.line.allocatesDescriptors = true;
    else if (fdText !== undefined) fd = Number(fdText);
    const input = op.startsWith("<") && op !== "<>";
    fd ??= input ? 0 : 1;
    const set = (value: Descriptor) => {
      if (fdText?.startsWith("{")) return;
      table.set(fd, value);
      if (op === "&>" || op === "&>>" || (op === ">&" && value.kind === "file")) table.set(2, value);
    };
    if ((op === "<&" || op === ">&") && c === "-") {
      // Bash reads `>&-` as one token: what follows the `-` is the next word (`>&-x` closes, then `x`).
      this.i++;
      set({ kind: "closed" });
      return true;
    }
    const target = this.parseWord();
    if (op === "<<" || op === "<<-") {
      if (!PLAIN_DELIMITER.test(target.raw))
        refuse(`the here-document delimiter ${target.raw} is not a plain word`);
      this.heredocs.push({
        delimiter: target.value,
        stripTabs: op === "<<-",
        expand: !target.quoted,
        depth: this.depth,
      });
      set({ kind: "anonymous" });
      return true;
    }
    if (op === "<<<" || target.process) {
      set({ kind: "anonymous" });
      return true;
    }
    // Bash takes a quoted word after <& or >& (`>&3-""`) for a file name, not a descriptor: too subtle to model.
    if ((op === "<&" || op === ">&") && target.raw !== target.value) {
      refuse(`the quoted target ${target.raw} of a "${op}" redirection`);
    }
    const copy = op === "<&" || op === ">&" ? FD_COPY.exec(target.value) : null;
    if ((op === "<&" || op === ">&") && (target.expanded || (!copy && target.value !== "-"))) {
      if (op === "<&" || fdText !== undefined || target.expanded)
        refuse(`the descriptor ${target.raw} of a "${op}" is not a plain number`);
    }
    if (target.value === "-" && (op === "<&" || op === ">&")) {
      set({ kind: "closed" });
      return true;
    }
    if (copy) {
      const source = Number(copy[1]);
      set(table.get(source));
      if (copy[2]) table.set(source, { kind: "closed" });
      return true;
    }
    if (target.expanded || target.pattern) {
      if (input) {
        // Reported as written (`$F`, `*.env`): the evaluator must not take it for a literal name, and asks
        // or expands it against Read rules.
        command.reads.push(target.raw);
        set({ kind: "unknown" });
        return true;
      }
      refuse(`the redirection target ${target.raw} is only known at run time`);
    }
    const path = target.value.startsWith("~") && !target.tilde ? `./${target.value}` : target.value;
    if (path.startsWith("~") && target.tilde && !/^~(\/|$)/.test(path))
      refuse(`the redirection target ${target.raw} names another user's home`);
    if (throughDescriptorTree(path))
      refuse(`the redirection target ${path} goes through a process's descriptors`);
    const named = namedDescriptor(path);
    if (named !== undefined) {
      this.reopen(command, table.get(named), input);
      set(table.get(named));
      return true;
    }
    if (input) {
      command.reads.push(path);
      set({ kind: "file", path });
      return true;
    }
    if (DISCARDING_TARGETS.test(path)) {
      set({ kind: "anonymous" });
      return true;
    }
    if (op === "<>") command.reads.push(path);
    command.writes.push(path);
    set({ kind: "file", path });
    return true;
  }

  /** A redirection to /dev/stdout and friends opens again what the descriptor points at. */
  private reopen(command: SimpleCommand, descriptor: Descriptor, input: boolean): void {
    switch (descriptor.kind) {
      case "original":
        this.line.descriptorRefs.add(descriptor.fd);
        return;
      case "file":
        (input ? command.reads : command.writes).push(descriptor.path);
        return;
      case "unknown":
        refuse(
          "a redirection to /dev/stdout or /dev/fd/N after that descriptor was redirected to a file only known at run time",
        );
    }
  }

  private parseWord(): Word {
    const { src } = this;
    const start = this.i;
    const word = emptyWord();
    while (this.i < src.length) {
      const c = src[this.i]!;
      if ((c === "<" || c === ">") && src[this.i + 1] === "(") {
        // A process substitution, also in the middle of a word (`a<(cmd)` is `a/dev/fd/63`).
        const at = this.i;
        this.i += 2;
        this.nest(() => this.parseSequence(")"));
        word.process = at === start;
        word.expanded = true;
        word.value += src.slice(at, this.i);
        continue;
      }
      if (METACHARS.includes(c)) break;
      word.process = false;
      if (c === "\\") {
        const escaped = src[this.i + 1];
        if (escaped === "\n") this.i += 2;
        else if (escaped === undefined) {
          word.value += c;
          this.i++;
        } else {
          word.value += escaped;
          word.quoted = true;
          this.i += 2;
        }
      } else if (c === "'") {
        const end = src.indexOf("'", this.i + 1);
        if (end < 0) refuse("an unbalanced single quote");
        word.value += src.slice(this.i + 1, end);
        word.quoted = true;
        this.i = end + 1;
      } else if (c === '"') {
        this.i++;
        word.value += this.parseDoubleQuoted(word);
        word.quoted = true;
      } else if (c === "$") {
        word.value += this.parseDollar(word, "unquoted");
      } else if (c === "`") {
        word.value += this.parseBacktick(word, false);
      } else {
        if (c === "~" && this.i === start) word.tilde = true;
        if ("*?[]{}".includes(c)) word.pattern = true;
        word.value += c;
        this.i++;
      }
    }
    word.raw = src.slice(start, this.i);
    // A lone `[` (the test command), `]`, `{` or `}` expands to nothing but itself.
    if (/^[[\]{}]$/.test(word.raw)) word.pattern = false;
    return word;
  }

  /** Reads a double-quoted string after its opening quote; `$(…)` and backticks inside still run. */
  private parseDoubleQuoted(word: Word): string {
    const { src } = this;
    let value = "";
    while (this.i < src.length) {
      const c = src[this.i]!;
      if (c === '"') {
        this.i++;
        return value;
      }
      if (c === "\\") {
        const escaped = src[this.i + 1];
        if (escaped === "\n") this.i += 2;
        else if (escaped !== undefined && '$`"\\'.includes(escaped)) {
          value += escaped;
          this.i += 2;
        } else {
          value += c;
          this.i++;
        }
      } else if (c === "$") value += this.parseDollar(word, "quoted");
      else if (c === "`") value += this.parseBacktick(word, true);
      else {
        value += c;
        this.i++;
      }
    }
    return refuse("an unbalanced double quote");
  }

  /**
   * Parses `$…` at the cursor: substitutions are split recursively; returns the source text. `context`:
   * inside double quotes or a here-document body `$'` and `$"` are plain text, and inside `${…}` they
   * are not modelled.
   */
  private parseDollar(word: Word, context: "unquoted" | "quoted" | "brace"): string {
    const { src } = this;
    const start = this.i;
    const next = src[this.i + 1];
    // Bash drops `\<newline>` before it looks at what follows `$` (also in double quotes and here-doc
    // bodies), so `"$\<newline>(cmd)"` runs cmd and `$\<newline>X` expands X.
    if (next === "\\" && src[this.i + 2] === "\n") refuse("a line continuation right after `$`");
    // `$(\<newline>(` is `$((`, arithmetic, once bash drops the continuation (found by the fuzzer).
    if (next === "(" && src[this.i + 2] === "\\" && src[this.i + 3] === "\n")
      refuse("a line continuation right after `$(`");
    if ((next === "'" || next === '"') && context !== "unquoted") {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax in a message, not a template
      if (context === "brace") refuse("a `$'…'` or `$\"…\"` string inside `${…}`");
      this.i++;
      return "$";
    }
    if (next === "(" && src[this.i + 2] === "(") {
      this.i += 3;
      this.parseArithmetic("))");
    } else if (next === "[") {
      this.i += 2;
      this.parseArithmetic("]");
    } else if (next === "(") {
      this.i += 2;
      this.nest(() => this.parseSequence(")"));
    } else if (next === "{") {
      this.i += 2;
      this.nest(() => this.parseBraceParameter(context !== "unquoted"));
    } else if (next === "'") {
      this.i += 2;
      let value = "";
      while (this.i < src.length && src[this.i] !== "'") {
        const escaped = src[this.i] === "\\";
        value += src.slice(this.i, this.i + (escaped ? 2 : 1));
        this.i += escaped ? 2 : 1;
      }
      if (this.i >= src.length) refuse("an unbalanced $'…' string");
      this.i++;
      word.quoted = true;
      // Without escapes the string is its text; with them its value is only known to bash.
      if (!value.includes("\\")) return value;
    } else if (next === '"') {
      // `$"…"` is a (translatable) double-quoted string, not an expansion.
      this.i += 2;
      word.quoted = true;
      return this.parseDoubleQuoted(word);
    } else if (next !== undefined && /[A-Za-z_]/.test(next)) {
      this.i++;
      while (this.i < src.length && /\w/.test(src[this.i]!)) this.i++;
    } else if (next !== undefined && /[0-9@*#?$!-]/.test(next)) this.i += 2;
    else {
      this.i++;
      return "$";
    }
    word.expanded = true;
    return src.slice(start, this.i);
  }

  /**
   * Arithmetic after its opener (`$((`, `((`, `$[`, `for ((`), up to `close`. Quoting and substitutions
   * inside are refused (see VariableTracker.arithmetic); in `for ((…))` the three parts are split on `;`.
   */
  private parseArithmetic(close: "))" | "]", sections = false): void {
    const { src } = this;
    const start = this.i;
    let depth = 0;
    while (this.i < src.length) {
      const c = src[this.i]!;
      if (depth === 0 && src.startsWith(close, this.i)) {
        const text = src.slice(start, this.i);
        this.i += close.length;
        for (const part of sections ? text.split(";") : [text]) this.line.vars.arithmetic(part, refuse);
        if (sections && text.split(";").length !== 3) refuse("a `for ((…))` header without three parts");
        return;
      }
      if (c === "(") depth++;
      else if (c === ")") {
        // Bash falls back to a subshell or substitution when `((` does not close as `))`.
        if (depth === 0) refuse("a `((` that is not arithmetic");
        depth--;
      } else if (c === "\n" && !sections) refuse("a line break inside arithmetic");
      this.i++;
    }
    refuse(`an unbalanced arithmetic expression (no "${close}")`);
  }

  /**
   * `${ … }` after the `${`: may nest quotes and substitutions (`${x:-$(cmd)}`). A subscript
   * (`${a[i]}`) and a substring (`${s:i:n}`) are arithmetic, and so is an indirect `${!x}`'s target.
   */
  private parseBraceParameter(quotedContext: boolean): void {
    const { src } = this;
    const start = this.i;
    const scratch = emptyWord();
    while (this.i < src.length) {
      const c = src[this.i]!;
      if (c === "}") {
        this.braceArithmetic(withoutContinuations(src.slice(start, this.i)));
        this.i++;
        return;
      }
      if (c === "\\") this.i += 2;
      else if (c === "'") {
        // Inside "…" bash treats some of these quotes as text: `"${x:-'}$(cmd)'}"` runs cmd.
        // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax in a message, not a template
        if (quotedContext) refuse("a single quote inside `${…}` within double quotes or a here-document");
        const end = src.indexOf("'", this.i + 1);
        if (end < 0) refuse("an unbalanced single quote");
        this.i = end + 1;
      } else if (c === '"') {
        this.i++;
        this.parseDoubleQuoted(scratch);
      } else if (c === "$") this.parseDollar(scratch, "brace");
      else if (c === "`") this.parseBacktick(scratch, quotedContext);
      else if ((c === "<" || c === ">") && src[this.i + 1] === "(") {
        // `${x:-<(cmd)}` runs cmd (found by the fuzzer); within double quotes it would be text.
        if (quotedContext)
          // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax in a message, not a template
          refuse("a process substitution inside `${…}` within double quotes or a here-document");
        this.i += 2;
        this.nest(() => this.parseSequence(")"));
      } else this.i++;
    }
    refuse("an unbalanced ${");
  }

  private braceArithmetic(body: string): void {
    const { vars } = this.line;
    // ${x@P} expands the value as a prompt string, which runs any $(…) the value holds.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax in a message, not a template
    if (/@P$/.test(body)) refuse("`${…@P}` runs command substitutions held in a value");
    const name = /^[#!]?([A-Za-z_]\w*|[0-9@*#?$!-])/.exec(body)?.[0];
    if (name === undefined) refuse(`the parameter expansion \${${body}} is not modelled`);
    if (name.startsWith("!")) vars.arithmetic(name.slice(1), refuse);
    let rest = body.slice(name.length);
    if (rest.startsWith("[")) {
      const end = rest.indexOf("]");
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax in a message, not a template
      if (end < 0) refuse("an unbalanced subscript in `${…}`");
      const subscript = rest.slice(1, end);
      if (subscript !== "@" && subscript !== "*") vars.arithmetic(subscript, refuse);
      rest = rest.slice(end + 1);
    }
    if (/^:[^-=?+]/.test(rest)) vars.arithmetic(rest.slice(1), refuse);
    // `${NAME:=value}` assigns NAME when it is unset or empty.
    if (/^:?=/.test(rest)) vars.setUnseen(name.replace(/^[#!]/, ""), false, refuse);
  }

  /** A backtick substitution: its body, unescaped, is split as a command line of its own. */
  private parseBacktick(word: Word, inDoubleQuotes: boolean): string {
    const { src } = this;
    const start = this.i;
    this.i++;
    let body = "";
    while (this.i < src.length && src[this.i] !== "`") {
      const c = src[this.i]!;
      const escaped = src[this.i + 1];
      if (c === "\\" && escaped === '"' && inDoubleQuotes)
        refuse('a `\\"` inside backticks within double quotes');
      if (c === "\\" && escaped !== undefined && "`$\\".includes(escaped)) {
        body += escaped;
        this.i += 2;
      } else {
        body += c;
        this.i++;
      }
    }
    if (this.i >= src.length) refuse("an unbalanced backtick");
    this.i++;
    this.child(body).parseAll();
    word.expanded = true;
    return src.slice(start, this.i);
  }

  /** After a newline: the bodies of pending here-documents; unquoted delimiters let `$(…)` in the body run. */
  private readHeredocs(): void {
    const { src } = this;
    // `cat <<EOF $(<newline>cmd …` runs cmd in bash 5.2, whose `$(…)` parser reads no outer body, while
    // a `(` subshell's newline does start it: a body pending across a nesting boundary is ambiguous.
    if (this.heredocs.some((doc) => doc.depth !== this.depth))
      refuse("a here-document whose body would start inside or after a nested command");
    for (const doc of this.heredocs) {
      const bodyStart = this.i;
      let bodyEnd: number | undefined;
      while (this.i < src.length) {
        const lineEnd = src.indexOf("\n", this.i) < 0 ? src.length : src.indexOf("\n", this.i);
        const line = src.slice(this.i, lineEnd);
        const atLineStart = this.i;
        this.i = Math.min(lineEnd + 1, src.length);
        // Bash joins `\<newline>` lines of an expanding body before it compares them with the delimiter,
        // so `E\<newline>OF` ends it and the lines after run as commands.
        if (doc.expand && /(^|[^\\])(\\\\)*\\$/.test(line))
          refuse("a line continuation inside a here-document");
        const text = doc.stripTabs ? line.replace(/^\t+/, "") : line;
        if (text === doc.delimiter) {
          bodyEnd = atLineStart;
          break;
        }
        // Inside `$(…)` bash also ends the body at `E)` (found by the fuzzer): not modelled.
        if (text.startsWith(doc.delimiter))
          refuse(`a here-document line that starts with its delimiter ${doc.delimiter}`);
      }
      // Bash warns and takes the rest of the line as the body; a missing delimiter is not modelled.
      if (bodyEnd === undefined) refuse(`a here-document without its delimiter ${doc.delimiter}`);
      if (doc.expand) this.child(src.slice(bodyStart, bodyEnd)).scanExpansions();
    }
    this.heredocs = [];
  }

  /** The end of the line: here-documents still waiting for a body are not modelled. */
  finish(): void {
    if (this.heredocs.length > 0) refuse("a here-document without a body");
  }

  /** Finds the substitutions in text that is otherwise data (an unquoted here-document body). */
  private scanExpansions(): void {
    const { src } = this;
    const scratch = emptyWord();
    while (this.i < src.length) {
      const c = src[this.i];
      if (c === "\\") this.i += 2;
      else if (c === "$") this.parseDollar(scratch, "quoted");
      else if (c === "`") this.parseBacktick(scratch, false);
      else this.i++;
    }
  }
}

/**
 * A redirection to /dev/stdout and friends is harmless only while that descriptor still points where the
 * tool left it: not after an `exec`, a compound's redirections or a call of a function defined here
 * pointed it at a file, and (for descriptors above 2) not after `{var}>` opened one at a number only
 * bash knows.
 */
function checkDescriptorRefs(line: LineState): void {
  const redirected = new Set(line.redirectedForOthers);
  for (const { name, fds } of line.calls) {
    if (name === "exec" || (name !== undefined && line.functions.has(name)))
      for (const fd of fds) redirected.add(fd);
  }
  for (const fd of line.descriptorRefs) {
    if (redirected.has(fd) || (fd > 2 && line.allocatesDescriptors)) {
      refuse(
        `a redirection to descriptor ${fd} by name (/dev/fd/${fd}, /dev/stdout, …) where the line points that descriptor at a file`,
      );
    }
  }
}

/** Splits a bash command line into its simple commands, or says why it cannot be judged safely. */
export function splitBash(command: string, options: SplitOptions = {}): ShellSplit {
  const commands: SimpleCommand[] = [];
  try {
    const line: LineState = {
      vars: new VariableTracker(),
      descriptorRefs: new Set(),
      redirectedForOthers: new Set(),
      functions: new Set(),
      calls: [],
      allocatesDescriptors: false,
    };
    const parser = new BashParser(command, commands, 0, options, line);
    parser.parseAll();
    parser.finish();
    checkDescriptorRefs(line);
    const hidden = line.vars.hidden();
    if (hidden !== undefined) {
      refuse(
        `arithmetic on ${hidden}, whose value the command sets, would run any command hidden in that value`,
      );
    }
  } catch (error) {
    if (error instanceof TooComplex) return { ok: false, reason: error.message };
    throw error;
  }
  return { ok: true, commands };
}

/** The normalised text of a simple command, optionally without some of its assignments. */
export function commandText(
  command: SimpleCommand,
  keepAssignment: (name: string) => boolean = () => true,
): string {
  return [
    ...command.assignments.filter((a) => keepAssignment(a.name)).map((a) => a.text),
    ...command.words,
  ].join(" ");
}

/**
 * Whether a command only sets shell variables no program sees: lower-case names (the environment's
 * conventions and bash's own variables are upper case) that the environment does not already hold
 * (an inherited, exported name would reach every later program). `x=$(git rev-parse HEAD)` then needs
 * a rule only for the command inside; later uses of `$x` are judged where they appear.
 */
export function setsOnlyShellVariables(
  command: SimpleCommand,
  environment: NodeJS.ProcessEnv = process.env,
): boolean {
  return (
    command.words.length === 0 &&
    command.writes.length === 0 &&
    command.reads.length === 0 &&
    command.assignments.length > 0 &&
    command.assignments.every(({ name }) => isShellLocal(name) && !(name in environment))
  );
}
