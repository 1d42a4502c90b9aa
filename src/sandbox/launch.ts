import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolContext } from "../core/context.js";
import { ToolError } from "../core/errors.js";
import { once } from "../core/once.js";
import { isWithin } from "../fs/canonical.js";
import type { SandboxAhead } from "../process/prestart.js";
import { GO_AHEAD, GO_AHEAD_FD, shQuote } from "../process/shells.js";
import { bwrapArgs, mountPoints, type SandboxBlanks, socketsToHide } from "./bwrap.js";
import {
  type CommandRequest,
  commandSandboxed,
  type SandboxMode,
  sandboxMode,
  warnIfUnavailable,
} from "./mode.js";
import { canMountStandInsLate } from "./mounter.js";
import { holdPlaceholders, releaseIdlePlaceholders } from "./placeholder.js";
import { buildPolicy, type SandboxPolicy } from "./policy.js";
import type { Availability } from "./probe.js";
import { FilteringProxy } from "./proxy.js";
import { ownProxySocketDir, PROXY_SOCKET_INSIDE, proxySocketPath } from "./proxy-socket.js";
import { seatbeltProfile } from "./seatbelt.js";

/** The loopback port the bridge listens on inside the sandbox's own network namespace (every port is free there). */
export const BRIDGE_PORT = 3128;
/** The bridge's process name (at most 15 characters, the kernel's limit). */
const BRIDGE_TITLE = "cc-sandbox-net";

/**
 * Runs inside the sandbox, in its network namespace: listens on 127.0.0.1:BRIDGE_PORT, relays each
 * connection to the proxy's Unix socket (bound at PROXY_SOCKET_INSIDE), then starts the
 * command and exits with its status. Node is used because it is certainly there; socat often is not.
 */
const BRIDGE_SOURCE = `
const net = require("node:net"), { spawn } = require("node:child_process");
process.title = "${BRIDGE_TITLE}";
const [port, socket, file, ...args] = process.argv.slice(1);
const relay = (client, triesLeft) => {
  const upstream = net.connect(socket);
  upstream.once("connect", () => { client.pipe(upstream); upstream.pipe(client); client.resume(); });
  upstream.once("error", () => triesLeft > 0 ? setTimeout(() => relay(client, triesLeft - 1), 20) : client.destroy());
  client.once("close", () => upstream.destroy());
};
const server = net.createServer((client) => { client.pause(); client.on("error", () => {}); relay(client, 5); });
server.listen(Number(port), "127.0.0.1", () => {
  const child = spawn(file, args, { stdio: "inherit" });
  child.on("error", (e) => { process.stderr.write(String(e.message) + "\\n"); process.exit(127); });
  child.on("exit", (code, signal) => { if (signal) { process.kill(process.pid, signal); } process.exit(code ?? 1); });
});`;

/**
 * Shell text (sh and bash alike) that touches `file` when a process other than pid 1, this shell and its
 * parent is still alive in the sandbox's PID namespace (zombies aside): processes the command left
 * running, which are killed with the namespace; the note lets the result say so, as it does for strays
 * outside the sandbox. Only builtins run, so nothing the check starts is counted.
 */
const strayScan = (file: string) =>
  `for __cc_p in /proc/[0-9]*; do case \${__cc_p#/proc/} in 1|$$|$PPID) continue ;; esac; ` +
  `{ IFS= read -r __cc_st < "$__cc_p/stat"; } 2>/dev/null || continue; ` +
  `case \${__cc_st##*) } in Z*|X*) continue ;; esac; : >| ${file}; break; done`;

/**
 * For a command whose shell cannot do the check itself (PowerShell, hooks): an sh that marks the start in
 * the file named by $2 (see startMark), runs the command, then checks for strays in the file named by $1
 * and exits with the command's status. Under --as-pid-1 it is the namespace's init (pid 1 would otherwise
 * be bwrap's own init, and the network bridge is its parent), and reaps orphans while it waits.
 */
const STRAY_CHECK = `f=$1; true 2>/dev/null >| "$2"; shift 2; "$@"; s=$?
${strayScan('"$f"')}
exit $s`;

