import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import type { Readable } from "node:stream";
import { isDeepStrictEqual } from "node:util";
import type { ToolContext } from "../core/context.js";
import { log } from "../core/log.js";
import { once } from "../core/once.js";
import type { Session, SessionSlot } from "../core/session.js";
import type { SpawnSpec } from "../sandbox/launch.js";
import { StandInMounter } from "../sandbox/mounter.js";
import { modelCommandEnv } from "./env.js";
import { newRunMarker, RUN_MARKER_VAR } from "./escapees.js";
import { trackGroup, untrackGroup } from "./groups.js";
import { HandOver } from "./hand-over.js";
import { callsRunning } from "./memory.js";
import {
  BASH_RUNS_SCRIPT,
  BASH_SCRIPT_START,
  GO_AHEAD,
  GO_AHEAD_FD,
  hostProgram,
  shQuote,
} from "./shells.js";

/**
 * A shell started ahead of its command, so the command does not wait for this process to fork.
 *
 * Spawning forks the spawner, and the fork of a Node process (with the exec that follows it) blocks the
 * event loop for a time that grows with the process: 7 to 10 ms per command on the 2-core VM of
 * docs/PERFORMANCE.md, against about 1 ms for bash to fork itself. A host that runs commands all session
 * (the MCP server, the agent) therefore keeps one small bash waiting, in `/` with the next command's
 * environment, started once the previous command (or search) has ended and the process has been quiet for
 * a moment (the model is thinking). When the command comes, the waiting bash reads a short script from its
 * stdin, enters the command's directory (resolved then, as a spawn's chdir would) and `exec`s the command's
 * own argv: the very process a spawn would have started (`bash -c …`, bubblewrap around it, or rg), in its
 * own session and process group, with stdin on /dev/null, the same pid for the supervisor and the same
 * environment. Where that argv is this bash with a command's script (`bash -c 'exec 2>&1; …'`), it runs
 * the script itself instead, once it has made itself what that bash would be when it starts (`inPlace`).
 * Everything judged per command (permissions, the sandbox's policy and its stand-ins) is
 * still judged at the command's time: only the fork moved. In a waiting sandbox the exec of the command's
 * shell moves too, before the judgement, but that shell runs nothing until the judgement lets it through
 * its gate (`startEarly`).
 *
 * It is used only when the result is provably the same as a spawn: the environments differ only in plain
 * variables the script can set. Anything else (an exported function, SHELLOPTS, a NUL in an argument,
 * arguments near E2BIG, stdin input) spawns as before, and the waiting bash is killed.
 *
 * A session whose waiting shell waits inside a sandbox (a sandboxed command came last) keeps a second,
 * plain one beside it for its searches (prestartForSearch): rg runs outside the sandbox. So does a session
 * whose searches come back to back (a model's parallel calls), once one found no shell waiting.
 *
 * The waiting bash costs about 2 MB. It ends with its session, when this process exits (its group is
 * tracked like a command's), and on its own when its stdin reaches EOF (this process was killed).
 */

/**
 * Variables the waiting bash must not see, because bash acts on them when it starts (sourcing BASH_ENV or
 * ENV, posix mode, a locale that is not installed); the command's values are set back just before the
 * exec. LC_ALL is set to C in their place, so that `read -N` counts bytes. (TMOUT stays: the reads are
 * given an empty one, as the gate's is.)
 */
const HELD_BACK = ["BASH_ENV", "ENV", "POSIXLY_CORRECT", "BASH_COMPAT", "LC_ALL"] as const;

/**
 * Variables bash manages itself (read-only, dynamic, or never exported as given): an environment that
 * holds one of these, or differs in one, is spawned as before.
 */
const BASH_OWN = new Set([
  "SHELLOPTS",
  "BASHOPTS",
  "BASH_XTRACEFD",
  "IFS",
  "BASHPID",
  "BASH_ARGV0",
  "BASH_COMMAND",
  "BASH_LINENO",
  "BASH_SOURCE",
  "BASH_SUBSHELL",
  "BASH_VERSINFO",
  "BASH_VERSION",
  "BASH_ARGC",
  "BASH_ARGV",
  "BASH_REMATCH",
  "BASH_ALIASES",
  "BASH_CMDS",
  "EPOCHREALTIME",
  "EPOCHSECONDS",
  "EUID",
  "UID",
  "PPID",
  "FUNCNAME",
  "GROUPS",
  "HISTCMD",
  "LINENO",
  "RANDOM",
  "SRANDOM",
  "SECONDS",
  "DIRSTACK",
  "PIPESTATUS",
  "OPTIND",
  "OPTARG",
]);

/** Variables bash sets when it starts; the script gives them the command's values last. */
const BASH_SETS = new Set(["SHLVL", "PWD", "OLDPWD", "_"]);

/** The variables the waiting bash reads its script into (READER); it unsets them before it runs it. */
const READER_VARS = ["__cc_n", "__cc_c"];

/**
 * False for a variable that keeps a shell from waiting for a command (it acts on it, it cannot be set, or
 * the waiting shell uses it).
 */
function mayWait(name: string): boolean {
  return !name.startsWith("BASH_FUNC_") && !BASH_OWN.has(name) && !READER_VARS.includes(name);
}

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The waiting bash: exits at once under a bash older than 4.1 (no `read -N`) and at EOF; else reads the
 * length of the script, then the script itself in one read, and runs it as `$1` the way a spawned bash
 * runs its command's script (BASH_RUNS_SCRIPT). The script ends in an exec, or runs the command's own.
 */
const READER =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
  '((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 1))) || exit 0; TMOUT= IFS= read -r __cc_n && TMOUT= IFS= read -r -N "$__cc_n" __cc_c && [ "${#__cc_c}" = "$__cc_n" ] || exit 0; set -- "$__cc_c"; unset __cc_n __cc_c; ' +
  BASH_RUNS_SCRIPT;

