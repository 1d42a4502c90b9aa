import {
  emptyCommand,
  MAX_SHELL_NESTING,
  type ShellSplit,
  type SimpleCommand,
  type SplitOptions,
} from "./shell-split.js";

/**
 * Splits a PowerShell command line into its commands, like shell-split.ts does for bash: statements
 * (`;`, newlines), pipelines (`|`), chains (`&&`, `||`) and everything that runs nested — `$( … )`,
 * `@( … )`, `( … )` and script blocks `{ … }` (a block handed to ForEach-Object runs too). A command
 * whose name is a variable, a type member call, or Invoke-Expression cannot be judged, so the split fails.
 */

class TooComplex extends Error {}

/** Commands that run a string as code. */
const OPAQUE_COMMANDS = new Set(["invoke-expression", "iex"]);
/** Redirection targets that write no file. */
const HARMLESS_TARGET = /^\$null$/i;
const REDIRECT = /([1-6*])?(>>|>)(&[12])?/y;
const WORD_END = " \t\r\n;|&(){}<>";
const PLAIN_WORD = /^[\w@%+=:,./*?\\~^!-]+$/;

function quote(value: string): string {
  return PLAIN_WORD.test(value) ? value : `'${value.replace(/'/g, "''")}'`;
}

class PowerShellParser {
  private i = 0;
  private depth = 0;

  constructor(
    private readonly src: string,
    private out: SimpleCommand[],
    private readonly options: SplitOptions,
  ) {}

  private nest(close: ")" | "}"): void {
    if (++this.depth > MAX_SHELL_NESTING)
      throw new TooComplex(`nesting deeper than ${MAX_SHELL_NESTING} levels`);
    // Rule mode reports only the outer command (see SplitOptions.patterns).
    const out = this.out;
    if (this.options.patterns) this.out = [];
    this.parseSequence(close);
    this.out = out;
    this.depth--;
  }

  private skipBlanks(): void {
    while (this.i < this.src.length) {
      const c = this.src[this.i];
      if (c === " " || c === "\t" || c === "\r") this.i++;
      else if (c === "`" && this.src[this.i + 1] === "\n") this.i += 2;
      else if (c === "<" && this.src[this.i + 1] === "#") {
        const end = this.src.indexOf("#>", this.i + 2);
        if (end < 0) throw new TooComplex("an unclosed <# comment");
        this.i = end + 2;
      } else break;
    }
  }

  parseSequence(close: ")" | "}" | undefined): void {
    const { src } = this;
    for (;;) {
      this.skipBlanks();
      if (this.i >= src.length) {
        if (close) throw new TooComplex(`unbalanced "${close === ")" ? "(" : "{"}"`);
        return;
      }
      const c = src[this.i]!;
      if (c === "#") {
        while (this.i < src.length && src[this.i] !== "\n") this.i++;
      } else if (c === "\n" || c === ";" || c === "|") this.i++;
      else if (c === "&" && src[this.i + 1] === "&") this.i += 2;
      else if (c === ")" || c === "}") {
        if (c !== close) throw new TooComplex(`unbalanced "${c}"`);
        this.i++;
        return;
      } else if (c === "(" || c === "{") {
        this.i++;
        this.nest(c === "(" ? ")" : "}");
      } else this.parseCommand();
    }
  }

  private parseCommand(): void {
    const { src } = this;
    const command = emptyCommand();
    for (;;) {
      this.skipBlanks();
      if (this.i >= src.length) break;
      const c = src[this.i]!;
      if (c === "\n" || c === ";" || c === "|" || c === ")" || c === "}" || c === "#") break;
      if (c === "&" && (src[this.i + 1] === "&" || command.words.length > 0)) break;
      if (c === "&") {
        // The call operator: what follows is the command.
        this.i++;
        continue;
      }
      if (c === "<") throw new TooComplex('"<" (reserved in PowerShell)');
      if (this.parseRedirect(command)) continue;
      if (c === "(" || c === "{") {
        const start = this.i;
        this.i++;
        this.nest(c === "(" ? ")" : "}");
        if (command.words.length === 0) throw new TooComplex("a command name computed by an expression");
        command.words.push(src.slice(start, this.i));
        command.literals.push(undefined);
        continue;
      }
      const start = this.i;
      const { value, dynamic } = this.parseWord();
      if (this.i === start) throw new TooComplex(`an unexpected "${c}"`);
      if (command.words.length === 0) {
        if (dynamic || /^(\$|\[|\.$)/.test(value) || (value.includes("*") && !this.options.patterns)) {
          throw new TooComplex(
            `the command ${src.slice(start, this.i)} is an expression or only known at run time`,
          );
        }
        if (OPAQUE_COMMANDS.has(value.toLowerCase())) throw new TooComplex(`${value} runs a string as code`);
      }
      command.words.push(dynamic ? src.slice(start, this.i) : quote(value));
      command.literals.push(dynamic ? undefined : value);
    }
    if (command.words.length > 0 || command.writes.length > 0) this.out.push(command);
  }

  private parseRedirect(command: SimpleCommand): boolean {
    REDIRECT.lastIndex = this.i;
    const match = REDIRECT.exec(this.src);
    if (!match) return false;
    this.i += match[0].length;
    if (match[3]) return true;
    this.skipBlanks();
    const start = this.i;
    const { value, dynamic } = this.parseWord();
    const raw = this.src.slice(start, this.i);
    if (raw === "") throw new TooComplex("a redirection without a target");
    if (HARMLESS_TARGET.test(raw)) return true;
    if (dynamic) throw new TooComplex(`the redirection target ${raw} is only known at run time`);
    command.writes.push(value);
    return true;
  }

  /** One argument; `$…` makes it dynamic, `$( … )` inside it is split as well. */
  private parseWord(): { value: string; dynamic: boolean } {
    const { src } = this;
    let value = "";
    let dynamic = false;
    while (this.i < src.length && !WORD_END.includes(src[this.i]!)) {
      const c = src[this.i]!;
      if (c === "`") {
        value += src[this.i + 1] ?? "";
        this.i += 2;
      } else if (c === "'") {
        value += this.parseSingleQuoted();
      } else if (c === '"') {
        const part = this.parseDoubleQuoted();
        value += part.value;
        dynamic ||= part.dynamic;
      } else if (c === "@" && /^["'][\r\n]/.test(src.slice(this.i + 1, this.i + 3))) {
        // Kept as written: its text is data, but the only faithful rendering of it is the source.
        this.parseHereString();
        dynamic = true;
      } else if (c === "$" || c === "@") {
        if (this.parseVariable()) dynamic = true;
        else value += c;
      } else {
        value += c;
        this.i++;
      }
    }
    return { value, dynamic };
  }

  /** `$(…)`, `@(…)`, `${…}`, `$name`: true when it expanded something. */
  private parseVariable(): boolean {
    const { src } = this;
    const next = src[this.i + 1];
    if (next === "(" || (src[this.i] === "@" && next === "{")) {
      this.i += 2;
      this.nest(next === "(" ? ")" : "}");
      return true;
    }
    if (src[this.i] === "$" && next === "{") {
      const end = src.indexOf("}", this.i);
      if (end < 0) throw new TooComplex("an unbalanced ${");
      this.i = end + 1;
      return true;
    }
    if (src[this.i] === "$" && next !== undefined && /[\w:?^$]/.test(next)) {
      this.i += 2;
      while (this.i < src.length && /[\w:]/.test(src[this.i]!)) this.i++;
      return true;
    }
    this.i++;
    return false;
  }

  /** `@" … "@` / `@' … '@`: data up to a line starting with the closing quote; `$( … )` in `@"` still runs. */
  private parseHereString(): void {
    const { src } = this;
    const quote = src[this.i + 1]!;
    const end = src.indexOf(`\n${quote}@`, this.i + 2);
    if (end < 0) throw new TooComplex("an unclosed here-string");
    const body = src.slice(this.i + 2, end);
    this.i = end + 3;
    if (quote === "'") return;
    const inner = new PowerShellParser(body, this.options.patterns ? [] : this.out, this.options);
    inner.depth = this.depth + 1;
    inner.scanExpansions();
  }

  /** Splits the `$( … )` inside expanding text. */
  private scanExpansions(): void {
    while (this.i < this.src.length) {
      const c = this.src[this.i];
      if (c === "`") this.i += 2;
      else if (c === "$") this.parseVariable();
      else this.i++;
    }
  }

  private parseSingleQuoted(): string {
    const { src } = this;
    let value = "";
    this.i++;
    while (this.i < src.length) {
      if (src[this.i] === "'") {
        if (src[this.i + 1] !== "'") {
          this.i++;
          return value;
        }
        this.i++;
      }
      value += src[this.i];
      this.i++;
    }
    throw new TooComplex("an unbalanced single quote");
  }

  private parseDoubleQuoted(): { value: string; dynamic: boolean } {
    const { src } = this;
    let value = "";
    let dynamic = false;
    this.i++;
    while (this.i < src.length) {
      const c = src[this.i]!;
      if (c === '"') {
        if (src[this.i + 1] !== '"') {
          this.i++;
          return { value, dynamic };
        }
        this.i++;
      }
      if (c === "`") {
        value += src[this.i + 1] ?? "";
        this.i += 2;
      } else if (c === "$") dynamic = this.parseVariable() || dynamic;
      else {
        value += src[this.i];
        this.i++;
      }
    }
    throw new TooComplex("an unbalanced double quote");
  }
}

/** Splits a PowerShell command line into its commands, or says why it cannot be judged safely. */
export function splitPowerShell(command: string, options: SplitOptions = {}): ShellSplit {
  const commands: SimpleCommand[] = [];
  try {
    new PowerShellParser(command, commands, options).parseSequence(undefined);
  } catch (error) {
    if (error instanceof TooComplex) return { ok: false, reason: error.message };
    throw error;
  }
  return { ok: true, commands };
}
