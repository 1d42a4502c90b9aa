/**
 * What a file descriptor points at while bash applies a command's redirections, left to right. A
 * redirection to /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N re-opens whatever descriptor N
 * points at: the tool's output pipe when nothing redirected it (harmless), or a file an earlier
 * redirection opened: `echo x 1<OUTSIDE/file >/dev/stdout` truncates and writes OUTSIDE/file.
 */

/** `original`: descriptor `fd` as the tool gave it to the shell (0 stdin, 1 and 2 the output pipe; 3+ closed). */
export type Descriptor =
  | { kind: "original"; fd: number }
  | { kind: "file"; path: string }
  /** A pipe or here-document: writing through it reaches no file. */
  | { kind: "anonymous" }
  | { kind: "closed" }
  | { kind: "unknown" };

/** A target that names a descriptor rather than a file, and the descriptor it names. */
const DESCRIPTOR_PATH =
  /^\/(?:dev\/(?:(stdin)|(stdout)|(stderr)|fd\/(\d+))|proc\/(?:self|thread-self)\/fd\/(\d+))$/;
/** Paths through a descriptor directory that are not one of the exact forms above: `/dev/fd/3/x`, `/proc/self/cwd`. */
const DESCRIPTOR_TREE = /^\/(dev\/(fd|stdin|stdout|stderr)(\/|$)|proc\/(self|thread-self|\d+)(\/|$))/;

/** The descriptor a target names (`/dev/stdout` → 1), undefined for a plain file. */
export function namedDescriptor(path: string): number | undefined {
  const match = DESCRIPTOR_PATH.exec(path);
  if (!match) return undefined;
  if (match[1]) return 0;
  if (match[2]) return 1;
  if (match[3]) return 2;
  return Number(match[4] ?? match[5]);
}

/** Whether a target reaches a file through a process's descriptor table other than by an exact form. */
export function throughDescriptorTree(path: string): boolean {
  return DESCRIPTOR_TREE.test(path) && namedDescriptor(path) === undefined;
}

/** The descriptors of one simple command (or of the redirections after a compound command). */
export class DescriptorTable {
  private readonly fds = new Map<number, Descriptor>();
  /** Descriptors this command's redirections pointed somewhere else than where they started. */
  readonly changed = new Set<number>();

  get(fd: number): Descriptor {
    return this.fds.get(fd) ?? { kind: "original", fd };
  }

  set(fd: number, value: Descriptor): void {
    this.fds.set(fd, value);
    if (value.kind !== "original" || value.fd !== fd) this.changed.add(fd);
  }
}
