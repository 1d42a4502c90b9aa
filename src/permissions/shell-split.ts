/**
 * Splits a bash command line into the simple commands it would run, so that a permission rule has to
 * cover every one of them. Claude Code matched rules against the whole line, so `Bash(ls:*)` allowed
 * `ls | sh`; here `ls | sh` is two commands and `sh` needs its own rule.
 *
 * This is not a full bash parser. It understands what decides WHICH programs run and WHICH files a
 * redirection writes: operators, quoting, escapes, comments, command and process substitution (also
 * inside double quotes and here-documents), subshells, groups, `if`/`while`/`for` keywords and
 * redirections. Anything it cannot see through (a command name built at run time, `eval`, `case`,
 * `[[ ]]`, arithmetic commands, function definitions, unbalanced quotes) makes the split fail, and the
 * caller asks instead of guessing.
 */

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

/**
 * Bash evaluates a variable's VALUE as an expression in arithmetic (`$((x))`, `$[x]`, `${s:x}`,
 * `${a[x]}`, `a[x]=1`, `let x`), and an array subscript in that value runs command substitutions:
 * `x='a[$(rm y)]'; echo $((x))` runs `rm y`. So a line that both gives a variable text of its choosing
 * and does arithmetic on it hides a command; the split fails and the caller asks.
 */
interface VariableFlow {
  /** Variables this line sets to something other than a plain number. */
  chosen: Set<string>;
  /** Names referenced where bash evaluates arithmetic. */
  arithmetic: Set<string>;
}

