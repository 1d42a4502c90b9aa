// biome-ignore-all lint/suspicious/noTemplateCurlyInString: bash parameter expansions, not templates
/**
 * Command lines for the differential fuzzer: a small bash grammar whose leaves are the fragments that
 * have hidden commands from splitters before (odd quoting, substitutions in odd places, here-documents,
 * variable-name arguments, descriptor games), plus byte-level mutations that push the result into the
 * corners of bash's grammar. Only the stub programs `pa`, `pb` and `pc` exist on the oracle's PATH.
 */

/** A seeded PRNG (mulberry32): the same seed gives the same command lines on every machine. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

export const STUBS = ["pa", "pb", "pc"] as const;

/** A value that runs `pa` when bash evaluates it as an arithmetic expression or array subscript. */
const HIDDEN = "'a[$(pa h)]'";

const PLAIN_WORDS = ["x", "y", "-n", "--", "f1", "d/f3", "1", "0", "a=b", "=", "%s", "-v", "-a", "i"];
const QUOTED_WORDS = [
  "'q w'",
  '"q w"',
  "$'a\\tb'",
  "$'\\''",
  "$'\\x41'",
  '$"msg"',
  "a\\ b",
  "\\$x",
  "''",
  '""',
  "'$(pa q)'",
  '"\\$(pa q)"',
  "\\`pa q\\`",
  "'#'",
  "x#y",
  "\\#",
];
const EXPANDING_WORDS = [
  "$x",
  "${x}",
  '"$x"',
  "${x:-d}",
  "${x:-$(pa s)}",
  '"${x:-$(pa s)}"',
  "${#x}",
  "$((1+2))",
  "$((i+1))",
  "$[1+1]",
  "$(pa s)",
  '"$(pb s)"',
  "`pa s`",
  '"`pb s`"',
  "$(pa $(pb n))",
  "<(pa p)",
  ">(pb p)",
  "*",
  "f?",
  "{x,y}",
  "~",
  "$1",
  "$@",
  '"$@"',
  "$?",
  "${v}",
  "${a[0]}",
  "${a[@]}",
  "${!x}",
  "$'\\'$(pa z)'",
  "\"${x:-'}$(pa z)'}\"",
  "${x/$(pa r)/y}",
  '"$(pa "q")"',
  "$(pa ')')",
  "$(case x in x) pa c;; esac)",
  "$(pa # c )\n)",
  "$(( $(pa m) ))",
  "\"a\"'b'$'c'",
  '${x:-"$(pa s)"}',
  "${x//a/$(pa s)}",
  "${#a[@]}",
  "${a[@]:1}",
  "${!a[@]}",
  '$"$(pa s)"',
  '"`echo \\`pa s\\``"',
  "`echo \\`pa s\\``",
  "p\\\na",
  "$\\\n(pa s)",
  "$((i))",
  "$((a[i]))",
  "$(( x ))",
  "${x:i:1}",
  "$(pa <<< $(pb n))",
  "$(pa<<E\n$(pb n)\nE\n)",
  "{a..c}",
  "a{,b}",
  "[a]",
  "$'\\x27'",
  "$'a\\'b'",
];
const REDIRECTS = [
  "> f1",
  ">> f2",
  "2> f2",
  "< f1",
  "2>&1",
  ">&2",
  "> /dev/null",
  ">/dev/stdout",
  ">/dev/stderr",
  ">/dev/fd/1",
  ">/dev/fd/2",
  "2>/dev/fd/1",
  ">/proc/self/fd/1",
  "1<f1",
  "1<../out",
  "2<../out",
  "1<>f2",
  "3>f2",
  "3<../out",
  ">&3",
  "1>&3",
  "3>&1",
  "<<< x",
  '<<< "$(pa w)"',
  "<&-",
  ">&-",
  "{fd}>f2",
  "&> f2",
  "> d/n",
  ">&3-",
  "1>&2-",
  "3>&1",
  "0<&-",
  "2>&1 >/dev/stdout",
  "> >(pb rs)",
  "< <(pb rs)",
  "<> f2",
  ">| f2",
  "&>> f2",
];
const VARIABLE_ATTACKS = [
  `printf -v ${HIDDEN} x`,
  `read ${HIDDEN} <<< x`,
  `read -a ${HIDDEN} <<< x`,
  `test -v ${HIDDEN}`,
  `[ -v ${HIDDEN} ]`,
  `[[ -v ${HIDDEN} ]]`,
  `declare ${HIDDEN}=1`,
  `declare -n r=${HIDDEN}; echo $r`,
  `declare -i n; n=${HIDDEN}`,
  `typeset ${HIDDEN}`,
  `export ${HIDDEN}`,
  `readonly ${HIDDEN}`,
  `unset ${HIDDEN}`,
  `unset -v ${HIDDEN}`,
  `mapfile ${HIDDEN} < f1`,
  `mapfile -C pa -c 1 m < f1`,
  `let ${HIDDEN}`,
  `let 'x=a[$(pa h)]'`,
  `v=${HIDDEN}; echo $((v))`,
  `v=${HIDDEN}; (( v ))`,
  `v=${HIDDEN}; [[ v -eq 1 ]]`,
  `[[ ${HIDDEN} -eq 1 ]]`,
  `v=${HIDDEN}; echo \${x:v}`,
  `v=${HIDDEN}; echo \${a[v]}`,
  `v=${HIDDEN}; for ((i=v;i<1;i++)); do :; done`,
  `echo ${HIDDEN}; echo $(( $_ ))`,
  `read <<< ${HIDDEN}; echo $((REPLY))`,
  `set -- ${HIDDEN}; echo $(( $1 ))`,
  `f() { echo $(( $1 )); }; f ${HIDDEN}`,
  `getopts a ${HIDDEN}`,
  `wait -p ${HIDDEN}`,
  `printf -v v %s ${HIDDEN}; echo $((v))`,
  `declare -a arr=(${HIDDEN}); echo $((arr))`,
  `arr=(${HIDDEN}); echo $((arr[0]))`,
  `x=${HIDDEN} declare -p x`,
  `local ${HIDDEN} 2>/dev/null`,
  `eval pa e`,
  `trap 'pa t' EXIT`,
  `alias z='pa al'`,
  `command pa c`,
  `exec pa e`,
  `builtin echo b`,
  `. /dev/null`,
  `source <(echo pa so)`,
];
const HEREDOCS = [
  "cat <<E\n$(pa hd)\nE",
  "pa <<'E'\n$(pb hd)\nE",
  'pa <<"E"\n`pb hd`\nE',
  "pa <<-E\n\t$(pb hd)\n\tE",
  "pa <<E\n\\$(pb hd)\nE",
  "pa <<$(pb dl)\nx\n$(pb dl)",
  "pa <<$x\n$(pb hd)\n$x",
  "pa <<${x}\nx\n${x}",
  "pa <<E$'x'\n$(pb hd)\nE$'x'\nEx",
  "pa <<E\nx\\\nE\npb after",
  "pa <<E; pb\n$(pc hd)\nE",
  "pa <<E $(pb\nx\nE\n)",
  "pa <<E | pb\n${x:-$(pc hd)}\nE",
  "pa <<'E'\nE\npb tail",
  "pa <<\\E\n$(pb hd)\nE",
  "pa << E\n$(pb hd)\nE",
  "pa <<E\n`pb hd`\nE",
  "pa <<E\n$'$(pb hd)'\nE",
  'pa <<E\n"$(pb hd)"\nE',
  "pa <<E\n${x:-'}$(pb hd)'}\nE",
];
const NASTY_CHARS = [
  "'",
  '"',
  "`",
  "$",
  "(",
  ")",
  "{",
  "}",
  "[",
  "]",
  ";",
  "&",
  "|",
  "<",
  ">",
  "#",
  "\n",
  "\\",
  " ",
  "$(",
  "$'",
  '$"',
  "${",
  "<(",
  "((",
  "))",
  "\\\n",
  ";;",
  "pa",
  "=",
  "~",
  "!",
  "*",
];

