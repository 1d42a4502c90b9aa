/**
 * Where bash evaluates the TEXT of a variable or an argument as code. An arithmetic context (`$((x))`,
 * `(( ))`, `let`, `[[ x -eq y ]]`, `${s:x}`, an array subscript) evaluates a variable's value as an
 * expression, and an array subscript in that value runs command substitutions: `x='a[$(rm y)]';
 * echo $((x))` runs `rm y`. Builtins that take a variable NAME (`printf -v`, `read`, `declare`, `test
 * -v`, `unset`, …) evaluate a subscript written in the name: `printf -v 'a[$(rm y)]' x` runs `rm y`.
 * The splitter refuses both unless it can see that no text of the line's choosing reaches them.
 */

/** Tracks which variables the line gives text of its choosing and which it evaluates as arithmetic. */
export interface VariableFlow {
  /** Variables this line sets to something other than a plain number. */
  chosen: Set<string>;
  /** Names referenced where bash evaluates arithmetic. */
  arithmetic: Set<string>;
}

/**
 * Variables bash sets from text the line chooses, without an assignment in sight: `$_` (the last word of
 * the previous command), `read`'s and `select`'s REPLY, `mapfile`'s MAPFILE, `[[ =~ ]]`'s BASH_REMATCH,
 * getopts' OPTARG, and the directories cd was given.
 */
const IMPLICITLY_CHOSEN = [
  "_",
  "REPLY",
  "MAPFILE",
  "BASH_REMATCH",
  "OPTARG",
  "BASH_ARGV",
  "BASH_COMMAND",
  "FUNCNAME",
  "PWD",
  "OLDPWD",
  "DIRSTACK",
];

/** Variables that, once assigned, make a later command name run something else (hash table, aliases). */
const COMMAND_TABLES = new Set(["BASH_ALIASES", "BASH_CMDS"]);

/** Lower-case variables bash itself reads (`histchars`, `auto_resume`) or that programs read (`*_proxy`, `npm_*`). */
const READ_BY_SOMEONE = /^(histchars|auto_resume|npm_.*|.*proxy.*)$/;

/**
 * A variable only this shell sees: lower case (the environment's conventions and bash's own variables —
 * PATH, IFS, BASH_ENV, … — are upper case) and not one bash or common programs read.
 */
export function isShellLocal(name: string): boolean {
  return /^[a-z_][a-z0-9_]*$/.test(name) && !READ_BY_SOMEONE.test(name);
}