/**
 * The waiting bash inside a sandbox started ahead: it reports that bubblewrap has set the sandbox up
 * (a byte on fd 3), then keeps the command's stdout and stderr (its own fds 1 and 2, where bubblewrap's
 * own errors go as well) on fds 3 and 4 for the exec, and its own output on /dev/null, as READER expects.
 */
const SANDBOXED_READER = `printf r >&3; exec 3>&1 4>&2 >/dev/null 2>&1; ${READER}`;

/** A sandbox to start ahead (sandbox/launch.ts's sandboxAhead). */
export interface SandboxAhead {
  /** bubblewrap. */
  file: string;
  /** The command's arguments before `--chdir DIR -- command…`. */
  prefix: readonly string[];
  /**
   * The paths over which those arguments bind an empty read-only directory (`standInSource`) that the
   * sandbox gets only when its command comes (stand-ins for missing control files, whose placeholders must
   * not wait in the workspace: sandbox/mounter.ts).
   */
  standIns: readonly string[];
  /** The empty directory bound over each stand-in. */
  standInSource: string;
  /** What the waiting sandbox is started with: `prefix` without the stand-ins' `--ro-bind`s. */
  startPrefix: readonly string[];
  /** The mount points `startPrefix` makes, each of which the sandbox must have once it is set up. */
  mountPoints: readonly string[];
  /** The environment a command started with `env` gets inside (its own $TMPDIR, caches): the shell waits with it. */
  commandEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /**
   * What the launch of `spec` (under id `id`) runs inside while the policy stays the one this sandbox was
   * started with, and with what environment: a shell that waits for the go-ahead on GO_AHEAD_FD before it
   * runs anything (sandbox/launch.ts's gate). Undefined for a command whose shell cannot wait so.
   */
  gatedCommand(spec: SpawnSpec, id: string): { command: string[]; env: NodeJS.ProcessEnv } | undefined;
}

/**
 * The mount table of a process, whole (/proc/<pid>/mountinfo): a detached, moved or replaced mount changes
 * it. Whole lines, not ids and points alone: the kernel hands a freed mount id to the next mount, so a file
 * system unmounted and another mounted at the same place can keep both; its device and options differ.
 */
function mountTable(pid: number | "self"): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/mountinfo`, "utf8");
  } catch {
    return undefined;
  }
}

/** The mount points of a mount table (its fifth fields, as /proc escapes them). */
const mountPointsIn = (table: string) => new Set(table.split("\n").map((line) => line.split(" ", 5)[4]));

/** A mount point as /proc/<pid>/mountinfo shows it: space, tab, newline and backslash as octal escapes. */
const escapeMountPoint = (path: string) =>
  path.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`);

/**
 * True when `after` is the mount table `before` plus one read-only mount at each of `standIns` and nothing
 * else: every line of `before` still there, whole.
 */
function addsStandIns(before: string, after: string, standIns: readonly string[]): boolean {
  const old = new Set(before.split("\n"));
  const lines = after.split("\n");
  if (lines.length !== before.split("\n").length + standIns.length) return false;
  const kept = new Set(lines.filter((line) => old.has(line)));
  if (kept.size !== old.size) return false;
  const added = lines.filter((line) => !old.has(line)).map((line) => line.split(" "));
  const wanted = new Set(standIns.map(escapeMountPoint));
  return (
    added.length === wanted.size &&
    added.every((fields) => wanted.delete(fields[4]!) && fields[5]!.split(",").includes("ro"))
  );
}

/** How often a waiting sandbox compares the host's mount table with the one it copied. */
const HOST_MOUNTS_CHECK_MS = 1_000;

/** What supervise needs to run a command in a waiting shell. */
export interface PrestartedRun {
  child: ChildProcess;
  marker: string;
  /** The command's stdout and stderr (the waiting shell's own went to /dev/null). */
  stdout: Readable;
  stderr: Readable;
}

/**
 * Longest single argument or environment entry Linux passes to a program (MAX_ARG_STRLEN, with its NUL),
 * and a total well inside ARG_MAX: past these a spawn fails with E2BIG, which a waiting shell's exec would
 * report differently (and one that runs the command itself would not fail at all), so such a command is
 * spawned. ARG_MAX is a quarter of the stack's soft limit: the total is kept to half of that where the
 * limit is lower than usual (execTotalLimit).
 */
const MAX_EXEC_STRING_BYTES = 128 * 1024 - 1;
const MAX_EXEC_TOTAL_BYTES = 1024 * 1024;

/** The most argument and environment bytes a command may have to be run by a waiting shell. */
const execTotalLimit = once(() => {
  try {
    const line = readFileSync("/proc/self/limits", "utf8").match(/^Max stack size\s+(\S+)/m);
    const stack = line?.[1] === "unlimited" ? Number.POSITIVE_INFINITY : Number(line?.[1]);
    return Number.isFinite(stack)
      ? Math.min(MAX_EXEC_TOTAL_BYTES, Math.floor(stack / 8))
      : MAX_EXEC_TOTAL_BYTES;
  } catch {
    return MAX_EXEC_TOTAL_BYTES;
  }
});

/** Highest SHLVL the script can hand on exactly (bash resets a level of 1000 or more to 1, with a warning). */
const MAX_SHLVL = 997;

