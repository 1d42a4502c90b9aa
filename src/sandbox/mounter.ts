import { type ChildProcess, spawn } from "node:child_process";
import { log } from "../core/log.js";
import { trackGroup, untrackGroup } from "../process/groups.js";
import { hostProgram } from "../process/shells.js";

/**
 * Mounts a sandbox's stand-ins after bubblewrap has set it up, for a sandbox started ahead of its command
 * (process/prestart.ts). A control file that does not exist (no `.claude/`, no `.mcp.json`, no `.git`) is
 * kept from being created by a read-only mount over an empty directory in its place, the placeholder. Made
 * by bubblewrap, that directory would have to stay in the user's workspace for as long as the sandbox
 * waits; so the sandbox waits without those mounts, and when its command comes (and has made its
 * placeholders, as bubblewrap would) this helper adds them, each as `--ro-bind EMPTY-DIR PATH` would (an
 * empty directory over the placeholder, whose markers the command must not see), before the command is
 * handed over. The helper is killed then: no process of it is left when the command runs.
 *
 * It is a small Perl program (perl-base is part of every Debian and Ubuntu system; where perl is missing, or
 * the architecture's setns number is not known here, bubblewrap starts per command as before). It joins
 * the sandbox's mount namespace and the user namespace that owns it (NS_GET_USERNS: bubblewrap's first
 * one, where this user holds every capability, not the nested one its command runs in), and mounts with
 * the new mount API: open_tree clones the empty directory, mount_setattr makes the clone read-only (adding
 * nosuid and nodev, as bubblewrap does, and keeping every flag the kernel locked), move_mount puts it on
 * the placeholder. It mounts on directories only (a placeholder is one): move_mount does not follow a
 * symlink put in a placeholder's place, and refuses to put a directory on it, where bubblewrap follows it. prestart.ts checks the result in the mount table. It starts
 * with the sandbox (perl's own start overlaps bubblewrap's) and joins it once told its init's pid.
 */
const MOUNTER_SOURCE = `
my $setns = 0 + $ARGV[0];
my $source = $ARGV[1];
my $pid = <STDIN>;
defined $pid or exit 0;
chomp $pid;
open(my $mnt, "<", "/proc/$pid/ns/mnt") or die "open /proc/$pid/ns/mnt: $!\\n";
my $owner = ioctl($mnt, 0xb701, 0);
defined $owner or die "NS_GET_USERNS: $!\\n";
syscall($setns, 0 + $owner, 0x10000000) == 0 or die "setns (user): $!\\n";
syscall($setns, 0 + fileno($mnt), 0x20000) == 0 or die "setns (mount): $!\\n";
$| = 1;
print "r";
while (my $line = <STDIN>) {
  chomp $line;
  my $error = "";
  for my $hex (split / /, $line) {
    my $path = pack("H*", $hex);
    my $none = "";
    my $tree = syscall(428, -100, $source, 0x1 | 0x100 | 0x8000 | 0x80000);
    if ($tree < 0) { $error = "open_tree $source: $!"; last }
    open(my $held, "<&=", $tree) or die "fdopen: $!\\n";
    my @stat = stat($held);
    if (!@stat || ($stat[2] & 0170000) != 0040000) { $error = "not a directory: $source"; last }
    my $attr = pack("QQQQ", 0x1 | 0x2 | 0x4, 0, 0, 0);
    my $set = syscall(442, $tree, $none, 0x1000 | 0x8000, $attr, 32);
    my $moved = $set == 0 ? syscall(429, $tree, $none, -100, $path, 0x4) : -1;
    if ($moved != 0) { $error = ($set == 0 ? "move_mount" : "mount_setattr") . " $path: $!"; last }
  }
  print $error eq "" ? "k\\n" : "e $error\\n";
}
`;

/**
 * setns(2)'s number per Node architecture. open_tree (428), move_mount (429) and mount_setattr (442) have
 * the same number on each of these; mount_setattr needs Linux 5.12.
 */
const SETNS: Readonly<Partial<Record<NodeJS.Architecture, number>>> = {
  x64: 308,
  arm64: 268,
  riscv64: 268,
};

/** How long a request to the helper may take before the sandbox is given up. */
const MOUNT_TIMEOUT_MS = 500;

/**
 * How long a command waits for a helper still joining its sandbox (perl starting on a busy machine): a
 * sandbox of its own would cost more than this.
 */
const JOIN_WAIT_MS = 10;

/** Set once the helper failed in a way that will not change (no mount API, a security module said no). */
let unavailable: string | undefined;