/**
 * What a shell does so it can be the PID namespace's init itself, without the sh of STRAY_CHECK between
 * bwrap and it (one process fewer per command): bash reaps any child it has, orphans included.
 */
export interface InitDuties {
  /**
   * Run before the command. First, for a gated launch, the gate: the shell waits for the host's go-ahead
   * (see gate). Then the traps: a namespace's init ignores every signal it has no handler for, so `kill $$` (or a
   * time-out's SIGTERM) would leave it running; these make a terminating signal end it with the status it
   * would have died with (128 + the signal's number), as the shell outside a sandbox does.
   */
  setup: string;
  /**
   * Run when the shell exits, whichever way short of SIGKILL (the end of the command, `exit N`, a trapped
   * signal): the stray check, builtins only. It first clears -e, -u and -f, which the command may have set
   * and which would otherwise end or skip the check (and with -e change the exit status).
   */
  atExit: string;
}

/** Terminating signals a script may send itself, with the exit status a shell reports for each. */
const INIT_SIGNALS: ReadonlyArray<readonly [string, number]> = [
  ["HUP", 129],
  ["INT", 130],
  ["QUIT", 131],
  ["USR1", 138],
  ["USR2", 140],
  ["PIPE", 141],
  ["ALRM", 142],
  ["TERM", 143],
  // Signals whose default is a core dump: bash as init would crash re-raising them, without its EXIT trap.
  ["ILL", 132],
  ["TRAP", 133],
  ["ABRT", 134],
  ["BUS", 135],
  ["FPE", 136],
  ["SEGV", 139],
  ["XCPU", 152],
  ["XFSZ", 153],
  ["VTALRM", 154],
  ["PROF", 155],
  ["SYS", 159],
];

/**
 * What the command's shell runs first inside the sandbox: it creates the start mark, a file the host
 * checks after the exit. Without it, the command never began (bwrap could not set up its mounts), so a
 * second start is safe; with it, output that looks like bwrap's refusal is the command's own (a nested
 * bwrap, an echo) and the command is not run again. `true`, not `:`: a failed redirection of a special
 * builtin ends a POSIX shell (dash, bash with POSIXLY_CORRECT), and the command would silently not run.
 * The mark lives where the command can write, so a command that deletes it on purpose and then prints
 * bwrap's refusal is run a second time: it harms only itself, as running it twice would.
 */
const startMark = (file: string) => `true 2>/dev/null >| ${shQuote(file)}`;

/**
 * The first thing the command's shell runs in the sandbox (`env` its environment), before the start mark: it waits for GO_AHEAD
 * on GO_AHEAD_FD and closes it; on EOF or any other byte it exits having run nothing. A spawn of
 * bubblewrap gets the byte at once. A waiting sandbox execs the command's shell before the launch has
 * been judged (process/prestart.ts, `startEarly`), so that the shell starts while this process builds the
 * policy, and gives the byte only once the launch turns out to be the one that sandbox was started for;
 * otherwise it kills it. A read that fails ends the shell; `TMOUT=` keeps a TMOUT in the command's
 * environment from timing the wait out. Stdin stays /dev/null throughout, as a spawned command's is.
 */
function gate(env: NodeJS.ProcessEnv): string {
  // The byte is read into __cc_go, which then gets back the value the command's environment gave it.
  const restore = env.__cc_go === undefined ? "unset __cc_go" : `__cc_go=${shQuote(env.__cc_go)}`;
  return `{ TMOUT= IFS= read -r -n 1 __cc_go <&${GO_AHEAD_FD} && [ "$__cc_go" = ${GO_AHEAD} ]; } || exit 125; ${restore}; exec ${GO_AHEAD_FD}<&-`;
}

/** Whether `path` exists, looked at on the first call and remembered. */
const existedOnFirstLook = (path: string) => once(() => existsSync(path));

/** A new name for one launch's start and stray marks. */
export const newLaunchId = () => randomUUID().slice(0, 8);

/** The files in the sandbox's $TMPDIR where launch `id` marks its start and its strays (see InitDuties). */
function markFiles(tmpDir: string, id: string) {
  return { strayFile: join(tmpDir, `.strays-${id}`), startFile: join(tmpDir, `.started-${id}`) };
}