/** Builtins that set the variables named in their arguments (`read x`, `printf -v x`, `export x=…`). */
const VARIABLE_SETTERS = new Set([
  "declare",
  "export",
  "getopts",
  "local",
  "mapfile",
  "printf",
  "read",
  "readarray",
  "readonly",
  "typeset",
]);
/** Words of a `for` list that can only give a loop variable a number: `1`, `-2`, `{1..10}`. */
const NUMERIC_WORD = /^(-?\d+|\{-?\d+\.\.-?\d+(\.\.-?\d+)?\})$/;
/** An assignment value that is a number or a single arithmetic expansion (whose result is a number). */
const NUMERIC_VALUE = /^(-?\d*|\$\(\([^`$]*\)\))$/s;
/** Identifiers in arithmetic text; not hex digits (`0xff`) or digits of a base (`16#ff`). */
const ARITHMETIC_NAME = /(?<![\w#])[A-Za-z_]\w*/g;

/** Commands whose real command line only exists at run time. */
const OPAQUE_COMMANDS = new Set(["eval", "trap", "complete", "alias"]);
/** Builtins that, with these options, make a later command name run another program or loaded code. */
const REBINDING_OPTIONS: Record<string, RegExp> = { hash: /^-\w*p/, enable: /^-\w*f/ };
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
const UNSUPPORTED_KEYWORDS: Record<string, string> = {
  case: "`case` statements",
  select: "`select` loops",
  function: "function definitions",
  coproc: "`coproc`",
  "[[": "`[[ … ]]` tests",
  "]]": "`[[ … ]]` tests",
  esac: "`case` statements",
};
const RESERVED =
  /(if|then|elif|else|fi|do|done|while|until|for|select|case|esac|function|coproc|!|\{|\}|\[\[|\]\])(?=[ \t\n;&|()<>]|$)/y;
const REDIRECT = /(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})?(<<<|<<-|<<|<>|<&|<|>>|>&|>\||>|&>>|&>)/y;
const ASSIGNMENT = /([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=/y;
/** Redirection targets that do not write a file. */
const HARMLESS_TARGETS = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/;
const FD_COPY = /^(\d+-?|-)$/;
const METACHARS = " \t\n;&|<>()";
/** Characters a normalised word may hold without quoting. */
const PLAIN_WORD = /^[\w@%+=:,./*?[\]{}~^#-]+$/;

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
}

interface PendingHeredoc {
  delimiter: string;
  stripTabs: boolean;
  expand: boolean;
  /** Nesting depth of the `<<`: its body starts after the next newline at that same depth. */
  depth: number;
}

/** Text as bash reads it once `\<newline>` line continuations are dropped. */
function withoutContinuations(text: string): string {
  return text.replace(/\\\n/g, "");
}

function emptyWord(): Word {
  return { value: "", raw: "", expanded: false, pattern: false, quoted: false, tilde: false };
}

function wordText(word: Word): string {
  return word.expanded ? word.raw : quoteWord(word.value);
}

class BashParser {
  private i = 0;
  private heredocs: PendingHeredoc[] = [];

  constructor(
    private readonly src: string,
    private out: SimpleCommand[],
    private depth: number,
    private readonly options: SplitOptions,
    readonly flow: VariableFlow = { chosen: new Set(), arithmetic: new Set() },
  ) {}

  parseAll(): void {
    this.parseSequence(undefined);
  }

  private nest(run: () => void): void {
    if (++this.depth > MAX_SHELL_NESTING)
      throw new TooComplex(`nesting deeper than ${MAX_SHELL_NESTING} levels`);
    // Rule mode reports only the outer command (see SplitOptions.patterns).
    const out = this.out;
    if (this.options.patterns) this.out = [];
    run();
    this.out = out;
    this.depth--;
  }

  private child(src: string): BashParser {
    if (this.depth + 1 > MAX_SHELL_NESTING)
      throw new TooComplex(`nesting deeper than ${MAX_SHELL_NESTING} levels`);
    return new BashParser(
      src,
      this.options.patterns ? [] : this.out,
      this.depth + 1,
      this.options,
      this.flow,
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

  private skipComment(): void {
    while (this.i < this.src.length && this.src[this.i] !== "\n") this.i++;
  }

  /** Reads commands until the end, or the `)` / `}` that closes the current subshell, group or substitution. */
  private parseSequence(close: ")" | "}" | undefined): void {
    const { src } = this;
    for (;;) {
      this.skipBlanks();
      if (this.i >= src.length) {
        if (close) throw new TooComplex(`unbalanced "${close === ")" ? "(" : "{"}"`);
        return;
      }
      const c = src[this.i];
      const next = src[this.i + 1];
      if (c === "#") this.skipComment();
      else if (c === "\n") {
        this.i++;
        this.readHeredocs();
      } else if (c === ";") {
        if (next === ";" || next === "&") throw new TooComplex("`case` statements");
        this.i++;
      } else if (c === "&" && next !== ">") this.i += next === "&" ? 2 : 1;
      else if (c === "|") this.i += next === "|" || next === "&" ? 2 : 1;
      else if (c === ")") {
        if (close !== ")") throw new TooComplex('unbalanced ")"');
        this.i++;
        return;
      } else if (c === "(") {
        if (next === "(") throw new TooComplex("arithmetic commands `(( … ))`");
        this.i++;
        this.nest(() => this.parseSequence(")"));
        this.parseTrailingRedirects();
      } else {
        const keyword = this.parseKeyword(close);
        if (keyword === "closed") return;
        if (keyword === "none") this.parseCommand();
      }
    }
  }

  /** Handles a reserved word at command position; "closed" when it was the `}` ending the current group. */
  private parseKeyword(close: ")" | "}" | undefined): "none" | "handled" | "closed" {
    RESERVED.lastIndex = this.i;
    const match = RESERVED.exec(this.src);
    if (!match) return "none";
    const keyword = match[1]!;
    if (keyword in UNSUPPORTED_KEYWORDS) throw new TooComplex(UNSUPPORTED_KEYWORDS[keyword]!);
    this.i += keyword.length;
    if (keyword === "{") {
      this.nest(() => this.parseSequence("}"));
      this.parseTrailingRedirects();
    } else if (keyword === "}") {
      if (close !== "}") throw new TooComplex('unbalanced "}"');
      return "closed";
    } else if (keyword === "for") {
      this.skipBlanks();
      if (this.src.startsWith("((", this.i)) throw new TooComplex("arithmetic `for (( … ))` loops");
      // The loop header is not a command, but substitutions in its word list run.
      const [variable, ...list] = this.parseCommand(false).words;
      const values = list[0] === "in" ? list.slice(1) : undefined;
      if (variable && !values?.every((word) => NUMERIC_WORD.test(word))) this.flow.chosen.add(variable);
    } else if (CLOSING_KEYWORDS.has(keyword)) this.parseTrailingRedirects();
    else if (!TRANSPARENT_KEYWORDS.has(keyword)) throw new TooComplex(`the keyword "${keyword}"`);
    return "handled";
  }

  /** Redirections after `)`, `}`, `done` or `fi` apply to everything inside: record them as a command. */
  private parseTrailingRedirects(): void {
    const command = emptyCommand();
    for (;;) {
      this.skipBlanks();
      if (!this.parseRedirect(command)) break;
    }
    if (command.writes.length > 0 || command.reads.length > 0) this.out.push(command);
  }

  private parseCommand(record = true): SimpleCommand {
    const { src } = this;
    const command = emptyCommand();
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
      if (c === "(") throw new TooComplex("function definitions or arrays");
      if ((c === "<" || c === ">") && next === "(") {
        const start = this.i;
        this.i += 2;
        this.nest(() => this.parseSequence(")"));
        command.words.push(src.slice(start, this.i));
        command.literals.push(undefined);
        continue;
      }
      if (this.parseRedirect(command)) continue;
      const start = this.i;
      const word = this.parseWord();
      ASSIGNMENT.lastIndex = start;
      const assignment = name === undefined ? ASSIGNMENT.exec(src) : null;
      if (assignment) {
        if (src[this.i] === "(") throw new TooComplex("array assignments");
        command.assignments.push({ name: assignment[1]!, text: wordText(word) });
        if (assignment[2]) this.noteArithmetic(assignment[2]);
        if (!NUMERIC_VALUE.test(src.slice(ASSIGNMENT.lastIndex, this.i)))
          this.flow.chosen.add(assignment[1]!);
        continue;
      }
      if (name === undefined) {
        name = word;
        this.checkCommandName(word);
      }
      command.words.push(wordText(word));
      command.literals.push(word.expanded ? undefined : word.value);
    }
    this.noteVariables(command.words);
    const rebinding = REBINDING_OPTIONS[command.literals[0] ?? ""];
    if (rebinding && command.words.some((word) => rebinding.test(word)))
      throw new TooComplex(`\`${command.words[0]}\` makes a later command name run another program`);
    // A command of redirections alone (`$(< .env)`) still reads and writes.
    const redirects = command.writes.length > 0 || command.reads.length > 0;
    if (record && (command.words.length > 0 || command.assignments.length > 0 || redirects)) {
      this.out.push(command);
    }
    return command;
  }

  /** Records which variables a builtin sets (`read x`) or evaluates as arithmetic (`let x+1`). */
  private noteVariables(words: string[]): void {
    const [name, ...args] = words[0] === "builtin" || words[0] === "command" ? words.slice(1) : words;
    if (name === "let") for (const arg of args) this.noteArithmetic(arg);
    else if (name !== undefined && VARIABLE_SETTERS.has(name)) {
      for (const arg of args) {
        const variable = /^[A-Za-z_]\w*/.exec(arg);
        if (variable) this.flow.chosen.add(variable[0]);
      }
    }
  }

  private noteArithmetic(text: string): void {
    for (const match of withoutContinuations(text).matchAll(ARITHMETIC_NAME))
      this.flow.arithmetic.add(match[0]);
  }

  private checkCommandName(word: Word): void {
    if (word.expanded) throw new TooComplex(`the command name ${word.raw} is only known at run time`);
    if (word.pattern && !this.options.patterns) {
      throw new TooComplex(`the command name ${word.raw} is a glob or brace pattern`);
    }
    if (OPAQUE_COMMANDS.has(word.value))
      throw new TooComplex(`\`${word.value}\` runs a command built at run time`);
    // `ca\<newline>se` is the keyword `case` to bash; the keyword check above only saw the raw text.
    RESERVED.lastIndex = 0;
    const reserved = RESERVED.exec(word.value);
    if (reserved && reserved[0] === word.value && word.raw !== word.value)
      throw new TooComplex(`the reserved word ${word.value} spelled with quotes or a line continuation`);
  }

  /** Parses one redirection at the cursor into `command.writes`; false when there is none. */
  private parseRedirect(command: SimpleCommand): boolean {
    REDIRECT.lastIndex = this.i;
    const match = REDIRECT.exec(this.src);
    if (!match) return false;
    const op = match[2]!;
    this.i += match[0].length;
    this.skipBlanks();
    if (this.i >= this.src.length || METACHARS.includes(this.src[this.i]!)) {
      throw new TooComplex(`a redirection "${op}" without a target`);
    }
    const target = this.parseWord();
    if (op === "<<" || op === "<<-") {
      this.heredocs.push({
        delimiter: target.value,
        stripTabs: op === "<<-",
        expand: !target.quoted,
        depth: this.depth,
      });
      return true;
    }
    if (op === "<" || op === "<>") {
      // A target known only at run time is reported as written (`$F`, `*.env`): the caller must not
      // take it for a literal name, and asks or expands it.
      const literal = target.value.startsWith("~") && !target.tilde ? `./${target.value}` : target.value;
      command.reads.push(target.expanded || target.pattern ? target.raw : literal);
    }
    if (op === "<" || op === "<<<" || op === "<&") return true;
    if (op === ">&" && FD_COPY.test(target.value)) return true;
    if (target.expanded || target.pattern) {
      throw new TooComplex(`the redirection target ${target.raw} is only known at run time`);
    }
    if (HARMLESS_TARGETS.test(target.value)) return true;
    if (target.value.startsWith("~") && target.tilde && !/^~(\/|$)/.test(target.value)) {
      throw new TooComplex(`the redirection target ${target.raw} names another user's home`);
    }
    // A quoted `~` is a directory named "~", not home: keep it from being expanded later.
    command.writes.push(target.value.startsWith("~") && !target.tilde ? `./${target.value}` : target.value);
    return true;
  }

  private parseWord(): Word {
    const { src } = this;
    const start = this.i;
    const word = emptyWord();
    while (this.i < src.length) {
      const c = src[this.i]!;
      if (METACHARS.includes(c)) break;
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
        if (end < 0) throw new TooComplex("an unbalanced single quote");
        word.value += src.slice(this.i + 1, end);
        word.quoted = true;
        this.i = end + 1;
      } else if (c === '"') {
        this.i++;
        word.value += this.parseDoubleQuoted(word);
        word.quoted = true;
      } else if (c === "$") {
        word.value += this.parseDollar(word);
      } else if (c === "`") {
        word.value += this.parseBacktick(word);
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
      } else if (c === "$") value += this.parseDollar(word, true);
      else if (c === "`") value += this.parseBacktick(word);
      else {
        value += c;
        this.i++;
      }
    }
    throw new TooComplex("an unbalanced double quote");
  }

  /** Parses `$…` at the cursor: substitutions are split recursively; returns the source text. */
  /** `quotedContext`: inside double quotes or a here-document body, where `'` in `${…}` is no quote. */
  private parseDollar(word: Word, quotedContext = false): string {
    const { src } = this;
    const start = this.i;
    const next = src[this.i + 1];
    // Bash drops `\<newline>` before it looks at what follows `$` (also in double quotes and here-doc
    // bodies), so `"$\<newline>(cmd)"` runs cmd and `$\<newline>X` expands X.
    if (next === "\\" && src[this.i + 2] === "\n")
      throw new TooComplex("a line continuation right after `$`");
    if (next === "(" && src[this.i + 2] === "(") this.parseArithmetic();
    else if (next === "[") this.parseOldArithmetic();
    else if (next === "(") {
      this.i += 2;
      this.nest(() => this.parseSequence(")"));
    } else if (next === "{") {
      this.i += 2;
      this.nest(() => this.parseBraceParameter(quotedContext));
    } else if (next === "'") {
      this.i += 2;
      while (this.i < src.length && src[this.i] !== "'") this.i += src[this.i] === "\\" ? 2 : 1;
      if (this.i >= src.length) throw new TooComplex("an unbalanced $'…' string");
      this.i++;
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
   * `$(( … ))`. Bash falls back to a command substitution when the parentheses do not close as `))`,
   * so anything but a clean arithmetic expression is too complex; substitutions inside still run.
   */
  private parseArithmetic(): void {
    const { src } = this;
    const start = this.i;
    this.i += 3;
    let depth = 2;
    const scratch = emptyWord();
    while (this.i < src.length) {
      const c = src[this.i]!;
      if (depth === 1 && c !== ")") throw new TooComplex("a `$((` that is not arithmetic");
      if (c === "(") {
        depth++;
        this.i++;
      } else if (c === ")") {
        depth--;
        this.i++;
        if (depth === 0) {
          this.noteArithmetic(src.slice(start + 3, this.i - 2));
          return;
        }
      } else if (c === "$") this.parseDollar(scratch);
      else if (c === "`") this.parseBacktick(scratch);
      else this.i++;
    }
    throw new TooComplex("an unbalanced $((");
  }

  /** The obsolete `$[ … ]` arithmetic; substitutions inside still run. */
  private parseOldArithmetic(): void {
    const { src } = this;
    const start = this.i + 2;
    this.i = start;
    const scratch = emptyWord();
    while (this.i < src.length && src[this.i] !== "]") {
      const c = src[this.i];
      if (c === "$") this.parseDollar(scratch);
      else if (c === "`") this.parseBacktick(scratch);
      else this.i++;
    }
    if (this.i >= src.length) throw new TooComplex("an unbalanced $[");
    this.noteArithmetic(src.slice(start, this.i));
    this.i++;
  }

  /**
   * `${ … }` after the `${`: may nest quotes and substitutions (`${x:-$(cmd)}`). What follows the
   * parameter's name may be arithmetic (`${a[i]}`, `${s:i:n}`), and so is an indirect `${!x}`.
   */
  private parseBraceParameter(quotedContext: boolean): void {
    const { src } = this;
    const start = this.i;
    const scratch = emptyWord();
    while (this.i < src.length) {
      const c = src[this.i]!;
      if (c === "}") {
        const body = withoutContinuations(src.slice(start, this.i));
        // ${x@P} expands the value as a prompt string, which runs any $(…) the value holds.
        // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax in a message, not a template
        if (/@P$/.test(body)) throw new TooComplex("`${…@P}` runs command substitutions held in a value");
        const name = /^[#!]?[A-Za-z_]\w*/.exec(body)?.[0] ?? "";
        this.noteArithmetic(name.startsWith("!") ? body : body.slice(name.length));
        this.i++;
        return;
      }
      if (c === "\\") this.i += 2;
      else if (c === "'") {
        // Inside "…" bash treats some of these quotes as text: `"${x:-'}$(cmd)'}"` runs cmd.
        if (quotedContext)
          // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax in a message, not a template
          throw new TooComplex("a single quote inside `${…}` within double quotes or a here-document");
        const end = src.indexOf("'", this.i + 1);
        if (end < 0) throw new TooComplex("an unbalanced single quote");
        this.i = end + 1;
      } else if (c === '"') {
        this.i++;
        this.parseDoubleQuoted(scratch);
      } else if (c === "$") this.parseDollar(scratch);
      else if (c === "`") this.parseBacktick(scratch);
      else this.i++;
    }
    throw new TooComplex("an unbalanced ${");
  }

  /** A backtick substitution: its body, unescaped, is split as a command line of its own. */
  private parseBacktick(word: Word): string {
    const { src } = this;
    const start = this.i;
    this.i++;
    let body = "";
    while (this.i < src.length && src[this.i] !== "`") {
      const c = src[this.i]!;
      const escaped = src[this.i + 1];
      if (c === "\\" && escaped !== undefined && "`$\\".includes(escaped)) {
        body += escaped;
        this.i += 2;
      } else {
        body += c;
        this.i++;
      }
    }
    if (this.i >= src.length) throw new TooComplex("an unbalanced backtick");
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
      throw new TooComplex("a here-document whose body would start inside or after a nested command");
    for (const doc of this.heredocs) {
      const bodyStart = this.i;
      let bodyEnd = src.length;
      while (this.i < src.length) {
        const lineEnd = src.indexOf("\n", this.i) < 0 ? src.length : src.indexOf("\n", this.i);
        const line = src.slice(this.i, lineEnd);
        const atLineStart = this.i;
        this.i = Math.min(lineEnd + 1, src.length);
        // Bash joins `\<newline>` lines of an expanding body before it compares them with the delimiter,
        // so `E\<newline>OF` ends it and the lines after run as commands.
        if (doc.expand && /(^|[^\\])(\\\\)*\\$/.test(line))
          throw new TooComplex("a line continuation inside a here-document");
        if ((doc.stripTabs ? line.replace(/^\t+/, "") : line) === doc.delimiter) {
          bodyEnd = atLineStart;
          break;
        }
      }
      if (doc.expand) this.child(src.slice(bodyStart, bodyEnd)).scanExpansions();
    }
    this.heredocs = [];
  }

  /** Finds the substitutions in text that is otherwise data (an unquoted here-document body). */
  private scanExpansions(): void {
    const { src } = this;
    const scratch = emptyWord();
    while (this.i < src.length) {
      const c = src[this.i];
      if (c === "\\") this.i += 2;
      else if (c === "$") this.parseDollar(scratch, true);
      else if (c === "`") this.parseBacktick(scratch);
      else this.i++;
    }
  }
}

/** Splits a bash command line into its simple commands, or says why it cannot be judged safely. */
export function splitBash(command: string, options: SplitOptions = {}): ShellSplit {
  const commands: SimpleCommand[] = [];
  try {
    const parser = new BashParser(command, commands, 0, options);
    parser.parseAll();
    const { chosen, arithmetic } = parser.flow;
    const hidden = [...arithmetic].find((name) => chosen.has(name));
    if (hidden !== undefined) {
      throw new TooComplex(
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
