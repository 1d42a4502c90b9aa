import { existsSync, lstatSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { byCodeUnits } from "../core/order.js";
import { isWithin } from "../fs/canonical.js";
import type { SandboxPolicy } from "./policy.js";
import { BWRAP_ISOLATION } from "./probe.js";
import { PROXY_SOCKET_INSIDE } from "./proxy-socket.js";

/**
 * Masked directories become an empty tmpfs with mode 000; masked files get `blanks.file` (empty, mode 000)
 * bound over them. Nobody inside has the capability to bypass the mode.
 */
const UNREADABLE_DIR = (path: string) => ["--perms", "0000", "--tmpfs", path];

const byDepth = (a: string, b: string) => a.split("/").length - b.split("/").length || byCodeUnits(a, b);

/** Empty stand-ins bound over paths (sandbox/launch.ts keeps one pair per user). */
export interface SandboxBlanks {
  /** An empty file of mode 000, over each masked file. */
  file: string;
  /** An empty read-only directory, over each placeholder (which holds markers the command must not see). */
  dir: string;
}

/** What hides the Unix sockets: whole directories below /tmp, single files elsewhere. */
export interface SocketMasks {
  dirs: string[];
  files: string[];
}

/**
 * Unix sockets the command could reach through the read-only file system: a socket on a read-only mount
 * still accepts connections, and some (the Docker daemon's, a tmux server's, ssh-agent's) run commands
 * outside. /run is replaced by an empty tmpfs; every other listening socket bound to a path, as the kernel
 * lists them in /proc/net/unix, is covered. Below /tmp the directory that holds it is covered instead
 * (tmux-UID, ssh-XXXX, .X11-unix): sockets come and go faster than directories, and a mount point that
 * vanished before bwrap reached it would fail the command. Directories holding a place the command needs
 * (`keep`) are never covered. Each other one of `covered` that is a directory (not a symlink) is, whole,
 * whether or not a socket listens in it right now, and no socket within it is listed apart.
 */
export function socketsToHide(
  keep: readonly string[],
  covered: readonly string[] = [],
  table = "/proc/net/unix",
): SocketMasks {
  // Taken as they are, never through a symlink: another user can replace a name below /tmp with one, and
  // what it points at (/usr) would be hidden.
  const whole = covered.filter(
    (dir) =>
      !keep.some((k) => isWithin(k, dir) || isWithin(dir, k)) &&
      lstatSync(dir, { throwIfNoEntry: false })?.isDirectory(),
  );
  const dirs = new Set(whole);
  const files = new Set<string>();
  let text: string;
  try {
    text = readFileSync(table, "utf8");
  } catch {
    return { dirs: [...dirs].sort(byCodeUnits), files: [] };
  }
  for (const line of text.split("\n").slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path; the path may hold spaces.
    const bound = line.trim().split(/\s+/).slice(7).join(" ");
    if (!bound.startsWith("/")) continue;
    // As bubblewrap resolves a mount point: /var/run/docker.sock is /run/docker.sock, under the new /run.
    const path = resolvedOr(bound);
    if (path === "/run" || path.startsWith("/run/")) continue;
    if (keep.some((k) => isWithin(path, k)) || whole.some((dir) => isWithin(path, dir))) continue;
    const underTmp = /^\/tmp\/[^/]+\//.exec(path)?.[0].slice(0, -1);
    try {
      if (underTmp && !keep.some((k) => isWithin(k, underTmp)) && lstatSync(underTmp).isDirectory())
        dirs.add(underTmp);
      else if (lstatSync(path).isSocket()) files.add(path);
    } catch {
      // removed since it was bound
    }
  }
  return { dirs: [...dirs].sort(byCodeUnits), files: [...files].sort(byCodeUnits) };
}

/** `path` with its symlinks resolved (its directory's, if it is gone since it was listed), else as it is. */
function resolvedOr(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    try {
      return join(realpathSync.native(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

/**
 * bubblewrap's arguments for one command. Order matters, later mounts cover earlier ones: the whole
 * file system read-only, fresh /dev and /proc, writable places, pinned directories, read-only control
 * files, masks, then what allowRead shows again.
 */
export function bwrapArgs(
  policy: SandboxPolicy,
  blanks: SandboxBlanks,
  options: {
    cwd: string;
    disableUserns: boolean;
    sockets: SocketMasks;
    /**
     * The command is the PID namespace's init (`--as-pid-1`): it must be a shell that waits for its
     * children and reaps orphans (the command's own bash, or launch.ts's stray check run by sh), and it
     * ignores signals it has no handler for, so a time-out's SIGTERM ends the sandbox through bwrap
     * itself (--die-with-parent) if not through the shell's traps (launch.ts's InitDuties).
     */
    asPid1?: boolean;
    /** The host path of the network proxy's socket (proxy-socket.ts), shown at PROXY_SOCKET_INSIDE. */
    proxySocket?: string;
  },
  command: readonly string[],
): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  if (existsSync("/run")) args.push("--tmpfs", "/run");
  for (const dir of options.sockets.dirs) args.push(...UNREADABLE_DIR(dir));
  for (const socket of options.sockets.files) args.push("--ro-bind", "/dev/null", socket);
  if (options.proxySocket) args.push("--ro-bind", options.proxySocket, PROXY_SOCKET_INSIDE);
  for (const path of [...policy.writable].sort(byDepth)) args.push("--bind", path, path);
  for (const path of [...policy.pinned].sort(byDepth)) args.push("--bind", path, path);
  const readOnly = [
    ...policy.readOnly.map((path) => [path, path] as const),
    ...policy.placeholders.map((path) => [blanks.dir, path] as const),
  ];
  for (const [source, path] of readOnly.sort((a, b) => byDepth(a[1], b[1])))
    args.push("--ro-bind", source, path);
  for (const mask of [...policy.masked].sort((a, b) => byDepth(a.path, b.path))) {
    args.push(...(mask.kind === "dir" ? UNREADABLE_DIR(mask.path) : ["--ro-bind", blanks.file, mask.path]));
  }
  for (const path of [...policy.unmasked].sort(byDepth)) args.push("--ro-bind", path, path);
  args.push(...BWRAP_ISOLATION);
  if (options.disableUserns) args.push("--disable-userns");
  if (options.asPid1) args.push("--as-pid-1");
  args.push("--chdir", options.cwd, "--", ...command);
  return args;
}

/** How many values each option bwrapArgs emits takes (BWRAP_ISOLATION's included). */
const OPTION_VALUES: Readonly<Record<string, number>> = {
  "--ro-bind": 2,
  "--bind": 2,
  "--dev": 1,
  "--proc": 1,
  "--tmpfs": 1,
  "--perms": 1,
  "--chdir": 1,
  "--cap-drop": 1,
  "--unshare-user": 0,
  "--unshare-pid": 0,
  "--unshare-ipc": 0,
  "--unshare-net": 0,
  "--unshare-uts": 0,
  "--die-with-parent": 0,
  "--disable-userns": 0,
  "--as-pid-1": 0,
};

/** Options whose last value is a mount point inside the sandbox. */
const MOUNTING = new Set(["--ro-bind", "--bind", "--dev", "--proc", "--tmpfs"]);

/**
 * The mount points that arguments made by bwrapArgs (up to `--`) give the sandbox, in order; undefined for
 * an option bwrapArgs does not emit, so a caller never judges arguments it cannot read.
 */
export function mountPoints(args: readonly string[]): string[] | undefined {
  const points: string[] = [];
  for (let i = 0; i < args.length && args[i] !== "--"; ) {
    const option = args[i]!;
    const values = OPTION_VALUES[option];
    if (values === undefined || i + values >= args.length) return undefined;
    if (MOUNTING.has(option)) points.push(args[i + values]!);
    i += values + 1;
  }
  return points;
}
