import { spawnSyncAnnounced } from "../process/forks.js";
import { hostProgram } from "../process/shells.js";

/** The isolation flags every sandboxed command gets; the probe runs exactly these. */
export const BWRAP_ISOLATION = [
  "--unshare-user",
  "--unshare-pid",
  "--unshare-ipc",
  "--unshare-net",
  "--unshare-uts",
  "--die-with-parent",
  "--cap-drop",
  "ALL",
] as const;

/** How long each step of the one-off probe of bubblewrap may take before it counts as not finished. */
const PROBE_TIMEOUT_MS = 5_000;
/**
 * After a probe that did not finish, how long its answer stands before the next command probes again: the
 * checks of one command (whether it may run without asking, then its launch) share it, and a machine
 * that stays that busy is not blocked by a probe per call.
 */
const UNDECIDED_FOR_MS = 2_000;

export type Mechanism = "bubblewrap" | "seatbelt";

export type Availability =
  | {
      ok: true;
      mechanism: Mechanism;
      path: string;
      version: string;
      /** bubblewrap ≥ 0.8: commands inside cannot make user namespaces of their own. */
      disableUserns: boolean;
      /**
       * bubblewrap accepts `--as-pid-1`: the command itself is the PID namespace's init, saving bwrap's
       * own reaper process (one fork of the few every sandboxed command costs).
       */
      asPid1: boolean;
    }
  | {
      ok: false;
      mechanism?: Mechanism;
      reason: string;
      hint: string;
      /**
       * The probe did not finish in time (a busy machine): not known to be missing, so commands are
       * refused rather than run without it, and probed again UNDECIDED_FOR_MS later.
       */
      undecided?: boolean;
    };

const INSTALL_HINT =
  "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap), " +
  'or set "sandbox": {"enabled": false} to run commands with the permission rules alone and silence this warning.';

let cached: Map<string, Availability> | undefined;
/** Undecided answers by the same key as `cached`, with when they stop standing. */
const undecided = new Map<string, { answer: Availability; until: number }>();

/** Thrown by probeRun when a step of the probe did not finish within PROBE_TIMEOUT_MS. */
class ProbeTimedOut extends Error {}

/** Runs one step of the probe; throws ProbeTimedOut when it did not finish within PROBE_TIMEOUT_MS. */
function probeRun(path: string, args: readonly string[]) {
  const run = spawnSyncAnnounced(path, args, { encoding: "utf8", timeout: PROBE_TIMEOUT_MS });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT") throw new ProbeTimedOut();
  return run;
}

/** Why running `path args` failed, or undefined when it exited 0. */
function runsCleanly(path: string, args: readonly string[]): string | undefined {
  const probe = probeRun(path, args);
  if (probe.error) return probe.error.message;
  if (probe.status !== 0) return (probe.stderr || `exit status ${probe.status}`).trim();
  return undefined;
}

/** Probes the bubblewrap at `path` (hostProgram's answer), or says it is not installed. */
function probeBubblewrap(path: string | undefined): Availability {
  if (!path) {
    return {
      ok: false,
      mechanism: "bubblewrap",
      reason: "bubblewrap (bwrap) is not installed",
      hint: INSTALL_HINT,
    };
  }
  const version = probeRun(path, ["--version"]).stdout?.trim() ?? "";
  const base = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", ...BWRAP_ISOLATION];
  const failure = runsCleanly(path, [...base, "--", "/bin/true"]);
  if (failure) {
    return {
      ok: false,
      mechanism: "bubblewrap",
      reason: `bubblewrap is installed (${path}) but cannot create a sandbox here: ${failure}`,
      hint:
        "Unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor " +
        'profile for bwrap on Ubuntu 24.04+), or this is a container without them. Set "sandbox": {"enabled": false} to silence this warning.',
    };
  }
  const disableUserns = runsCleanly(path, [...base, "--disable-userns", "--", "/bin/true"]) === undefined;
  const asPid1 = runsCleanly(path, [...base, "--as-pid-1", "--", "/bin/true"]) === undefined;
  return { ok: true, mechanism: "bubblewrap", path, version, disableUserns, asPid1 };
}

/** /usr/bin/sandbox-exec ships with every macOS; it is deprecated but still what Claude Code uses. */
const SANDBOX_EXEC = "/usr/bin/sandbox-exec";

function probeSeatbelt(): Availability {
  const failure = runsCleanly(SANDBOX_EXEC, ["-p", "(version 1)(allow default)", "/usr/bin/true"]);
  if (failure) {
    return { ok: false, mechanism: "seatbelt", reason: `sandbox-exec does not work: ${failure}`, hint: "" };
  }
  return {
    ok: true,
    mechanism: "seatbelt",
    path: SANDBOX_EXEC,
    version: "",
    disableUserns: false,
    asPid1: false,
  };
}

/**
 * Whether this machine can sandbox commands, tried once per process by running an empty sandbox with the
 * same isolation flags real commands get: a kernel that refuses them is found here, not per command.
 */
export function sandboxAvailability(pathEnv = process.env.PATH ?? ""): Availability {
  cached ??= new Map();
  // Keyed by the bubblewrap that would run (hostProgram: never one from a place a sandboxed command can
  // write, and checked again on each look-up), so another one found later on is probed in its turn.
  const bwrap = process.platform === "linux" ? hostProgram("bwrap", pathEnv) : undefined;
  const key = bwrap ?? "";
  const hit = cached.get(key);
  if (hit) return hit;
  const pending = undecided.get(key);
  if (pending && Date.now() < pending.until) return pending.answer;
  let found: Availability;
  try {
    if (process.platform === "linux") found = probeBubblewrap(bwrap);
    else if (process.platform === "darwin") found = probeSeatbelt();
    else {
      found = {
        ok: false,
        reason: `no OS sandbox is supported on ${process.platform}`,
        hint: "Run cc-tools under WSL2 or Linux to sandbox commands.",
      };
    }
  } catch (error) {
    if (!(error instanceof ProbeTimedOut)) throw error;
    const answer: Availability = {
      ok: false,
      undecided: true,
      reason: `the check that the OS sandbox works did not finish within ${PROBE_TIMEOUT_MS / 1000} s (is the machine busy?)`,
      hint: `Run the command again in a few seconds: the sandbox is checked again ${UNDECIDED_FOR_MS / 1000} s after. If this goes on, bubblewrap hangs here; set "sandbox": {"enabled": false} to run commands with the permission rules alone.`,
    };
    undecided.set(key, { answer, until: Date.now() + UNDECIDED_FOR_MS });
    return answer;
  }
  undecided.delete(key);
  cached.set(key, found);
  return found;
}
