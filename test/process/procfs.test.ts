import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { groupMembers, pidMark, pidsCreatedAfter } from "../../src/process/procfs.js";

const linux = process.platform === "linux";

/** A `sleep` in its own process group, ended when the test is done. */
function sleeper() {
  const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
  return { pid: child.pid!, end: () => child.kill("SIGKILL") };
}

describe.runIf(linux)("procfs: processes created after a mark", () => {
  it("lists a process started after the mark, and not one started before it", () => {
    const before = sleeper();
    const mark = pidMark()!;
    const after = sleeper();
    try {
      // `at` refreshed: under load the spawn can outlast the time a mark's bound is trusted (next test).
      const ids = pidsCreatedAfter({ ...mark, at: Date.now() })!;
      expect(ids).toContain(after.pid);
      expect(ids).not.toContain(before.pid);
      expect(ids).not.toContain(process.pid);
    } finally {
      before.end();
      after.end();
    }
  });

  it("also lists the ids a mark names, created before it (a shell started ahead of its command)", () => {
    const before = sleeper();
    const mark = { ...pidMark()!, also: [before.pid!] };
    const after = sleeper();
    try {
      const ids = pidsCreatedAfter({ ...mark, at: Date.now() })!;
      expect(ids).toContain(before.pid);
      expect(ids).toContain(after.pid);
      expect(ids).not.toContain(process.pid);
      // Past the direct probe (many ids handed out since), from the listing of /proc as well.
      const wide = pidsCreatedAfter({ ...mark, last: mark.last - 1000 })!;
      expect(wide).toContain(before.pid);
      expect(wide).toContain(after.pid);
    } finally {
      before.end();
      after.end();
    }
  });

  it("looks at every process again once ids could have wrapped around since the mark", () => {
    const before = sleeper();
    try {
      // A mark taken long ago: pid_max ids could have been handed out since, so it bounds nothing.
      const stale = { last: pidMark()!.last, at: 0 };
      const ids = pidsCreatedAfter(stale)!;
      expect(ids).toContain(before.pid);
      expect(ids).toContain(process.pid);
    } finally {
      before.end();
    }
  });

  it("finds a group's members among the processes created after the mark", () => {
    const mark = pidMark()!;
    const group = sleeper();
    try {
      expect(groupMembers(group.pid, [], mark)?.map((m) => m.pid)).toEqual([group.pid]);
      expect(groupMembers(group.pid)?.map((m) => m.pid)).toEqual([group.pid]);
    } finally {
      group.end();
    }
  });
});