/** A sandboxed command's environment: its own $TMPDIR, and the package managers' caches. */
function sandboxEnv(policy: SandboxPolicy, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, TMPDIR: policy.tmpDir, ...cacheEnv(policy, env) };
}

/**
 * What bubblewrap runs: the command's own shell as the namespace's init where it can be, else STRAY_CHECK's
 * sh. `gated`: the shell waits for the go-ahead first (gate); not behind the network bridge, which passes
 * the command no descriptor beyond stdio.
 */
function initCommand(
  spec: SpawnSpec,
  { strayFile, startFile }: ReturnType<typeof markFiles>,
  gated: boolean,
): string[] {
  if (!spec.asInit)
    return ["/bin/sh", "-c", STRAY_CHECK, "sh", strayFile, startFile, spec.file, ...spec.args];
  const own = spec.asInit(initDuties(strayFile, startFile, gated ? spec.env : undefined));
  return [own.file, ...own.args];
}

/** The init's duties; with `gatedEnv` (the command's environment), behind the gate. */
function initDuties(
  strayFile: string,
  startFile: string,
  gatedEnv: NodeJS.ProcessEnv | undefined,
): InitDuties {
  return {
    setup: [
      ...(gatedEnv ? [gate(gatedEnv)] : []),
      startMark(startFile),
      ...INIT_SIGNALS.map(([name, status]) => `trap 'exit ${status}' ${name}`),
    ].join("; "),
    // Quietly: a command's `set -x`, `set -v` or DEBUG trap would otherwise show the check's every step.
    atExit: `{ set +xv; } 2>/dev/null; trap - DEBUG; set +euf; ${strayScan(shQuote(strayFile))}`,
  };
}

export interface SpawnSpec {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /**
   * The same command with the duties of the sandbox's PID-namespace init done by its own shell (see
   * InitDuties); absent for a shell that cannot, which then runs under STRAY_CHECK's sh.
   */
  asInit?: (duties: InitDuties) => { file: string; args: string[] };
}

export interface Launch extends SpawnSpec {
  sandboxed: boolean;
  /**
   * The command's shell waits for the go-ahead on GO_AHEAD_FD (see gate): whoever starts the launch passes
   * this on to supervise, which writes it.
   */
  gated?: boolean;
  /** Process names of the launcher (bwrap) and the network bridge: not the command's own processes. */
  launcherNames?: readonly string[];
  /** The command runs in a PID namespace that dies with it (bubblewrap): see SuperviseOptions.contained. */
  contained?: boolean;
  /** The placeholders this launch holds, each with an empty read-only directory bound over it (bubblewrap only). */
  standIns?: readonly string[];
  /** Why the command runs (or not) in the sandbox. */
  why: string;
  /** Ends what the sandbox set up for this command (proxy, placeholders). Call once it has ended. */
  release(): Promise<void>;
  /** True when processes the command started were still running in the sandbox when it exited (they are killed). */
  leftStrays(): boolean;
  /** True when the sandbox itself could not be set up (bwrap's own error): the command never started. */
  setupFailed(output: string, exitCode: number | null): boolean;
  /** Notes for the result: what the sandbox blocked, judged from the run's output and the proxy's log. */
  explain(output: string, exitCode: number | null): string[];
}

/**
 * What the sandbox binds over paths, kept for good (both are empty) where the sandbox cannot write
 * (~/.cache/cc-tools/sandbox-masks, not the sandbox's writable cache), one pair per user, so no process
 * leaves one behind: an empty, mode-000 file over masked files, and an empty read-only directory over each
 * placeholder. The placeholder itself is not shown: its markers (placeholder.ts) would be files in the
 * workspace to the command, and `git add -A` would commit them. Anything there that is not ours, not empty
 * or of the wrong mode is replaced.
 */