export class PrestartedShell {
  private readonly child: ChildProcess;
  /** Its stdin; in a sandbox written from libuv's pool, so that it starts on another CPU (hand-over.ts). */
  private readonly input: HandOver;
  readonly marker = newRunMarker();
  /** The environment the command was expected to have (the marker included). */
  private readonly env: NodeJS.ProcessEnv;
  private ended = false;
  private claimed = false;
  private discarded = false;
  /**
   * For a shell waiting inside a sandbox: the sandbox's init (the waiting bash, bubblewrap's child), its
   * mount table once bubblewrap had set it up, and the directory it waits in (the sandbox's `/`, unknown
   * where this process may not look at it: then nothing is started early in it); all unknown until then.
   */
  private inner: { pid: number; mounts: string; dir?: DirectoryId } | undefined;
  /**
   * This process's own mount table when the sandbox started: bubblewrap copied it then, and where the
   * host's mounts are private, nothing the host mounts or unmounts later reaches the copy.
   */
  private hostMounts: string | undefined;
  /** Looks at the host's mount table while the sandbox waits (see HOST_MOUNTS_CHECK_MS). */
  private hostWatch: NodeJS.Timeout | undefined;
  /** A sandbox that could not be verified once set up: it is killed, and counts as one that died. */
  private unusable = false;
  /** Mounts the stand-ins when the command comes (sandboxes with stand-ins only). */
  private mounter: StandInMounter | undefined;
  /** The stand-ins are mounted, for the command whose arguments were last checked. */
  private standInsMounted = false;
  /**
   * The command whose shell this sandbox exec'd ahead of its launch (`startEarly`), waiting for its
   * go-ahead: only a launch of this very command, directory and environment gets it.
   */
  private early: { command: readonly string[]; cwd: string; env: NodeJS.ProcessEnv } | undefined;
  /** Called (on a later turn) once it has died before any command came: see `died`. */
  onDeath: (() => void) | undefined;