export class Grammar {
  constructor(private readonly rng: Random) {}

  word(depth: number): string {
    const r = this.rng;
    const roll = r.next();
    if (roll < 0.35) return r.pick(PLAIN_WORDS);
    if (roll < 0.55) return r.pick(QUOTED_WORDS);
    if (roll < 0.85 || depth > 2) return r.pick(EXPANDING_WORDS);
    return r
      .pick(["$(", "`", "<(", '"$('])
      .concat(this.list(depth + 1))
      .concat(r.pick([")", ")", ")", ")"]))
      .replace(/^`(.*)\)$/s, "`$1`")
      .replace(/^"\$\((.*)\)$/s, '"$($1)"');
  }

  simple(depth: number): string {
    const r = this.rng;
    const parts: string[] = [];
    if (r.chance(0.15)) parts.push(r.pick(["x=1", "x=$(pa as)", "v='y z'", "i=0", "x=", "a[0]=pa", "IFS=:"]));
    const name = r.chance(0.8) ? r.pick(STUBS) : r.pick(["echo", "true", ":", "printf", "[", "test", "read"]);
    parts.push(name);
    const n = r.int(4);
    for (let k = 0; k < n; k++) parts.push(this.word(depth));
    if (name === "[") parts.push("]");
    if (r.chance(0.3)) parts.push(r.pick(REDIRECTS));
    if (r.chance(0.1)) parts.splice(r.int(parts.length), 0, r.pick(REDIRECTS));
    return parts.join(" ");
  }

  command(depth: number): string {
    const r = this.rng;
    if (depth > 3) return this.simple(depth);
    const roll = r.next();
    const body = () => this.list(depth + 1);
    if (roll < 0.45) return this.simple(depth);
    if (roll < 0.55) return r.pick(VARIABLE_ATTACKS);
    if (roll < 0.6) return r.pick(HEREDOCS);
    const compounds = [
      () => `( ${body()} )`,
      () => `{ ${body()}; }`,
      () => `if ${body()}; then ${body()}; else ${body()}; fi`,
      () => `while pb w; do ${body()}; done`,
      () => `until pa u; do ${body()}; done`,
      () => `for i in ${this.word(depth)} y; do ${body()}; done`,
      () => `for ((i=0; i<2; i++)); do ${body()}; done`,
      () =>
        `case ${this.word(depth)} in x|${this.word(depth)}) ${body()};; (*) ${body()};& y) ${body()};;& esac`,
      () => `f() { ${body()}; }; f ${this.word(depth)}`,
      () => `function g { ${body()}; }; g`,
      () => `h() ( ${body()} ); h`,
      () => `[[ ${this.word(depth)} == ${this.word(depth)} && -n ${this.word(depth)} ]]`,
      () => `[[ x =~ ${r.pick(["a|b", "(x)", "^x$", "$(pa re)", "'('"])} ]]`,
      () => `(( ${r.pick(["i++", "i = 2 + $(pa ar)", "a[1]=2", "x", "i<2"])} ))`,
      () => `select s in a b; do ${body()}; break; done`,
      () => `coproc ${r.pick(["", "c "])}${r.pick(["pa co", "{ pb co; }"])}`,
      () => `time ( ${body()} )`,
      () => `time -p ${this.simple(depth)}`,
      () => `while read -r l; do ${body()}; done < <(${body()})`,
      () => `x=$(${body()})`,
      () => `arr=(${this.word(depth)} y); pa "\${arr[@]}"`,
      () => `! ${this.simple(depth)}`,
      () => `exec ${r.pick(REDIRECTS)}`,
      () => `time ${r.pick(["--", "-p --", "-p"])} ${this.simple(depth)}`,
      () => `declare -a arr=(${this.word(depth)} 1); local y=${this.word(depth)}`,
      () => `[[ ${this.word(depth)} =~ ${r.pick(["x", "'a|b'", "^$x"])} || ${this.word(depth)} < b ]]`,
      () => `i=${r.pick(["0", "1", "$((2))"])}; a[i]=${this.word(depth)}; echo $((i + 1)) \${a[i]}`,
      () => `case ${this.word(depth)} in\n  x) ${body()} ;;\n  *) ${body()}\nesac`,
      () => `f() {\n ${body()}\n} ${r.pick(REDIRECTS)}; f`,
      () => `{ ${body()}; } ${r.pick(REDIRECTS)} | pb`,
    ];
    let text = r.pick(compounds)();
    if (r.chance(0.2)) text += ` ${r.pick(REDIRECTS)}`;
    return text;
  }

  list(depth = 0): string {
    const r = this.rng;
    let text = this.command(depth);
    const n = r.int(depth === 0 ? 4 : 2);
    for (let k = 0; k < n; k++) {
      text += r.pick([" ; ", " && ", " || ", " | ", " |& ", " & ", "\n", "; ", " #c\n"]);
      text += this.command(depth);
    }
    if (r.chance(0.1)) text += r.pick([" # tail", " & ", ";", "\n"]);
    return text;
  }

  /** Inserts, deletes or duplicates a few bytes, preferring the characters bash's grammar turns on. */
  mutate(text: string): string {
    const r = this.rng;
    let out = text;
    const edits = 1 + r.int(3);
    for (let k = 0; k < edits; k++) {
      const at = r.int(out.length + 1);
      const roll = r.next();
      if (roll < 0.55) out = out.slice(0, at) + r.pick(NASTY_CHARS) + out.slice(at);
      else if (roll < 0.8) out = out.slice(0, at) + out.slice(at + 1 + r.int(3));
      else {
        const from = r.int(out.length);
        out = out.slice(0, at) + out.slice(from, from + 1 + r.int(8)) + out.slice(at);
      }
    }
    return out;
  }

  line(): string {
    const text = this.list();
    return this.rng.chance(0.4) ? this.mutate(text) : text;
  }
}