let blanks: SandboxBlanks | undefined;
function sandboxBlanks(): SandboxBlanks {
  if (blanks) return blanks;
  const uid = process.getuid?.() ?? -1;
  for (const dir of [
    join(homedir(), ".cache", "cc-tools", "sandbox-masks"),
    join(tmpdir(), `cc-tools-sandbox-masks-${uid}`),
  ]) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const owner = lstatSync(dir);
      if (!owner.isDirectory() || owner.uid !== uid) continue;
      const file = join(dir, "empty");
      const stat = lstatSync(file, { throwIfNoEntry: false });
      if (!stat?.isFile() || stat.size !== 0 || (stat.mode & 0o777) !== 0 || stat.uid !== uid) {
        rmSync(file, { force: true, recursive: true });
        writeFileSync(file, "", { mode: 0o000, flag: "wx" });
        chmodSync(file, 0o000);
      }
      const emptyDir = join(dir, "empty-dir");
      const dirStat = lstatSync(emptyDir, { throwIfNoEntry: false });
      if (
        !dirStat?.isDirectory() ||
        (dirStat.mode & 0o777) !== EMPTY_DIR_MODE ||
        dirStat.uid !== uid ||
        readdirSync(emptyDir).length > 0
      ) {
        if (dirStat?.isDirectory()) chmodSync(emptyDir, 0o700);
        rmSync(emptyDir, { force: true, recursive: true });
        mkdirSync(emptyDir, { mode: EMPTY_DIR_MODE });
        chmodSync(emptyDir, EMPTY_DIR_MODE);
      }
      blanks = { file, dir: emptyDir };
      return blanks;
    } catch {
      // not writable here: try the next place
    }
  }
  throw new ToolError(
    "The sandbox cannot hide Read-denied files or stand in for missing control files: no place for its empty stand-ins (~/.cache/cc-tools or the temp dir) is writable.",
    { beforeRun: true },
  );
}

/** The empty directory's mode: what a placeholder's own (a directory nobody writes) would show. */
const EMPTY_DIR_MODE = 0o555;

/** Variables that send HTTP clients (curl, git, npm, pip, Node with NODE_USE_ENV_PROXY) through the proxy. */
function proxyEnv(url: string): Record<string, string> {
  const env: Record<string, string> = {
    NODE_USE_ENV_PROXY: "1",
    NO_PROXY: "localhost,127.0.0.1,::1",
    no_proxy: "localhost,127.0.0.1,::1",
  };
  for (const name of [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "npm_config_proxy",
    "npm_config_https_proxy",
  ]) {
    env[name] = url;
    env[name.toLowerCase()] = url;
  }
  return env;
}

/** Where package managers keep caches inside the sandbox, unless the user opened the real ones. */
function cacheEnv(policy: SandboxPolicy, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  const writable = (path: string) => policy.writable.some((w) => isWithin(path, w));
  if (!env.XDG_CACHE_HOME && !writable(join(homedir(), ".cache")))
    out.XDG_CACHE_HOME = join(policy.cacheDir, "xdg");
  if (!env.npm_config_cache && !env.NPM_CONFIG_CACHE && !writable(join(homedir(), ".npm"))) {
    out.npm_config_cache = join(policy.cacheDir, "npm");
  }
  return out;
}

/** bubblewrap's own error, printed before the command starts. */
const BWRAP_FAILURE = /^bwrap: /;

const NETWORK_FAILURE =
  /Could not resolve host|Temporary failure in name resolution|Name or service not known|Network is unreachable|getaddrinfo|ENOTFOUND|EAI_AGAIN|ENETUNREACH|Couldn't connect to server|Failed to connect to/i;

