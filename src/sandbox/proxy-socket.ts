import { randomUUID } from "node:crypto";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processAlive } from "../core/pid.js";

/**
 * Where a networked command's filtering proxy listens (see launch.ts's bridge), and where its sandbox
 * shows it. The sockets of every session live in one private directory per user that is never removed
 * and that every sandbox covers whole, so sockets coming and going as networked commands start and end
 * change no other sandbox's arguments: a sandbox started ahead of its command is used only when they are
 * the very ones the command gets (process/prestart.ts), and a fresh directory per socket, which each
 * other sandbox had to cover while it existed, made them differ on a busy machine. A command's own socket
 * is bound at PROXY_SOCKET_INSIDE: bubblewrap's /dev is a tmpfs of its own in every sandbox, where /run
 * may be missing on the host.
 */
export const PROXY_SOCKET_INSIDE = "/dev/cc-tools-proxy.sock";

/** The per-user directory of proxy sockets (it may not exist yet). */
export function proxySocketDir(): string {
  return join(tmpdir(), `cc-tools-proxy-${process.getuid?.() ?? "user"}`);
}

/**
 * The per-user directory when it is this user's own, for every sandbox to cover; else undefined. Made
 * here if it is missing, so that every sandbox covers it from the first one on: made only by the first
 * networked command, it would change the arguments of a sandbox started ahead before it (which would
 * then not be used).
 */
export function ownProxySocketDir(): string | undefined {
  const shared = makeSharedDir();
  return privateDir(shared) ? shared : undefined;
}

/** The per-user directory, made (private) if missing; whether it can be used is for privateDir to say. */
function makeSharedDir(): string {
  const shared = proxySocketDir();
  try {
    mkdirSync(shared, { mode: 0o700 });
  } catch {
    // already there (or not makeable): privateDir judges what is there
  }
  return shared;
}

/**
 * Removes the sockets in the shared directory of processes that are gone (killed while a networked
 * command ran, so their release never came): each socket's name begins with its process's pid.
 */
function sweepOrphans(dir: string): void {
  for (const name of readdirSync(dir)) {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    if (pid > 0 && !processAlive(pid)) rmSync(join(dir, name), { force: true });
  }
}

/** True when `path` is a directory of this user's that no one else can enter (not a symlink). */
function privateDir(path: string): boolean {
  try {
    const info = lstatSync(path);
    return info.isDirectory() && info.uid === process.getuid?.() && (info.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/**
 * A path for one command's proxy socket, and what removes it. In the shared directory when it is this
 * user's and private; else (another user made that name first) in a fresh directory of its own, which
 * is removed with it.
 */
export function proxySocketPath(): { path: string; remove(): void } {
  const shared = makeSharedDir();
  const name = `${process.pid}-${randomUUID()}.sock`;
  if (privateDir(shared)) {
    sweepOrphans(shared);
    const path = join(shared, name);
    return { path, remove: () => rmSync(path, { force: true }) };
  }
  const own = mkdtempSync(join(tmpdir(), "cc-tools-proxy-"));
  return { path: join(own, name), remove: () => rmSync(own, { recursive: true, force: true }) };
}