  constructor(
    /** The bash it is (its path, as spawned: the command's `$0` when it runs the command itself). */
    private readonly shell: string,
    env: NodeJS.ProcessEnv,
    /** Start it inside this sandbox: it then runs only commands launched with the same bubblewrap arguments. */
    private readonly sandbox?: SandboxAhead,
  ) {
    this.env = { ...env, [RUN_MARKER_VAR]: this.marker };
    const own: NodeJS.ProcessEnv = { ...this.env, LC_ALL: "C" };
    for (const name of HELD_BACK) if (name !== "LC_ALL") delete own[name];
    // It waits in / (holding no file system of the user's busy; a sandbox holds the copy of the host's
    // mounts it was set up with, given up when the host's own change) and changes to the command's directory
    // when the command comes, so the path is resolved then, as a spawn's chdir would. Its own output goes to
    // /dev/null (a warning bash prints while it sets the environment); the command's goes to fds 3 and 4.
    const bash = [shell, "--noprofile", "--norc", "-c"];
    if (sandbox) this.hostMounts = mountTable("self");
    this.child = sandbox
      ? spawn(sandbox.file, [...sandbox.startPrefix, "--chdir", "/", "--", ...bash, SANDBOXED_READER], {
          cwd: "/",
          env: own,
          detached: true,
          stdio: ["pipe", "pipe", "pipe", "pipe"],
        })
      : spawn(bash[0]!, [...bash.slice(1), READER], {
          cwd: "/",
          env: own,
          detached: true,
          stdio: ["pipe", "ignore", "ignore", "pipe", "pipe"],
        });
    if (sandbox) {
      if (sandbox.standIns.length > 0) this.mounter = new StandInMounter(sandbox.standInSource);
      (this.child.stdio[3] as Readable).once("data", () => this.sandboxReady());
      // A file system the host unmounts stays mounted in the waiting sandbox (and busy) until it ends.
      this.hostWatch = setInterval(() => {
        if (mountTable("self") !== this.hostMounts) this.discard();
      }, HOST_MOUNTS_CHECK_MS).unref();
    }
    this.child.on("error", () => this.end());
    this.child.on("exit", () => this.end());
    this.child.stdin!.on("error", () => {});
    // In a sandbox, this process judges the launch (and mounts its stand-ins) while the shell starts.
    this.input = new HandOver(this.child.stdin!, sandbox !== undefined);
    if (this.child.pid !== undefined) trackGroup(this.child.pid);
    // Waiting keeps nothing alive: a host with nothing else to do exits, and its exit handler kills this.
    this.child.unref();
    for (const pipe of this.child.stdio) unrefPipe(pipe);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True when it waits inside a sandbox. */
  get sandboxed(): boolean {
    return this.sandbox !== undefined;
  }

  /** bubblewrap set the sandbox up: its init is bubblewrap's only child; its mounts are as they should be now. */
  private sandboxReady(): void {
    const pid = this.child.pid;
    if (pid === undefined || this.ended || this.claimed) return;
    let children: string[] = [];
    try {
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ");
    } catch {
      // No children file (a kernel without CONFIG_PROC_CHILDREN): it cannot be verified.
    }
    const mounts = children.length === 1 ? mountTable(Number(children[0])) : undefined;
    // The host may have moved a mount between bubblewrap's setup and this look: each must be where the
    // arguments put it (later checks only compare the table with this one).
    const present = mounts ? mountPointsIn(mounts) : new Set();
    if (!mounts || !this.sandbox!.mountPoints.every((point) => present.has(escapeMountPoint(point)))) {
      this.unusable = true;
      this.discard();
      return;
    }
    const inner = Number(children[0]);
    // Where it waits: a shell started early is still there at its claim, or has entered the command's.
    this.inner = { pid: inner, mounts, dir: directoryId(`/proc/${inner}/cwd`) };
    this.mounter?.join(this.inner.pid);
  }

  /** `args` are bubblewrap's for a command with the very arguments this sandbox was started for. */
  private fits(file: string, args: readonly string[]): boolean {
    const sandbox = this.sandbox!;
    const n = sandbox.prefix.length;
    if (file !== sandbox.file || args.length < n + 4 || args[n] !== "--chdir" || args[n + 2] !== "--")
      return false;
    return sandbox.prefix.every((arg, i) => args[i] === arg);
  }

  /**
   * Before a command launched with bubblewrap arguments `file args` is handed over: mounts the stand-ins
   * they bind, and checks the sandbox's mount table, which must be the one it was set up with plus one
   * read-only mount at each stand-in. The stand-ins must be the placeholders the launch holds (a path
   * covered by an empty directory because it is missing, not a control file that appeared meanwhile, maybe as a
   * symlink bubblewrap would follow). Anything else, and the sandbox is killed (the command then spawns
   * bubblewrap as before). A no-op for a sandbox without stand-ins or for other arguments.
   */
  async mountStandIns(launch: {
    file: string;
    args: readonly string[];
    standIns?: readonly string[];
  }): Promise<void> {
    const { mounter, inner } = this;
    const standIns = this.sandbox?.standIns ?? [];
    if (standIns.length === 0 || this.standInsMounted || !this.waiting) return;
    if (!mounter || !inner || !this.fits(launch.file, launch.args)) return;
    const held = new Set(launch.standIns);
    if (held.size !== standIns.length || standIns.some((path) => !held.has(path))) {
      // A control file appeared or went since it was started: the command gets a sandbox of its own.
      this.discard();
      return;
    }
    try {
      // Not joined yet (perl slow to start on a busy machine) or busy with another call's request: this
      // command gets a sandbox of its own, and nothing failed.
      if (!(await mounter.mount(standIns)) || !this.waiting) {
        this.discard();
        return;
      }
      const mounts = mountTable(inner.pid);
      if (mounts === undefined || !addsStandIns(inner.mounts, mounts, standIns)) {
        throw new Error("the sandbox's mount table is not the one expected");
      }
      this.inner = { ...inner, mounts };
      this.standInsMounted = true;
    } catch (error) {
      // Counted as a sandbox that died: a helper that keeps failing must not cost every command a wait.
      log.debug("a waiting sandbox could not get its stand-ins", error);
      // (Not when another call took or discarded it meanwhile, which ended the helper too.)
      if (this.waiting) this.unusable = true;
      this.discard();
    } finally {
      mounter.kill();
    }
  }

  /**
   * The command inside `args` (bubblewrap's, for a command) when they are the very arguments this sandbox
   * was started with and it still holds them: every mount in place. The host can detach one while the
   * sandbox waits (replacing or renaming a control file, or a directory above it, moves or removes the
   * mount in every namespace), which the policy alone, built from paths, would not show.
   */
  private inside(file: string, args: readonly string[]): { command: string[]; cwd: string } | undefined {
    const n = this.sandbox!.prefix.length;
    if (!this.fits(file, args)) return undefined;
    if (this.sandbox!.standIns.length > 0 && !this.standInsMounted) return undefined;
    if (!this.inner || mountTable(this.inner.pid) !== this.inner.mounts) return undefined;
    if (mountTable("self") !== this.hostMounts) return undefined;
    return { command: args.slice(n + 3), cwd: args[n + 1]! };
  }

  /** True while it waits and, inside a sandbox, bubblewrap has set that up: a command can be handed to it. */
  get ready(): boolean {
    if (!this.waiting || !this.sandbox) return this.waiting;
    return this.inner !== undefined && (this.sandbox.standIns.length === 0 || this.mounter?.ready === true);
  }

  /** True once a command was handed to it. */
  get ran(): boolean {
    return this.claimed && !this.discarded;
  }

  /** True when it ended before any command came (a bash too old for it, or killed by someone else). */
  get died(): boolean {
    return (this.ended && !this.claimed) || this.unusable;
  }

  /** True while it waits for a command. */
  get waiting(): boolean {
    return !this.ended && !this.claimed && this.child.pid !== undefined;
  }

  /**
   * In a waiting sandbox, execs the shell of the command `spec` would launch (under launch id `id`) now,
   * before the launch has been judged, so that it starts while this process builds the policy: the shell
   * waits at its gate (sandbox/launch.ts's gate) and runs nothing until `claim` gives it the go-ahead, which
   * only a launch of the very same command, directory and environment in the very same sandbox gets. Any
   * other launch, or none, and it is killed. Nothing happens (the command is handed over at its claim, as
   * usual) outside a sandbox, before the sandbox is set up, when the command's shell would not wait at a gate,
   * or when it would read a startup file before the gate (readsStartupFiles). Only for a shell taken for
   * its command (takePrestarted): one still waiting in the session would be offered to the next.
   */
  startEarly(spec: SpawnSpec, id: string): void {
    if (!this.sandbox || !this.ready || !this.inner?.dir || this.early) return;
    const gated = this.sandbox.gatedCommand(spec, id);
    if (!gated || readsStartupFiles(gated.env) || !enterable(spec.cwd)) return;
    const [file, ...args] = gated.command;
    const env = { ...gated.env, [RUN_MARKER_VAR]: this.marker };
    const script = this.script(file!, args, spec.cwd, env, true);
    if (script === undefined) return;
    this.early = { command: gated.command, cwd: spec.cwd, env };
    this.input.write(`${Buffer.byteLength(script)}\n${script}`);
  }

  /** True once `startEarly` exec'd a command's shell here (for the tests). */
  get startedEarly(): boolean {
    return this.early !== undefined;
  }

  /**
   * Runs `argv` with `env` in `cwd` in this shell, when that is exactly what spawning it would do; else
   * undefined (and this shell is killed: it was started for another command). `gated`: the argv waits for
   * the go-ahead, which is written on GO_AHEAD_FD as a spawn would. A shell that started the command early
   * has exec'd it already: the claim then only checks the launch and writes the go-ahead.
   */
  claim(
    file: string,
    args: readonly string[],
    cwd: string,
    env: NodeJS.ProcessEnv,
    gated = false,
  ): PrestartedRun | undefined {
    const run = this.claimIfFits(file, args, cwd, { ...env, [RUN_MARKER_VAR]: this.marker }, gated);
    if (!run) this.discard();
    return run;
  }

  /**
   * `claim` for a program of this process rather than the command it was started for (ripgrep): `env` is
   * taken as it is (no marker), and a shell that does not fit keeps waiting for its command.
   */
  claimIfFits(
    file: string,
    args: readonly string[],
    cwd: string,
    env: NodeJS.ProcessEnv,
    gated = false,
  ): PrestartedRun | undefined {
    if (!this.waiting || !enterable(cwd)) return undefined;
    let script: string | undefined;
    if (this.sandbox) {
      const inside = this.inside(file, args);
      if (inside && this.early) {
        // Handed over already: the launch must be that command, or its shell stays at the gate. The shell
        // enters the directory once it has read the script: still where it waited, it enters the one the
        // path names then, as a spawn would; inside already, that must be the one the path names now (not
        // one renamed away since).
        const { pid, dir: waited } = this.inner!;
        const at = directoryId(`/proc/${pid}/cwd`);
        const same =
          gated &&
          isDeepStrictEqual(this.early, { command: inside.command, cwd: inside.cwd, env }) &&
          at !== undefined &&
          (isDeepStrictEqual(at, directoryId(inside.cwd)) || isDeepStrictEqual(at, waited));
        script = same ? "" : undefined;
      } else if (inside)
        script = this.script(inside.command[0]!, inside.command.slice(1), inside.cwd, env, gated);
    } else script = this.script(file, args, cwd, env, gated);
    if (script === undefined) return undefined;
    this.claimed = true;
    clearInterval(this.hostWatch);
    this.mounter?.kill();
    this.child.ref();
    const pipes = this.child.stdio as unknown as Readable[];
    const [stdout, stderr] = this.sandbox ? [pipes[1]!, pipes[2]!] : [pipes[3]!, pipes[4]!];
    for (const pipe of [stdout, stderr]) refPipe(pipe);
    const goAhead = gated ? GO_AHEAD : "";
    this.input.write(this.early ? goAhead : `${Buffer.byteLength(script)}\n${script}${goAhead}`, true);
    return { child: this.child, marker: this.marker, stdout, stderr };
  }

  /** Kills the waiting shell (a claimed one belongs to its command's supervisor). */
  discard(): void {
    if (this.claimed || this.ended) return;
    this.claimed = true;
    this.discarded = true;
    clearInterval(this.hostWatch);
    this.mounter?.kill();
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
    untrackGroup(pid);
    this.reportDeath();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.hostWatch);
    this.mounter?.kill();
    if (!this.claimed && this.child.pid !== undefined) untrackGroup(this.child.pid);
    this.reportDeath();
  }

