/**
 * Real bash as the oracle for the splitter. A command line runs in a scratch workspace with a PATH that
 * holds only stub programs, each of which appends its argv to a log; planted files show every write.
 * The splitter is unsound on a line it accepted when bash ran a stub it did not report (with those
 * arguments), or changed a file that is not one of its reported redirect targets.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import type { ShellSplit, SimpleCommand } from "../../../src/permissions/shell-split.js";
import { locateExecutable } from "../../../src/process/shells.js";
import { STUBS } from "./grammar.js";

/** Planted files (relative to the workspace) and their content; `../out` is outside it. */
const PLANTED: Record<string, string> = { f1: "f1\n", f2: "f2\n", "d/f3": "f3\n", "../out": "out\n" };
/** Kills a line that loops or waits; its process group goes with it. */
const RUN_SECONDS = 3;
/** Builtins that run the words after them as a command: `command pa x` reports `pa x` to the evaluator. */
const RUNNERS = new Set(["command", "exec", "builtin", "time", "nohup", "!"]);
const SOURCES = new Set(["source", "."]);
/** Names the run in the stubs' environment (no generated line touches it). */
const RUN_VARIABLE = "FUZZ_RUN_ID";
const FIELD = "\x1f";
const RECORD = "\x1e";

export interface Execution {
  /** The run's own workspace (a background job of an earlier run cannot write into it). */
  ws: string;
  /** Every stub invocation: argv with the program's base name first. */
  executed: string[][];
  /** Planted files that changed, vanished or appeared, as absolute paths. */
  changed: string[];
}

export class BashOracle {
  private readonly log: string;
  private readonly prefix: string[];
  private readonly env: NodeJS.ProcessEnv;
  private runs = 0;
  /** Whether lines run in their own PID namespace (else a job a line leaves behind may hold the pipe). */
  private readonly isolated: boolean;

  constructor(readonly root: string) {
    this.log = join(root, "log");
    const stubs = join(root, "stubs");
    mkdirSync(stubs);
    mkdirSync(join(root, "tmp"));
    mkdirSync(join(root, "home"));
    for (const [i, name] of STUBS.entries()) {
      // pa succeeds, pb fails, pc prints a stub's name (so `$(pc)` as a command name would run pa).
      const tail = ["exit 0", "exit 1", "echo pa"][i];
      // Each record starts with the run it belongs to: a process substitution bash did not wait for may
      // log after its run has been judged, and must not be taken for part of the next one.
      // One write per record (built first), so stubs running at once cannot interleave their fields.
      const body = `#!/bin/sh\nr=$(printf '%s${FIELD}' "$${RUN_VARIABLE}" "$0" "$@")\nprintf '%s${RECORD}' "$r" >> '${this.log}'\n${tail}\n`;
      writeFileSync(join(stubs, name), body);
      chmodSync(join(stubs, name), 0o755);
    }
    this.env = { PATH: stubs, HOME: join(root, "home"), TMPDIR: join(root, "tmp"), LANG: "C" };
    // No network, and a PID namespace whose processes all die with the line's shell or its timeout: a
    // line that forks itself in the background cannot outlive its run. (The line's own PATH holds only
    // the stubs, so these are located on ours.) Without user namespaces, only the timeout applies.
    const unshare = locateExecutable("unshare");
    const namespaces = ["-rnpf", "--kill-child"];
    const isolate =
      unshare && spawnSync(unshare, [...namespaces, "true"]).status === 0 ? [unshare, ...namespaces] : [];
    const timeout = locateExecutable("timeout");
    if (!timeout) throw new Error("the fuzzer needs GNU timeout on PATH");
    this.prefix = [...isolate, timeout, "-s", "KILL", String(RUN_SECONDS)];
    this.isolated = isolate.length > 0;
  }

  /** A fresh workspace for each run, so a job an earlier line left behind cannot write into it. */
  private plant(run: number): string {
    if (run > 1) rmSync(join(this.root, `run-${run - 1}`), { recursive: true, force: true });
    const ws = join(this.root, `run-${run}`, "ws");
    mkdirSync(join(ws, "d"), { recursive: true });
    for (const [path, content] of Object.entries(PLANTED)) writeFileSync(join(ws, path), content);
    writeFileSync(this.log, "");
    return ws;
  }