function explainer(policy: SandboxPolicy, proxy: FilteringProxy | undefined, neverStarted: boolean) {
  return (output: string, exitCode: number | null): string[] => {
    const notes: string[] = [];
    if (neverStarted && BWRAP_FAILURE.test(output) && exitCode !== 0) {
      notes.push(
        "The sandbox could not be set up for this command (the bwrap line above says why), so it did not run. " +
          "Check the sandbox settings with `cc-tools sandbox status`.",
      );
      return notes;
    }
    const blocked = proxy?.blocked ?? [];
    if (blocked.length > 0) {
      const list = [...new Set(blocked.map((b) => `${b.host}:${b.port} (${b.why})`))].join("; ");
      notes.push(
        `The sandbox blocked network access: ${list}. Hosts are opened by a user in sandbox.network.allowedDomains or with WebFetch(domain:…) allow rules.`,
      );
    }
    if (exitCode === 0) return notes;
    if (/Read-only file system|EROFS/.test(output)) {
      notes.push(
        "The sandbox kept the command from writing there: only the workspace, its additional directories and " +
          `the session's temp dir ($TMPDIR=${policy.tmpDir}) are writable, and .claude/, .mcp.json, .git/config, ` +
          ".git/hooks and hook scripts stay read-only. A user can add writable paths in sandbox.filesystem.allowWrite.",
      );
    }
    if (/Device or resource busy|EBUSY/.test(output)) {
      notes.push(
        "The sandbox keeps control files and the directories that hold them (.claude, .git, hook script folders) in place: they cannot be renamed or removed from inside.",
      );
    }
    const kept = policy.placeholders.filter((p) => output.includes(p.split("/").pop() ?? p));
    if (
      kept.length > 0 &&
      /Is a directory|EISDIR|Read-only file system|EROFS|Device or resource busy/.test(output)
    ) {
      notes.push(
        `The sandbox keeps ${kept.join(", ")} from being created: it would decide what runs outside the sandbox later. ` +
          "While a command runs, an empty read-only directory stands in for it.",
      );
    }
    const hidden = policy.masked.filter((m) => output.includes(m.path.split("/").pop() ?? m.path));
    if (hidden.length > 0 && /Permission denied|EACCES/.test(output)) {
      notes.push(
        `The sandbox hides ${hidden.map((m) => `${m.path} (${m.why})`).join(", ")}: reading it is refused inside.`,
      );
    }
    if (blocked.length === 0 && NETWORK_FAILURE.test(output)) {
      notes.push(
        proxy
          ? `The sandbox lets commands reach only ${policy.network.allowedDomains.join(", ")}, through its proxy (HTTP_PROXY and HTTPS_PROXY point at it); other connections fail. A user can allow more hosts in sandbox.network.allowedDomains.`
          : "The sandbox gives commands no network access: no host is allowed. A user can allow hosts in sandbox.network.allowedDomains or with WebFetch(domain:…) allow rules.",
      );
    }
    return notes;
  };
}

function unsandboxed(spec: SpawnSpec, why: string): Launch {
  return {
    ...spec,
    sandboxed: false,
    why,
    release: async () => {},
    leftStrays: () => false,
    setupFailed: () => false,
    explain: () => [],
  };
}

type BubblewrapAvailability = Extract<Availability, { ok: true }>;

/**
 * The directories below /tmp a sandbox of this process covered for their sockets: each stays covered while
 * it exists (and holds no place the command needs), whether or not its server runs right now. A server
 * that comes and goes (tmux's ends with its last session) would otherwise change every sandbox's
 * arguments, and a sandbox started ahead of its command is used only for the very ones it was started with
 * (process/prestart.ts). proxy-socket.ts's directory is always covered when it is this user's own. A name
 * that is a symlink now (another user's, in place of a directory) is forgotten: socketsToHide never covers
 * through one.
 */
const socketDirsSeen = new Set<string>();

/** bubblewrap's argv that runs `command` in `cwd` under `policy` (with the network bridge's proxy socket, if any). */
function bubblewrap(
  policy: SandboxPolicy,
  availability: BubblewrapAvailability,
  cwd: string,
  command: readonly string[],
  proxySocket?: string,
): { file: string; args: string[] } {
  const options = {
    cwd,
    disableUserns: availability.disableUserns,
    sockets: socketsToHide(
      [...policy.writable, policy.cacheDir],
      [...socketDirsSeen, ...[ownProxySocketDir()].filter((dir) => dir !== undefined)],
    ),
    proxySocket,
    // The command's own bash (or the stray check's sh) as the namespace's init instead of bwrap's
    // reaper: one process fewer per command. Not with the network bridge, which is Node and does not
    // reap orphans: bwrap's init is pid 1 then, the bridge its child and the shell the bridge's.
    asPid1: availability.asPid1 && !proxySocket,
  };
  for (const dir of socketDirsSeen)
    if (!lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) socketDirsSeen.delete(dir);
  for (const dir of options.sockets.dirs) socketDirsSeen.add(dir);
  return { file: availability.path, args: bwrapArgs(policy, sandboxBlanks(), options, command) };
}