  private reportDeath(): void {
    const callback = this.onDeath;
    if (!this.died || !callback) return;
    this.onDeath = undefined;
    setImmediate(callback);
  }

  /**
   * The script that enters `cwd`, turns the waiting shell's environment into `target` and execs the argv;
   * undefined when that cannot be done exactly. `gated`: the program gets the waiting shell's stdin (what
   * the host writes after the script) on GO_AHEAD_FD.
   */
  private script(
    file: string,
    args: readonly string[],
    cwd: string,
    target: NodeJS.ProcessEnv,
    gated: boolean,
  ): string | undefined {
    const argv = [file, ...args];
    const entries = Object.entries(target).map(([name, value]) => `${name}=${value}`);
    const sizes = [...argv, ...entries].map((text) => Buffer.byteLength(text));
    if (sizes.some((size) => size > MAX_EXEC_STRING_BYTES)) return undefined;
    if (sizes.reduce((sum, size) => sum + size + 1, 0) > execTotalLimit()) return undefined;
    if ([...argv, cwd].some((arg) => arg.includes("\0"))) return undefined;
    const inPlace = this.inPlace(argv, cwd, target, gated);
    if (inPlace !== undefined) return inPlace;
    const lines: string[] = [this.enter(shQuote(cwd))];
    const names = new Set([...Object.keys(this.env), ...Object.keys(target)]);
    for (const name of names) {
      const value = target[name];
      if (value?.includes("\0")) return undefined;
      if (!mayWait(name)) return undefined;
      const held = (HELD_BACK as readonly string[]).includes(name);
      if (!held && value === this.env[name]) continue;
      if (BASH_SETS.has(name)) continue;
      if (!PLAIN_NAME.test(name)) return undefined;
      lines.push(value === undefined ? `unset ${name}` : `export ${name}=${shQuote(value)}`);
    }
    // Not `unset`: bash would load the locale the rest of the environment names, a millisecond or more
    // of file reads on the command's path; unexported, LC_ALL is left out of the exec'd program's
    // environment and the shell itself stays in C until the exec.
    if (target.LC_ALL === undefined) lines.push("export -n LC_ALL");
    // bash sets PWD and SHLVL itself, and `exec` takes one from SHLVL: give the command the values it
    // would have had. (Without SHLVL in env, the command's own bash starts at 1 either way.)
    const shlvl = target.SHLVL;
    if (shlvl !== undefined) {
      if (!/^\d{1,3}$/.test(shlvl) || Number(shlvl) > MAX_SHLVL) return undefined;
      lines.push(`export SHLVL=${Number(shlvl) + 1}`);
    }
    for (const name of ["PWD", "OLDPWD"]) {
      // bubblewrap sets PWD to its --chdir directory, whatever the environment held.
      const value = name === "PWD" && this.sandbox ? cwd : target[name];
      lines.push(value === undefined ? `unset ${name}` : `export ${name}=${shQuote(value)}`);
    }
    const gate = gated ? ` ${GO_AHEAD_FD}<&0` : "";
    lines.push(`exec ${argv.map(shQuote).join(" ")} >&3 2>&4 3>&- 4>&-${gate} </dev/null`);
    return lines.join("\n");
  }

