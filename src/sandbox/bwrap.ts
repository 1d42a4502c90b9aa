import { existsSync, lstatSync, readFileSync } from "node:fs";
import type { SandboxPolicy } from "./policy.js";
import { BWRAP_ISOLATION } from "./probe.js";

/** Empty, unreadable stand-ins bound over masked paths (mode 000; nobody inside has the capability to bypass it). */
export interface MaskSources {
  file: string;
  dir: string;
}

const byDepth = (a: string, b: string) => a.split("/").length - b.split("/").length || a.localeCompare(b);

/**
 * Unix sockets the command could reach through the read-only file system: a socket on a read-only mount
 * still accepts connections, and some (the Docker daemon's, a tmux server's, ssh-agent's) run commands
 * outside. /run is replaced by an empty tmpfs; every other listening socket bound to a path, as the kernel
 * lists them in /proc/net/unix, is covered with /dev/null. One read, however many files /tmp holds.
 */
export function socketsToHide(table = "/proc/net/unix"): string[] {
  let text: string;
  try {
    text = readFileSync(table, "utf8");
  } catch {
    return [];
  }
  const found = new Set<string>();
  for (const line of text.split("\n").slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path; the path may hold spaces.
    const fields = line.trim().split(/\s+/);
    const path = fields.slice(7).join(" ");
    if (!path.startsWith("/") || path === "/run" || path.startsWith("/run/")) continue;
    try {
      if (lstatSync(path).isSocket()) found.add(path);
    } catch {
      // removed since it was bound
    }
  }
  return [...found];
}

/**
 * bubblewrap's arguments for one command. Order matters, later mounts cover earlier ones: the whole
 * file system read-only, fresh /dev and /proc, writable places, pinned directories, read-only control
 * files, masks, then what allowRead shows again.
 */
export function bwrapArgs(
  policy: SandboxPolicy,
  masks: MaskSources,
  options: { cwd: string; disableUserns: boolean; sockets: readonly string[] },
  command: readonly string[],
): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  if (existsSync("/run")) args.push("--tmpfs", "/run");
  for (const socket of options.sockets) args.push("--ro-bind", "/dev/null", socket);
  for (const path of [...policy.writable].sort(byDepth)) args.push("--bind", path, path);
  for (const path of [...policy.pinned].sort(byDepth)) args.push("--bind", path, path);
  for (const path of [...policy.readOnly, ...policy.placeholders].sort(byDepth))
    args.push("--ro-bind", path, path);
  for (const mask of [...policy.masked].sort((a, b) => byDepth(a.path, b.path))) {
    args.push("--ro-bind", mask.kind === "dir" ? masks.dir : masks.file, mask.path);
  }
  for (const path of [...policy.unmasked].sort(byDepth)) args.push("--ro-bind", path, path);
  args.push(...BWRAP_ISOLATION);
  if (options.disableUserns) args.push("--disable-userns");
  args.push("--chdir", options.cwd, "--", ...command);
  return args;
}