/**
 * The sandbox the session's next Bash command would run in, for starting it ahead of the command (see
 * process/prestart.ts): bubblewrap's path and its arguments before `--chdir DIR -- command…`, which are
 * the same for every command while the policy holds. A control file that is missing gets its stand-in
 * only when the command comes (sandbox/mounter.ts): its placeholder must not wait in the workspace.
 * Undefined where it cannot be started ahead: the sandbox is off or is not bubblewrap, its init cannot be
 * the command's shell (`--as-pid-1`), hosts are allowed (the network bridge is per command), or a stand-in
 * is needed and cannot be mounted late on this host (no perl, an architecture not known here), or another
 * mount of the command lies in or above a stand-in after it (the late mount would land in another order).
 */
export function sandboxAhead(ctx: ToolContext): SandboxAhead | undefined {
  const mode = sandboxMode(ctx);
  const { availability } = mode;
  if (!availability.ok || availability.mechanism !== "bubblewrap" || !availability.asPid1) return undefined;
  // What a plain command gets: an excluded command or dangerouslyDisableSandbox just spawns as before.
  if (!commandSandboxed(ctx, { command: "", shell: "bash" }, mode).sandboxed) return undefined;
  const policy = buildPolicy(ctx);
  if (policy.network.allowedDomains.length > 0) return undefined;
  if (policy.placeholders.length > 0 && !canMountStandInsLate()) return undefined;
  const { file, args } = bubblewrap(policy, availability, "/", []);
  const prefix = args.slice(0, -3);
  // In the order bubblewrap would mount them, so the sandbox's mount table lists them as a spawn's does.
  const standIns = boundStandIns(prefix, policy.placeholders);
  if (standIns.length !== policy.placeholders.length) return undefined;
  const startPrefix = withoutStandIns(prefix, standIns);
  const points = mountPoints(startPrefix);
  const all = mountPoints(prefix);
  if (!points || !all) return undefined;
  for (const standIn of standIns) {
    const later = all.slice(all.lastIndexOf(standIn) + 1);
    if (later.some((point) => isWithin(point, standIn) || isWithin(standIn, point))) return undefined;
  }
  return {
    file,
    prefix,
    standIns,
    standInSource: sandboxBlanks().dir,
    startPrefix,
    mountPoints: points,
    commandEnv: (env) => sandboxEnv(policy, env),
    // What sandboxLaunch gives a command while the policy stays this one; only a shell that waits at the gate.
    gatedCommand: (spec, id) =>
      spec.asInit && {
        command: initCommand(spec, markFiles(policy.tmpDir, id), true),
        env: sandboxEnv(policy, spec.env),
      },
  };
}

/** The stand-ins among `paths` that `args` bind (`--ro-bind EMPTY-DIR PATH`), in the order they bind them. */
function boundStandIns(args: readonly string[], paths: readonly string[]): string[] {
  const { dir } = sandboxBlanks();
  const bound: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--ro-bind" && args[i + 1] === dir && paths.includes(args[i + 2]!))
      bound.push(args[i + 2]!);
  }
  return bound;
}

/** `args` without the `--ro-bind EMPTY-DIR PATH` of each stand-in in `paths`. */
function withoutStandIns(args: readonly string[], paths: readonly string[]): string[] {
  const { dir } = sandboxBlanks();
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--ro-bind" && args[i + 1] === dir && paths.includes(args[i + 2]!)) i += 2;
    else kept.push(args[i]!);
  }
  return kept;
}

/**
 * How to spawn a command: inside the sandbox when it is in force for this command, else as given. Throws
 * a ToolError (before anything ran) when the sandbox is required but unavailable, or its policy cannot be
 * applied: a sandbox that silently did not apply would be worse than none.
 */