  /**
   * The line that enters the command's directory `dir` (quoted). `cd -P` with an absolute path resolves it
   * as chdir does (no CDPATH); a failure is the command's error, inside a sandbox bubblewrap's own (as its
   * --chdir would have failed, so the command never started).
   */
  private enter(dir: string): string {
    return this.sandbox
      ? `cd -P -- ${dir} 2>/dev/null || { r=$(cd -P -- ${dir} 2>&1); printf "bwrap: Can't chdir to %s: %s\\n" ${dir} "\${r##*: }" >&4; exit 1; }`
      : `cd -P -- ${dir} 2>&4 || exit 126`;
  }

  /**
   * The script that runs a command's bash script in this shell itself, instead of exec'ing the bash
   * `file -c command` would start: a bash exec'd and started again costs more than a millisecond, and a
   * shell that has just read its script from a pipe can run it as well. Undefined unless this shell then
   * is, to the command, the shell that exec would have started:
   * - the argv is this very bash (also the command's `$0`) running a command's script as `$1`
   *   (BASH_RUNS_SCRIPT, BASH_SCRIPT_START): the shell runs its script so too, at the same depth;
   * - the environment is the one this shell was started with (a spawn's bash would import a different
   *   one, acting on some variables as it starts), apart from what bash sets itself, which the script sets
   *   as that bash would (PWD, OLDPWD, SHLVL);
   * - none of the variables bash acts on only as it starts is set (BASH_ENV and the startup files of
   *   readsStartupFiles, ENV, POSIXLY_CORRECT, BASH_COMPAT, and LC_ALL, whose warnings differ), and no
   *   name is outside ASCII (a bash started in the command's locale may take one for a variable where a
   *   bash waiting in C does not);
   * - everything before the command fits on one line, so the command's `$LINENO` and error lines match.
   * SECONDS restarts and BASH_EXECUTION_STRING becomes that bash's. What still tells the two apart is the
   * process's own record of its start (/proc/<pid>/cmdline and environ, its age and I/O counters), and
   * SECONDS, which `set` lists as 0 rather than without a value until it is first read.
   */
  private inPlace(
    argv: readonly string[],
    cwd: string,
    target: NodeJS.ProcessEnv,
    gated: boolean,
  ): string | undefined {
    const [file, flag, runs, zero, command, ...rest] = argv;
    if (file !== this.shell || flag !== "-c" || runs !== BASH_RUNS_SCRIPT || zero !== this.shell)
      return undefined;
    if (command === undefined || rest.length > 0 || !command.startsWith(BASH_SCRIPT_START)) return undefined;
    if (readsStartupFiles(target)) return undefined;
    if (ACTS_AT_START.some((name) => target[name] !== undefined)) return undefined;
    for (const name of new Set([...Object.keys(this.env), ...Object.keys(target)])) {
      if (!BASH_SETS.has(name) && target[name] !== this.env[name]) return undefined;
      if (!ASCII_NAME.test(name)) return undefined;
    }
    if (!isCanonical(cwd)) return undefined;
    const dir = shQuote(cwd);
    const lines = [`BASH_EXECUTION_STRING=${shQuote(BASH_RUNS_SCRIPT)}`, this.enter(dir)];
    // A bash started in `cwd` keeps an inherited absolute PWD that names it as its logical directory (the
    // path as given, symlinks and all); else its PWD is the physical path, which `cd -P` has set.
    const pwd = this.sandbox ? cwd : target.PWD;
    if (pwd?.startsWith("/")) {
      if (!isCanonical(pwd)) return undefined;
      lines.push(`if [ ${shQuote(pwd)} -ef . ]; then cd -L -- ${shQuote(pwd)} 2>/dev/null; fi`);
    }
    // An inherited OLDPWD stays if it names a directory; else bash makes an empty, exported one.
    const oldpwd = target.OLDPWD;
    const noOldpwd = "unset OLDPWD; export OLDPWD";
    lines.push(
      oldpwd === undefined
        ? noOldpwd
        : `if [ -d ${shQuote(oldpwd)} ]; then export OLDPWD=${shQuote(oldpwd)}; else ${noOldpwd}; fi`,
    );
    // Back to the locale the environment names (no warning either way for one that is not installed).
    lines.push("unset LC_ALL");
    const shlvl = target.SHLVL;
    if (shlvl !== undefined && (!/^\d{1,3}$/.test(shlvl) || Number(shlvl) > MAX_SHLVL)) return undefined;
    lines.push(`export SHLVL=${shlvl === undefined ? 1 : Number(shlvl) + 1}`);
    const gate = gated ? ` ${GO_AHEAD_FD}<&0` : "";
    lines.push(`exec >&3 2>&4 3>&- 4>&-${gate} </dev/null`, "SECONDS=0");
    const script = `${lines.join("; ")}; ${command}`;
    return script.includes("\n") ? undefined : script;
  }
}

/** Variables bash acts on only as it starts: a command whose environment holds one gets a bash of its own. */
const ACTS_AT_START = ["BASH_ENV", "ENV", "POSIXLY_CORRECT", "BASH_COMPAT", "LC_ALL"] as const;

/** An environment variable's name in ASCII only. */
const ASCII_NAME = /^[\x01-\x7f]+$/;

/** An absolute path without `.` or `..` parts, empty parts or a trailing slash: bash's canonical form. */
function isCanonical(path: string): boolean {
  return (
    path === "/" ||
    (path.startsWith("/") &&
      path
        .slice(1)
        .split("/")
        .every((part) => part !== "" && part !== "." && part !== ".."))
  );
}

