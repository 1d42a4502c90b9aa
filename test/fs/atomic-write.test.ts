import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  linkSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { atomicWrite } from "../../src/fs/atomic-write.js";
import { tempDir } from "../helpers/context.js";

const CHILD = fileURLToPath(new URL("../fixtures/file/write-child.ts", import.meta.url));
/** The repository root, where `--import tsx` resolves. */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Large enough that encoding, writing and fsyncing it takes a while. */
const SIZE = 48 * 1024 * 1024;

/**
 * Starts the child, waits for it to announce the Write, waits `delayMs`, then SIGKILLs it (with no delay
 * given, lets it finish). Resolves with what it printed and how long after "writing" it ended.
 */
function killDuringWrite(
  path: string,
  fill: string,
  delayMs?: number,
): Promise<{ said: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, path, String(SIZE), fill], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    let started = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (started || !out.includes("writing")) return;
      started = performance.now();
      if (delayMs !== undefined) setTimeout(() => child.kill("SIGKILL"), delayMs);
    });
    child.on("error", reject);
    child.on("exit", () => resolve({ said: out, ms: performance.now() - started }));
  });
}

describe("atomicWrite", () => {
  it("creates parents, keeps the mode of the file it replaces, and leaves no temp file", async () => {
    const dir = tempDir();
    const path = join(dir, "x", "y.txt");
    await atomicWrite(path, Buffer.from("a"), { createParents: true });
    chmodSync(path, 0o640);
    await atomicWrite(path, Buffer.from("c"));
    expect(readFileSync(path, "utf8")).toBe("c");
    expect(statSync(path).mode & 0o777).toBe(0o640);
    expect(readdirSync(join(dir, "x"))).toEqual(["y.txt"]);
  });

  it("removes temp files killed writers left behind (dead pid, or old), but not live ones or other files", async () => {
    const dir = tempDir();
    const path = join(dir, "y.txt");
    writeFileSync(path, "old");
    const deadPid = spawnSync(process.execPath, ["-e", ""]).pid!;
    const dead = join(dir, `.other.txt.cc-tools-${deadPid}-0123456789ab.tmp`);
    const live = join(dir, `.y.txt.cc-tools-${process.ppid}-ba9876543210.tmp`);
    const oldLive = join(dir, `.z.txt.cc-tools-${process.ppid}-aaaaaaaaaaaa.tmp`);
    const unrelated = join(dir, ".y.txt.mine.tmp");
    for (const p of [dead, live, oldLive, unrelated]) writeFileSync(p, "partial");
    const hourAgo = Date.now() / 1000 - 3600;
    utimesSync(oldLive, hourAgo, hourAgo);
    utimesSync(unrelated, hourAgo, hourAgo);
    await atomicWrite(path, Buffer.from("new"));
    expect(readdirSync(dir).sort()).toEqual([basename(live), ".y.txt.mine.tmp", "y.txt"]);
  });

  it("abandons the write when the work done while syncing throws: the old file stays, no temp file", async () => {
    const dir = tempDir();
    const path = join(dir, "f.txt");
    writeFileSync(path, "old\n");
    let ran = false;
    await expect(
      atomicWrite(path, Buffer.from("new\n"), {
        whileSyncing: () => {
          ran = true;
          throw new Error("stale");
        },
      }),
    ).rejects.toThrow("stale");
    expect(ran).toBe(true);
    expect(readFileSync(path, "utf8")).toBe("old\n");
    expect(readdirSync(dir)).toEqual(["f.txt"]);
  });

  it("writes pieces in order, empty ones too, and more of them than one system call takes", async () => {
    const dir = tempDir();
    const path = join(dir, "pieces.txt");
    writeFileSync(path, "old\n");
    // Linux takes at most 1024 buffers per writev.
    const pieces = Array.from({ length: 3000 }, (_, i) => Buffer.from(i % 7 === 0 ? "" : `${i},`));
    await atomicWrite(path, pieces);
    expect(readFileSync(path, "utf8")).toBe(Buffer.concat(pieces).toString());
  });

  it("writes a file whose name is 255 bytes, the most a name may have", async () => {
    const dir = tempDir();
    for (const name of ["n".repeat(255), `${"é".repeat(126)}xyz`]) {
      expect(Buffer.byteLength(name)).toBe(255);
      const path = join(dir, name);
      await atomicWrite(path, Buffer.from("first"));
      await atomicWrite(path, Buffer.from("second"));
      expect(readFileSync(path, "utf8")).toBe("second");
    }
    expect(readdirSync(dir)).toHaveLength(2);
  });

  it("reports other hard links, which keep the old content", async () => {
    const dir = tempDir();
    const path = join(dir, "a.txt");
    writeFileSync(path, "old");
    linkSync(path, join(dir, "b.txt"));
    expect((await atomicWrite(path, Buffer.from("new"))).separatedLinks).toBe(1);
    expect(readFileSync(join(dir, "b.txt"), "utf8")).toBe("old");
    expect((await atomicWrite(path, Buffer.from("newer"))).separatedLinks).toBe(0);
  });

  it.skipIf(process.getuid?.() !== 0)("keeps the owner of the file it replaces (when root)", async () => {
    const path = join(tempDir(), "owned.txt");
    writeFileSync(path, "old");
    chownSync(path, 1234, 2345);
    await atomicWrite(path, Buffer.from("new"));
    expect(statSync(path)).toMatchObject({ uid: 1234, gid: 2345 });
  });

  it("leaves the old or the new file, never a partial one, when the writer is killed mid-Write", async () => {
    const dir = tempDir();
    const path = join(dir, "big.txt");
    const outcomes: string[] = [];
    let previous = "a";
    writeFileSync(path, previous.repeat(SIZE));
    // An uninterrupted run tells how long a Write takes here; the kills then land across that span.
    const full = await killDuringWrite(path, "b", undefined);
    expect(full.said).toContain("done");
    previous = "b";
    for (const [i, share] of [0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2].entries()) {
      const fill = String.fromCharCode(99 + i);
      const { said } = await killDuringWrite(path, fill, Math.round(full.ms * share));
      expect(said).toContain("writing");
      const bytes = readFileSync(path);
      expect(bytes.length).toBe(SIZE);
      const whole =
        bytes[0] === bytes.at(-1) && bytes.indexOf(bytes[0] === fill.charCodeAt(0) ? previous : fill) === -1;
      expect(whole).toBe(true);
      const now = String.fromCharCode(bytes[0]!);
      expect([previous, fill]).toContain(now);
      outcomes.push(now === fill ? "new" : "old");
      previous = now;
    }
    // Some kills landed before the rename: the test did interrupt writes.
    expect(outcomes).toContain("old");
  }, 120_000);
});
