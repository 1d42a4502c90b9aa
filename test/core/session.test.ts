import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { removeTree, Session, type SessionSlot, sweepSessionDirs } from "../../src/core/session.js";

const counter: SessionSlot<{ n: number }> = {
  key: "counter",
  create: () => ({ n: 0 }),
  save: (v) => v.n,
  load: (data) => ({ n: Number(data) }),
};

describe("Session", () => {
  it("keeps each slot's state per session and restores saved state", () => {
    const a = new Session();
    const b = new Session();
    a.get(counter).n = 5;
    expect(b.get(counter).n).toBe(0);
    const restored = new Session({ saved: a.snapshot() });
    expect(restored.get(counter).n).toBe(5);
  });

  it("removes its own temp dir with everything in it, unless it keeps its files for a later reader", async () => {
    const used = new Session();
    writeFileSync(join(used.dir, "spilled.txt"), "output");
    await used.dispose();
    expect(existsSync(used.dir)).toBe(false);

    const kept = new Session({ keepFiles: true });
    writeFileSync(join(kept.dir, "spilled.txt"), "output");
    await kept.dispose();
    expect(existsSync(join(kept.dir, "spilled.txt"))).toBe(true);
    const emptyKept = new Session({ keepFiles: true });
    const emptyDir = emptyKept.dir;
    await emptyKept.dispose();
    expect(existsSync(emptyDir)).toBe(false);
    rmSync(kept.dir, { recursive: true });
  });

  it("releases every slot and removes its dir though a slot fails and a dying process still writes there", async () => {
    const session = new Session();
    const released: string[] = [];
    const failing: SessionSlot<object> = {
      key: "failing",
      create: () => ({}),
      dispose: () => {
        throw new Error("could not");
      },
    };
    const jobs: SessionSlot<object> = {
      key: "jobs",
      create: () => ({}),
      dispose: () => void released.push("jobs"),
    };
    session.get(failing);
    session.get(jobs);
    // A process that goes on creating files in the session's dir for a while, as a killed command's
    // EXIT trap does: a single rmdir pass finds the directory refilled (ENOTEMPTY).
    const writer = spawn("sh", [
      "-c",
      'i=0; while [ $i -lt 400 ]; do : > "$1/f$i"; i=$((i+1)); done',
      "sh",
      session.dir,
    ]);
    // Listened for now: on a fast machine the writer may be done before dispose is.
    const exited = new Promise((resolve) => writer.once("exit", resolve));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await expect(session.dispose()).resolves.toBeUndefined();
    expect(released).toEqual(["jobs"]);
    await exited;
    removeTree(session.dir);
    expect(existsSync(session.dir)).toBe(false);
  });

  it("sweeps session dirs of dead owners (kept ones after 6 h), and any dir untouched for a week, but not live ones", async () => {
    const deadPid = spawnSync(process.execPath, ["-e", ""]).pid!;
    const make = (owner: number, ageHours: number, keep = false) => {
      const dir = mkdtempSync(join(tmpdir(), `cc-tools-session-${owner}-`));
      writeFileSync(join(dir, "out.txt"), "x");
      if (keep) writeFileSync(join(dir, ".cc-tools-keep"), "");
      const t = Date.now() / 1000 - ageHours * 3600;
      utimesSync(dir, t, t);
      return dir;
    };
    const dead = make(deadPid, 0);
    const deadKeptOld = make(deadPid, 7, true);
    const deadKeptRecent = make(deadPid, 1, true);
    const liveOld = make(process.ppid, 7);
    const liveAncient = make(process.ppid, 24 * 8);
    await sweepSessionDirs();
    expect([dead, deadKeptOld, deadKeptRecent, liveOld, liveAncient].map(existsSync)).toEqual([
      false,
      false,
      true,
      true,
      false,
    ]);
    for (const dir of [deadKeptRecent, liveOld]) rmSync(dir, { recursive: true });
  });
});