/** True when a spawn could chdir into `cwd` (a directory we may search); else it is spawned, to fail as before. */
function enterable(cwd: string): boolean {
  try {
    if (!statSync(cwd).isDirectory()) return false;
    accessSync(cwd, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Which directory a path names: its device and inode. */
interface DirectoryId {
  dev: bigint;
  ino: bigint;
}

/** The directory `path` names, undefined when it names none (or cannot be looked at). */
function directoryId(path: string): DirectoryId | undefined {
  try {
    const stat = statSync(path, { bigint: true });
    return stat.isDirectory() ? { dev: stat.dev, ino: stat.ino } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * True when `bash -c` started with `env` reads a startup file before its first command: the file BASH_ENV
 * names, and, in the bash of Debian and Ubuntu (built with SSH_SOURCE_BASHRC), /etc/bash.bashrc and
 * ~/.bashrc when SSH_CLIENT or SSH2_CLIENT is set (a host started over ssh) and its shell level is low. A
 * shell started early would run that code before its gate, in a sandbox its launch may then not fit.
 * (bash also reads ~/.bashrc when its stdin is a socket; a shell started early has /dev/null there.)
 */
function readsStartupFiles(env: NodeJS.ProcessEnv): boolean {
  return ["BASH_ENV", "SSH_CLIENT", "SSH2_CLIENT"].some((name) => env[name] !== undefined);
}

function unrefPipe(pipe: unknown): void {
  (pipe as { unref?: () => void } | null)?.unref?.();
}

function refPipe(pipe: unknown): void {
  (pipe as { ref?: () => void } | null)?.ref?.();
}

/**
 * How long after a call ends the session's next shell is started, if no call is running then: calls that
 * come back to back (a batch, a loop) would otherwise wait for that fork, and for the waiting shell's own
 * start, instead of the one fork a spawn costs. While calls run, it is checked again this often, up to
 * PRESTART_MAX_CHECKS times.
 */
const PRESTART_QUIET_MS = 10;
const PRESTART_MAX_CHECKS = 50;

let enabled = false;
let quietMs = PRESTART_QUIET_MS;

/**
 * Makes this process start each session's next shell ahead of its command (a long-running host calls it).
 * `quietMs`: how long the process must have had no running call first (PRESTART_QUIET_MS by default); 0
 * starts it at once, also while other calls run (the tests that run whole suites through waiting shells).
 */
export function usePrestartedShells(options: { quietMs?: number } = {}): void {
  enabled = true;
  quietMs = options.quietMs ?? PRESTART_QUIET_MS;
}

/**
 * Sandboxes started ahead that may end before their command, in a row (bubblewrap refused the mounts: a
 * socket's directory vanished meanwhile), before a session starts plain shells only.
 */
const MAX_SANDBOX_DEATHS = 3;

interface PrestartState {
  shell: PrestartedShell | undefined;
  /**
   * A second plain bash for this process's own programs (rg): started while `shell` waits inside a sandbox,
   * where they cannot run, and beside a plain `shell` once searches came back to back (`searchesBatched`).
   */
  spare: PrestartedShell | undefined;
  /** A shell has been used: a search that then finds none waiting came before its replacement could. */
  used: boolean;
  /**
   * A search found no plain shell waiting, right after one was used: rg runs come together here (parallel
   * calls, calls back to back, or Glob's listing split over one rg per core).
   */
  searchesBatched: boolean;
  /** Searches in a row that did not need the spare waiting beside a plain shell (see SPARE_UNUSED_SEARCHES). */
  spareUnused: number;
  /** The shell the last command took: one that ran it inside a sandbox clears `sandboxDeaths`. */
  taken: PrestartedShell | undefined;
  /**
   * Every shell taken for a command and maybe not claimed yet (calls can overlap): one may have exec'd
   * its command's shell early, at its gate, and is killed with the session. Pruned as shells are taken.
   */
  held: Set<PrestartedShell>;
  /** A waiting shell ended on its own: this session spawns its commands as before. */
  givenUp: boolean;
  /**
   * Sandboxes started ahead that ended before their command since one last ran a command. Each is replaced
   * at once (a socket directory below /tmp that vanished during bubblewrap's setup is a passing race);
   * after MAX_SANDBOX_DEATHS in a row the session waits in plain bash.
   */
  sandboxDeaths: number;
  /** The slots a shell is about to be started for. */
  scheduled: Set<Slot>;
}

export const prestartSlot: SessionSlot<PrestartState> = {
  key: "prestartedShell",
  create: () => ({
    shell: undefined,
    spare: undefined,
    used: false,
    searchesBatched: false,
    spareUnused: 0,
    taken: undefined,
    held: new Set(),
    givenUp: false,
    sandboxDeaths: 0,
    scheduled: new Set(),
  }),
  dispose: (state) => {
    for (const shell of [state.shell, state.spare, ...state.held]) shell?.discard();
    state.held.clear();
    state.shell = state.spare = undefined;
    state.givenUp = true;
  },
};

/** The session's waiting shell, left where it is (the tests look at it). */
export function waitingShell(session: Session): PrestartedShell | undefined {
  return session.get(prestartSlot).shell;
}

/**
 * The session's waiting shell, taken for one command: its launch may start the command in it early, and
 * its supervisor claims it, or it is discarded (by the supervisor, or with the launch's release).
 */
export function takePrestarted(session: Session): PrestartedShell | undefined {
  if (!enabled) return undefined;
  const state = session.get(prestartSlot);
  const shell = state.shell;
  state.shell = undefined;
  if (shell) noteDeath(state, shell);
  state.taken = shell?.waiting ? shell : undefined;
  for (const held of state.held) if (!held.waiting) state.held.delete(held);
  if (state.taken) {
    state.used = true;
    state.held.add(state.taken);
  }
  return state.taken;
}

/** A plain shell that ended unasked ends prestarting for the session; a sandbox, after a few. */
function noteDeath(state: PrestartState, shell: PrestartedShell): void {
  if (!shell.died) return;
  if (shell.sandboxed) state.sandboxDeaths++;
  else state.givenUp = true;
}

/**
 * Runs `file args` (a program this process runs for a tool: ripgrep) in the session's waiting shell when it
 * fits exactly (same directory; `env` reachable by setting plain variables), and returns its process; else
 * undefined, and the shell keeps waiting. The caller reads the run's stdout and stderr, and untracks the
 * process group when the process ends.
 */
export function runInWaitingShell(
  session: Session | undefined,
  file: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): PrestartedRun | undefined {
  if (!enabled || !session || session.isDisposed) return undefined;
  const state = session.get(prestartSlot);
  const slots = ["shell", "spare"] as const;
  for (const slot of slots) {
    const run = state[slot]?.claimIfFits(file, args, cwd, env);
    if (!run) continue;
    state[slot] = undefined;
    state.used = true;
    if (slot === "spare") state.spareUnused = 0;
    else if (state.spare?.waiting) state.spareUnused++;
    return run;
  }
  // No shell waits at all: the one just used is not replaced yet (a waiting sandbox is no batch).
  if (state.used && !slots.some((slot) => state[slot]?.waiting)) state.searchesBatched = true;
  return undefined;
}

/**
 * Starts the session's next shell once the process has been quiet for PRESTART_QUIET_MS (the model is
 * thinking), where and as the next Bash command would run: inside the sandbox `sandbox` gives then
 * (called after the pause, so the policy is the one of that moment), if any; else a plain bash, which
 * a sandboxed command uses to exec bubblewrap, and Grep to run rg.
 */
export function prestartFor(ctx: ToolContext, sandbox?: () => SandboxAhead | undefined): void {
  if (!enabled) return;
  const state = ctx.session.get(prestartSlot);
  if (state.taken?.ran && state.taken.sandboxed) state.sandboxDeaths = 0;
  state.taken = undefined;
  startWhenQuiet(ctx, "shell", sandbox);
}

/**
 * Searches in a row that the waiting shell alone served, after which a spare kept for batches is let go
 * (with its 2 MB) once the process is quiet: the session's calls no longer come together. The next batch
 * starts another.
 */
const SPARE_UNUSED_SEARCHES = 3;

function dropSpare(state: PrestartState): void {
  state.spare?.discard();
  state.spare = undefined;
  state.searchesBatched = false;
  state.spareUnused = 0;
}

/**
 * After a search: readies a plain bash for the next one's rg. That is the session's waiting shell, unless
 * it waits inside a sandbox (a sandboxed command came last): then a spare, beside it. Once a search found
 * no plain shell waiting (it came right after another), the session keeps a spare as well, so the second
 * search of a batch does not fork this process either, until SPARE_UNUSED_SEARCHES came one at a time.
 */
export function prestartForSearch(ctx: ToolContext): void {
  if (!enabled) return;
  const state = ctx.session.get(prestartSlot);
  const sandboxWaits = state.shell?.waiting === true && state.shell.sandboxed;
  if (!sandboxWaits) prestartFor(ctx);
  if (sandboxWaits || state.searchesBatched) startWhenQuiet(ctx, "spare");
  // Let go once quiet, so that the second search of a batch coming right after this one still finds it.
  if (!sandboxWaits && state.spareUnused >= SPARE_UNUSED_SEARCHES) {
    afterQuiet(ctx.session, () => {
      if (state.spareUnused >= SPARE_UNUSED_SEARCHES) dropSpare(state);
    });
  }
}

type Slot = "shell" | "spare";

/** Fills `slot` with a waiting shell once the process is quiet, unless one waits there or is on its way. */
function startWhenQuiet(ctx: ToolContext, slot: Slot, sandbox?: () => SandboxAhead | undefined): void {
  const { session } = ctx;
  const state = session.get(prestartSlot);
  const current = state[slot];
  if (current?.died) {
    noteDeath(state, current);
    state[slot] = undefined;
  }
  if (state.givenUp || state.scheduled.has(slot) || state[slot]?.waiting) return;
  state.scheduled.add(slot);
  afterQuiet(
    session,
    () => {
      state.scheduled.delete(slot);
      if (state.givenUp || state[slot]?.waiting) return;
      try {
        const env = modelCommandEnv(ctx.config.env, ctx.config.envPassthrough);
        // An environment with an exported function or SHELLOPTS would act in the waiting shell itself.
        if (!Object.keys(env).every(mayWait)) {
          state.givenUp = true;
          return;
        }
        // The waiting bash runs outside the sandbox: never one a command could have put on the PATH.
        const shell = hostProgram("bash", env.PATH);
        const ahead = shell && state.sandboxDeaths < MAX_SANDBOX_DEATHS ? sandbox?.() : undefined;
        if (!shell) return;
        const started = new PrestartedShell(shell, ahead ? ahead.commandEnv(env) : env, ahead);
        // One that dies while it waits is replaced now, not after the next command has paid for a spawn.
        started.onDeath = () => {
          if (state[slot] === started) startWhenQuiet(ctx, slot, sandbox);
        };
        state[slot] = started;
      } catch (error) {
        log.debug("could not start a shell ahead of the next command", error);
      }
    },
    () => state.scheduled.delete(slot),
  );
}

/**
 * Runs `task` once the process has had no running call for quietMs (checked again while calls run, up to
 * PRESTART_MAX_CHECKS times); `dropped` runs instead when the wait ends without it.
 */
function afterQuiet(session: Session, task: () => void, dropped: () => void = () => {}): void {
  let checks = 0;
  const check = () => {
    if (session.isDisposed) return dropped();
    if (quietMs > 0 && callsRunning() > 0) {
      if (++checks < PRESTART_MAX_CHECKS) setTimeout(check, quietMs).unref();
      else dropped();
      return;
    }
    task();
  };
  setTimeout(check, quietMs).unref();
}