  /** Runs the line as the Bash tool does (stderr joined to stdout first) and reports what it did. */
  run(line: string): Execution {
    const run = String(++this.runs);
    const ws = this.plant(this.runs);
    const [file, ...args] = this.prefix;
    spawnSync(file!, [...args, "/bin/bash", "-c", `exec 2>&1; ${line}`], {
      cwd: ws,
      env: { ...this.env, [RUN_VARIABLE]: run },
      // A pipe, as in the Bash tool; in a PID namespace everything holding it dies with the run. Outside
      // one, a job the line left behind could hold a pipe open for ever, so output is discarded.
      stdio: ["ignore", this.isolated ? "pipe" : "ignore", "ignore"],
      maxBuffer: 1 << 26,
    });
    const executed = readFileSync(this.log, "latin1")
      .split(RECORD)
      .map((record) => record.split(FIELD).slice(0, -1))
      .filter((fields) => fields[0] === run)
      .map(([, ...argv]) => {
        argv[0] = argv[0]!.slice(argv[0]!.lastIndexOf("/") + 1);
        return argv;
      });
    return { ws, executed, changed: changes(ws) };
  }
}

function changes(ws: string): string[] {
  const changed: string[] = [];
  for (const [path, content] of Object.entries(PLANTED)) {
    const abs = resolve(ws, path);
    if (!existsSync(abs) || readFileSync(abs, "latin1") !== content) changed.push(abs);
  }
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const abs = join(dir, name);
      if (statSync(abs, { throwIfNoEntry: false })?.isDirectory()) walk(abs);
      else if (!Object.keys(PLANTED).some((p) => resolve(ws, p) === abs)) changed.push(abs);
    }
  };
  walk(ws);
  return changed;
}

/** A word the splitter could not spell out: it stands for any number of argv items. */
function flexible(command: SimpleCommand, i: number): boolean {
  const literal = command.literals[i];
  return literal === undefined || /[*?[\]{}~]/.test(literal);
}

function matchFrom(command: SimpleCommand, w: number, argv: string[], a: number): boolean {
  if (w === command.words.length) return a === argv.length;
  if (flexible(command, w)) {
    for (let take = 0; a + take <= argv.length; take++)
      if (matchFrom(command, w + 1, argv, a + take)) return true;
    return false;
  }
  return a < argv.length && command.literals[w] === argv[a] && matchFrom(command, w + 1, argv, a + 1);
}

/** Whether a reported command accounts for one stub invocation. */
function explains(command: SimpleCommand, argv: string[]): boolean {
  for (let start = 0; start < command.words.length; start++) {
    const name = command.literals[start];
    if (name !== undefined && (name === argv[0] || name.endsWith(`/${argv[0]}`))) {
      if (matchFrom(command, start + 1, argv, 1)) return true;
    }
    // Only a runner and its options may stand before the program it runs.
    if (!RUNNERS.has(name ?? "") && !(start > 0 && /^-/.test(name ?? ""))) return false;
  }
  return false;
}

/** Why the split misses what bash did, or undefined when it accounts for all of it. */
export function unexplained(split: ShellSplit, run: Execution): string | undefined {
  if (!split.ok) return undefined;
  // `source FILE` runs the commands in FILE, which is a program to the evaluator like any script.
  if (split.commands.some((command) => SOURCES.has(command.literals[0] ?? ""))) return undefined;
  for (const argv of run.executed) {
    if (!split.commands.some((command) => explains(command, argv)))
      return `bash ran ${JSON.stringify(argv)}, which the split does not report`;
  }
  const writes = new Set(split.commands.flatMap((c) => c.writes).map((target) => resolve(run.ws, target)));
  for (const path of run.changed) {
    if (!writes.has(path)) return `bash changed ${path}, which the split does not report as a write`;
  }
  return undefined;
}