/** perl and this architecture's setns number, when stand-ins can be mounted late on this host. */
function mounterCommand(): { perl: string; setns: number } | undefined {
  if (unavailable !== undefined) return undefined;
  const setns = SETNS[process.arch];
  const perl = setns === undefined ? undefined : hostProgram("perl");
  return perl && setns !== undefined ? { perl, setns } : undefined;
}

/** True when a sandbox can wait without its stand-ins and get them when its command comes. */
export const canMountStandInsLate = (): boolean => mounterCommand() !== undefined;

/** The helper for one waiting sandbox: started with it, joins it once set up, killed once it mounted. */
export class StandInMounter {
  private readonly child: ChildProcess | undefined;
  private output = "";
  private errors = "";
  private pending: { resolve: () => void; reject: (error: Error) => void } | undefined;
  private joined: (() => void) | undefined;
  private isReady = false;
  private ended = false;

  /** `source`: the empty directory to bind over each stand-in. */
  constructor(source: string) {
    const command = mounterCommand();
    if (!command) {
      this.ended = true;
      return;
    }
    // A clean environment: PERL5OPT, PERL5LIB and the like would run code of the environment's choosing.
    this.child = spawn(command.perl, ["-e", MOUNTER_SOURCE, String(command.setns), source], {
      cwd: "/",
      env: { PATH: "/usr/bin:/bin", LC_ALL: "C" },
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const own = this.child.pid;
    if (own !== undefined) trackGroup(own);
    this.child.stdout!.setEncoding("utf8").on("data", (text: string) => this.read(text));
    this.child.stderr!.setEncoding("utf8").on("data", (text: string) => {
      this.errors += text;
    });
    this.child.stdin!.on("error", () => {});
    this.child.on("error", (error) => this.fail(error.message));
    // "close", not "exit": its stderr (why setns failed) is read by then.
    this.child.on("close", () => this.fail(this.errors.trim() || "the stand-in helper ended"));
    this.child.unref();
    for (const pipe of [this.child.stdin, this.child.stdout, this.child.stderr])
      (pipe as unknown as { unref?: () => void } | null)?.unref?.();
  }

  /** Joins the sandbox whose init (bubblewrap's child, once it has set the sandbox up) is `pid`. */
  join(pid: number): void {
    this.child?.stdin?.write(`${pid}\n`);
  }

  /** True once it has joined the sandbox's namespaces. */
  get ready(): boolean {
    return this.isReady && !this.ended;
  }

  /**
   * Mounts the empty directory read-only over each path inside the sandbox. False when it has not joined the sandbox in
   * time (JOIN_WAIT_MS) or is busy with another request: nothing was mounted and nothing failed. Rejects
   * saying why when mounting failed or the helper ended.
   */
  async mount(paths: readonly string[]): Promise<boolean> {
    if (!this.isReady && !this.ended) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, JOIN_WAIT_MS);
        this.joined = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    if (this.ended) throw new Error(this.errors.trim() || "the stand-in helper ended");
    if (!this.isReady || this.pending) return false;
    const request = paths.map((path) => Buffer.from(path).toString("hex")).join(" ");
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => this.fail("the stand-in helper did not answer"), MOUNT_TIMEOUT_MS);
      this.pending = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.child!.stdin!.write(`${request}\n`);
    });
    return true;
  }

  /** Kills it (it is needed no more, or the sandbox is gone). */
  kill(): void {
    this.end();
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }

  private read(text: string): void {
    this.output += text;
    if (!this.isReady && this.output.startsWith("r")) {
      this.isReady = true;
      this.output = this.output.slice(1);
      this.joined?.();
    }
    const newline = this.output.indexOf("\n");
    if (newline < 0 || !this.pending) return;
    const answer = this.output.slice(0, newline);
    this.output = this.output.slice(newline + 1);
    const pending = this.pending;
    this.pending = undefined;
    if (answer === "k") {
      pending.resolve();
      return;
    }
    const why = answer.slice(2);
    // A kernel before 5.12 (no mount_setattr) or a security module would refuse every time: stop trying.
    if (/not implemented|not permitted|Permission denied/.test(why)) {
      unavailable = why;
      log.debug(`stand-ins cannot be mounted in a waiting sandbox: ${why}`);
    }
    pending.reject(new Error(why));
  }

  private fail(why: string): void {
    if (!this.isReady && !this.ended && /setns|NS_GET_USERNS/.test(why)) {
      // The host will not let this user into the sandbox's namespaces: it never will.
      unavailable = why;
      log.debug(`stand-ins cannot be mounted in a waiting sandbox: ${why}`);
    }
    const pending = this.pending;
    this.pending = undefined;
    this.end();
    pending?.reject(new Error(why));
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.joined?.();
    if (this.child?.pid !== undefined) untrackGroup(this.child.pid);
  }
}
