import { closeSync, openSync, utimesSync, writeFileSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SETTLED_STAMP_MS, sameStamp, settledStamp, stampOf } from "../../src/fs/stamp.js";
import { tempDir } from "../helpers/context.js";

const linux = process.platform === "linux";
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The settled stamp of `path` taken now, through an open handle as readCurrent takes it. */
async function stampNow(path: string) {
  const handle = await open(path, "r");
  try {
    return await settledStamp(handle, path);
  } finally {
    await handle.close();
  }
}

describe.runIf(linux)("a file's settled stamp", () => {
  it("is not given for a file changed less than SETTLED_STAMP_MS ago, and is given once it has settled", async () => {
    const path = join(tempDir(), "f.txt");
    // Judged only where the stamp came within SETTLED_STAMP_MS of the write (a loaded machine can take longer).
    let judged = 0;
    for (let attempt = 0; attempt < 10 && judged === 0; attempt++) {
      const written = Date.now();
      writeFileSync(path, "one\n");
      const stamp = await stampNow(path);
      if (Date.now() - written >= SETTLED_STAMP_MS) continue;
      expect(stamp).toBeUndefined();
      judged++;
    }
    expect(judged).toBe(1);
    await pause(2 * SETTLED_STAMP_MS);
    const stamp = await stampNow(path);
    expect(stamp).toBeDefined();
    const handle = await open(path, "r");
    expect(sameStamp(stampOf(await handle.stat({ bigint: true })), stamp!)).toBe(true);
    await handle.close();
  });

  it("changes with a write after it that keeps the size", async () => {
    const path = join(tempDir(), "f.txt");
    writeFileSync(path, "same size\n");
    await pause(2 * SETTLED_STAMP_MS);
    const stamp = (await stampNow(path))!;
    const fd = openSync(path, "r+");
    writeSync(fd, "SAME", 0);
    closeSync(fd);
    const handle = await open(path, "r");
    const now = stampOf(await handle.stat({ bigint: true }));
    await handle.close();
    expect(now.size).toBe(stamp.size);
    expect(sameStamp(now, stamp)).toBe(false);
  });

  it("changes with a write after it that puts the mtime back: the ctime is the kernel's alone", async () => {
    const path = join(tempDir(), "f.txt");
    writeFileSync(path, "same size\n");
    const mtime = new Date("2026-01-02T03:04:05.678Z");
    utimesSync(path, mtime, mtime);
    await pause(2 * SETTLED_STAMP_MS);
    const stamp = (await stampNow(path))!;
    writeFileSync(path, "SAME SIZE\n");
    utimesSync(path, mtime, mtime);
    const handle = await open(path, "r");
    const now = stampOf(await handle.stat({ bigint: true }));
    await handle.close();
    expect([now.size, now.mtimeNs]).toEqual([stamp.size, stamp.mtimeNs]);
    expect(sameStamp(now, stamp)).toBe(false);
  });

  it("is not given on a file system whose times are not kept by this kernel's clock in nanoseconds (procfs)", async () => {
    // /proc/version has not changed since boot, and its times have nanoseconds: only the file system says no.
    const handle = await open("/proc/version", "r");
    const info = await handle.stat({ bigint: true });
    expect(info.ctimeNs < BigInt(Date.now() - 10 * SETTLED_STAMP_MS) * 1_000_000n).toBe(true);
    expect(await settledStamp(handle, "/proc/version")).toBeUndefined();
    await handle.close();
  });
});