/** Assignments inside arithmetic: `x = …`, `x += …`, `a[i] <<= …` (not `==`, `<=`, `!=`). */
const ARITHMETIC_ASSIGNMENT = /([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*(?:[-+*/%&^|]|<<|>>)?=(?!=)/g;
/** Increments and decrements: `i++`, `--i`. */
const ARITHMETIC_STEP = /([A-Za-z_]\w*)\s*(?:\+\+|--)|(?:\+\+|--)\s*([A-Za-z_]\w*)/g;

/** Identifiers in arithmetic text; not hex digits (`0xff`) or digits of a base (`16#ff`). */
const ARITHMETIC_NAME = /(?<![\w#])[A-Za-z_]\w*/g;
/** Positional parameters (`$1`, `${2}`, `$@`, `$*`): chosen by `set --` or a function's caller. */
const POSITIONAL = /\$(\{?[0-9@*])/;
/**
 * Text bash may evaluate as arithmetic without running anything hidden in the text itself: no quoting,
 * and no substitution (whose output, text of the line's choosing, would be evaluated in turn).
 */
const PLAIN_ARITHMETIC =
  /^[\w\s+\-*/%<>=!&|^~?:(),.#[\]{}@]*(\$(?![('"`[])[\w\s+\-*/%<>=!&|^~?:(),.#[\]{}@]*)*$/;
/**
 * A variable name as a builtin argument: an identifier, optionally with a subscript that holds no
 * expansion or quoting (its identifiers are then arithmetic, checked like any other).
 */
const PLAIN_NAME = /^([A-Za-z_]\w*)(\[([^$`'"\\[\]]*)\])?$/;

/** Why text is not arithmetic the splitter can follow, or undefined when it is. */
function arithmeticProblem(text: string): string | undefined {
  if (POSITIONAL.test(text))
    return "arithmetic on a positional parameter, which a caller or `set --` chooses";
  if (!PLAIN_ARITHMETIC.test(text)) return "quoting, escapes or a substitution inside arithmetic";
  return undefined;
}

export class VariableTracker {
  readonly flow: VariableFlow = { chosen: new Set(IMPLICITLY_CHOSEN), arithmetic: new Set() };

  /**
   * Notes the names in arithmetic text; refuses text whose evaluation could run a command the split
   * does not see.
   */
  arithmetic(text: string, refuse: (reason: string) => never): void {
    const clean = text.replace(/\\\n/g, "");
    const problem = arithmeticProblem(clean);
    if (problem) refuse(problem);
    for (const match of clean.matchAll(ARITHMETIC_NAME)) this.flow.arithmetic.add(match[0]);
    // `(( PATH = 0 ))` would change what later command names run, with no rule to see it.
    for (const match of [...clean.matchAll(ARITHMETIC_ASSIGNMENT), ...clean.matchAll(ARITHMETIC_STEP)])
      this.setUnseen((match[1] ?? match[2])!, true, refuse);
  }

  /**
   * A variable set where no rule sees it (a loop variable, arithmetic, `read NAME`): only a shell-local
   * name, since `for PATH in /tmp/x; do ls; done` would run another ls.
   */
  setUnseen(name: string, numeric: boolean, refuse: (reason: string) => never): void {
    if (!isShellLocal(name))
      refuse(`the line sets ${name}, which bash or the programs it runs read, where no rule sees it`);
    this.set(name, numeric, refuse);
  }

  /** A variable the line gives a value; `numeric` when that value can only be a number. */
  set(name: string, numeric: boolean, refuse: (reason: string) => never): void {
    if (COMMAND_TABLES.has(name)) refuse(`assigning ${name} changes which program a command name runs`);
    if (!numeric) this.flow.chosen.add(name);
  }

  /**
   * A variable name given to a builtin (`read NAME`, `printf -v NAME`, `test -v NAME`): a plain
   * identifier, with a subscript only when that subscript holds no expansion or quoting.
   */
  name(literal: string | undefined, refuse: (reason: string) => never, setsIt = true): void {
    const match = literal === undefined ? null : PLAIN_NAME.exec(literal);
    if (!match) {
      refuse(
        `the variable name ${literal ?? "(only known at run time)"} given to a builtin is evaluated by bash`,
      );
    }
    if (match[3] !== undefined) this.arithmetic(match[3], refuse);
    if (setsIt) this.setUnseen(match[1]!, false, refuse);
  }

  /** The first variable that is both chosen by the line and evaluated as arithmetic, if any. */
  hidden(): string | undefined {
    return [...this.flow.arithmetic].find((name) => this.flow.chosen.has(name));
  }
}

/** Options of `read` that take an argument (`-a` takes a variable name). */
const READ_ARGUMENT_OPTIONS = "adinNptu";
/** Options of `mapfile`/`readarray` that take an argument (`-C` runs its argument as a command). */
const MAPFILE_ARGUMENT_OPTIONS = "dnOsuCc";
/** Builtins that declare variables: `declare [-options] name[=value] …`. */
const DECLARERS = new Set(["declare", "typeset", "local", "export", "readonly"]);
/** Attributes after which bash evaluates a variable's later values as code (integer) or as a name (nameref). */
const EVALUATING_ATTRIBUTES = /^[-+]\w*[in]/;
/** A `name=value` or `name+=value` word of a declaring builtin, as written in the source. */
const DECLARED = /^([A-Za-z_]\w*)(\[[^\]]*\])?(\+?=)?/;

/** A builtin's argument: its literal value (undefined when expanded) and its text as written. */
export interface Argument {
  literal: string | undefined;
  raw: string;
  /** An array value the splitter parsed (`declare -a x=(1 2)`). */
  array?: boolean;
}

/**
 * Checks the variable-name arguments of a builtin that takes them, and records what it sets. `name`
 * is the builtin (after `builtin`/`command`); unknown commands are left alone.
 */
export function checkVariableArguments(
  name: string,
  args: readonly Argument[],
  vars: VariableTracker,
  refuse: (reason: string) => never,
): void {
  const options = (letters: string, each: (option: string, value: Argument | undefined) => void) => {
    let p = 0;
    for (; p < args.length; p++) {
      const word = args[p]!.literal;
      if (word === "--") return p + 1;
      if (word === undefined || !/^-./.test(word)) break;
      for (let k = 1; k < word.length; k++) {
        if (letters.includes(word[k]!)) {
          const inline = word.slice(k + 1);
          const value = inline !== "" ? { literal: inline, raw: inline } : args[++p];
          each(word[k]!, value);
          break;
        }
        each(word[k]!, undefined);
      }
    }
    return p;
  };
  const operands = (from: number) => args.slice(from);
  switch (name) {
    case "read": {
      const start = options(READ_ARGUMENT_OPTIONS, (option, value) => {
        if (option === "a") vars.name(value?.literal, refuse);
      });
      for (const arg of operands(start)) vars.name(arg.literal, refuse);
      if (operands(start).length === 0) vars.set("REPLY", false, refuse);
      return;
    }
    case "mapfile":
    case "readarray": {
      const start = options(MAPFILE_ARGUMENT_OPTIONS, (option) => {
        if (option === "C") refuse(`\`${name} -C\` runs its callback as a command`);
      });
      for (const arg of operands(start)) vars.name(arg.literal, refuse);
      return;
    }
    case "printf":
      options("v", (option, value) => {
        if (option === "v") vars.name(value?.literal, refuse);
      });
      return;
    case "getopts":
      if (args[1]) vars.name(args[1].literal, refuse);
      vars.set("OPTARG", false, refuse);
      return;
    case "wait":
      options("p", (option, value) => {
        if (option === "p") vars.name(value?.literal, refuse);
      });
      return;
    case "unset": {
      const start = options("", () => {});
      for (const arg of operands(start)) vars.name(arg.literal, refuse, false);
      return;
    }
    case "test":
    case "[":
      for (let p = 0; p < args.length; p++) {
        if (args[p]!.literal === "-v" || args[p]!.literal === "-R")
          vars.name(args[p + 1]?.literal, refuse, false);
      }
      return;
    case "let":
      for (const arg of args) {
        if (arg.literal === undefined) vars.arithmetic(arg.raw, refuse);
        else vars.arithmetic(arg.literal, refuse);
      }
      return;
  }
  if (!DECLARERS.has(name)) return;
  for (const arg of args) {
    const text = arg.literal ?? arg.raw;
    if (/^[-+]/.test(text)) {
      if (arg.literal === undefined) refuse(`an option of \`${name}\` that is only known at run time`);
      if (name !== "export" && EVALUATING_ATTRIBUTES.test(text))
        refuse(`\`${name} ${text}\` makes bash evaluate the variable's values as code or names`);
      continue;
    }
    // The name part must be plain source text; the value may hold expansions (`local x="$1"`).
    const declared = DECLARED.exec(text);
    if (!declared || (arg.literal === undefined && !DECLARED.test(arg.raw))) {
      refuse(`the variable name in \`${name} ${text}\` is evaluated by bash`);
    }
    vars.name(declared[1]! + (declared[2] ?? ""), refuse, false);
    const value = text.slice(declared[0].length);
    if (declared[3] && value.startsWith("(") && !arg.array)
      refuse(`an array value given to \`${name}\` as text`);
    // Without a value (`local i`) the variable keeps what it had; only a value can be of the line's choosing.
    vars.set(declared[1]!, declared[3] === undefined || /^-?\d*$/.test(value), refuse);
  }
}