export async function sandboxLaunch(
  ctx: ToolContext,
  spec: SpawnSpec,
  request: CommandRequest | "hook",
  id: string = newLaunchId(),
): Promise<Launch> {
  // Placeholders waiting for removal go first: the policy would read one as a real .git or .claude, and
  // a command outside the sandbox would find it in place of the missing file.
  releaseIdlePlaceholders();
  if (request === "hook" && !ctx.config.sandbox.sandboxHooks) {
    return unsandboxed(spec, "hooks run outside the sandbox (sandbox.sandboxHooks is off)");
  }
  const mode: SandboxMode = sandboxMode(ctx);
  if (mode.refuse) {
    const { availability } = mode;
    const detail = availability.ok ? "" : `${availability.reason}. ${availability.hint}`;
    throw new ToolError(
      availability.ok || !availability.undecided
        ? `The command was not run: the settings require the OS sandbox (sandbox.failIfUnavailable), and it is unavailable: ${detail}`
        : `The command was not run: ${detail}`,
      { beforeRun: true },
    );
  }
  warnIfUnavailable(mode);
  const availability = mode.availability;
  if (!availability.ok) return unsandboxed(spec, mode.why);
  if (request !== "hook") {
    const decision = commandSandboxed(ctx, request, mode);
    if (!decision.sandboxed) return unsandboxed(spec, decision.why);
  }
  const policy = buildPolicy(ctx);
  const releasePlaceholders = holdPlaceholders(policy.placeholders);
  let proxy: FilteringProxy | undefined;
  let proxySocket: { path: string; remove(): void } | undefined;
  const marks = markFiles(policy.tmpDir, id);
  const { strayFile, startFile } = marks;
  // Each is looked at once, when the command has ended (release removes both files).
  const leftStrays = existedOnFirstLook(strayFile);
  const hasStarted = existedOnFirstLook(startFile);
  const removed: string[] = [];
  const release = async () => {
    for (const path of policy.forbidden) {
      if (!existsSync(path)) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    }
    leftStrays();
    hasStarted();
    rmSync(strayFile, { force: true });
    rmSync(startFile, { force: true });
    await proxy?.close();
    proxySocket?.remove();
    releasePlaceholders();
  };
  try {
    const env = sandboxEnv(policy, spec.env);
    let command = [spec.file, ...spec.args];
    const networked = policy.network.allowedDomains.length > 0;
    const gated = availability.mechanism === "bubblewrap" && !networked && spec.asInit !== undefined;
    let launched: { file: string; args: string[] };
    if (availability.mechanism === "bubblewrap") {
      command = initCommand(spec, marks, gated);
      if (networked) {
        proxySocket = proxySocketPath();
        proxy = new FilteringProxy(policy.network, { path: proxySocket.path });
        await proxy.ready;
        Object.assign(env, proxyEnv(`http://127.0.0.1:${BRIDGE_PORT}`));
        command = [
          process.execPath,
          "--no-warnings",
          "-e",
          BRIDGE_SOURCE,
          "--",
          String(BRIDGE_PORT),
          PROXY_SOCKET_INSIDE,
          ...command,
        ];
      }
      launched = bubblewrap(policy, availability, spec.cwd, command, proxySocket?.path);
    } else {
      if (networked) {
        proxy = new FilteringProxy(policy.network, { port: 0, host: "127.0.0.1" });
        await proxy.ready;
        Object.assign(env, proxyEnv(`http://127.0.0.1:${proxy.port}`));
      }
      launched = { file: availability.path, args: ["-p", seatbeltProfile(policy, proxy?.port), ...command] };
    }
    const launcherNames = availability.mechanism === "bubblewrap" ? ["bwrap", BRIDGE_TITLE] : [];
    // Only bubblewrap's launch writes the start mark.
    const neverStarted = () => launcherNames.length > 0 && !hasStarted();
    return {
      ...spec,
      ...launched,
      env,
      gated,
      launcherNames,
      contained: availability.mechanism === "bubblewrap",
      standIns: policy.placeholders,
      sandboxed: true,
      why: mode.why,
      release,
      leftStrays,
      setupFailed: (output, exitCode) => neverStarted() && exitCode === 1 && BWRAP_FAILURE.test(output),
      explain: (output, exitCode) => [
        ...explainer(policy, proxy, neverStarted())(output, exitCode),
        ...removed.map(
          (path) =>
            `The sandbox removed ${path}, which the command created: it would point git at a configuration outside the protected one.`,
        ),
      ],
    };
  } catch (error) {
    await release();
    throw error;
  }
}
