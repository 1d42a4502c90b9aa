import { readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { SETTLED_STAMP_MS } from "../../../src/fs/stamp.js";
import {
  ReplaceCheck,
  readCurrent,
  STAMPED_MIN_BYTES,
  writeAndRecord,
} from "../../../src/tools/file/guard.js";
import { call, fileContext } from "./util.js";

/**
 * The check around the rename of a file whose read came with a settled stamp (src/fs/stamp.ts): the stamp
 * stands in for comparing the bytes, and still catches every write of another program.
 */

const linux = process.platform === "linux";
/** A file large enough to be stamped, and the same size again with other bytes. */
const OURS = `ours to change\n${"o".repeat(STAMPED_MIN_BYTES)}\n`;
const THEIRS = `theirs, in time\n${"t".repeat(STAMPED_MIN_BYTES - 1)}\n`;
const CHANGED = `changed by us\n${"o".repeat(STAMPED_MIN_BYTES)}\n`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A file written, then left alone until a stamp of it is settled; read with Read in `ctx`'s session. */
async function settledFile(ctx: ReturnType<typeof fileContext>, content: string) {
  const path = join(ctx.workingDir, "f.txt");
  writeFileSync(path, content);
  await pause(2 * SETTLED_STAMP_MS);
  expect((await call(ctx, "Read", { file_path: path })).isError).toBe(false);
  return path;
}

/** Bytes read through any FileHandle while `work` runs. */
async function bytesReadDuring(work: () => Promise<unknown>): Promise<number> {
  const probe = await open(import.meta.filename ?? new URL(import.meta.url).pathname, "r");
  const proto = Object.getPrototypeOf(probe) as {
    read: (...args: unknown[]) => Promise<{ bytesRead: number }>;
  };
  await probe.close();
  const read = proto.read;
  let total = 0;
  proto.read = async function (this: unknown, ...args: unknown[]) {
    const result = await read.apply(this, args);
    total += result.bytesRead;
    return result;
  };
  try {
    await work();
  } finally {
    proto.read = read;
  }
  return total;
}

describe.runIf(linux)("the replace check of a file read with a settled stamp", () => {
  it("a small file has no stamp taken: comparing its bytes costs less", async () => {
    const ctx = fileContext();
    const path = await settledFile(ctx, "small\n");
    expect((await readCurrent(path))!.stamp).toBeUndefined();
  });

  it("reads the file once: its stamp proves it unchanged before and after the rename", async () => {
    const ctx = fileContext();
    const size = 2 * STAMPED_MIN_BYTES;
    const path = await settledFile(ctx, `head\n${"x".repeat(size)}\n`);
    const read = await bytesReadDuring(async () => {
      const result = await call(ctx, "Edit", { file_path: path, old_string: "head", new_string: "HEAD" });
      expect(result.isError).toBe(false);
    });
    // The basis only (comparing the bytes would read them twice more).
    expect(read).toBeGreaterThan(size);
    expect(read).toBeLessThan(1.5 * size);
    expect(readFileSync(path, "utf8").startsWith("HEAD\n")).toBe(true);
  });

  it("refuses when another program wrote the file in place, keeping its size, after the read", async () => {
    const ctx = fileContext();
    const path = await settledFile(ctx, OURS);
    const basis = (await readCurrent(path))!;
    expect(basis.stamp).toBeDefined();
    expect(THEIRS.length).toBe(OURS.length);
    const write = writeAndRecord(ctx, path, basis, Buffer.from(CHANGED), undefined, {
      // While the new content syncs: after the read, before the rename.
      whileSyncing: () => writeFileSync(path, THEIRS),
    });
    await expect(write).rejects.toThrow(/changed on disk since you read it/);
    expect(readFileSync(path, "utf8")).toBe(THEIRS);
    expect(readdirSync(dirname(path)).filter((name) => name.includes("cc-tools"))).toEqual([]);
  });

  it("puts back a write into the old file between the check and the rename", async () => {
    const ctx = fileContext();
    const path = await settledFile(ctx, OURS);
    const basis = (await readCurrent(path))!;
    expect(basis.stamp).toBeDefined();
    const check = new ReplaceCheck(ctx, path, basis);
    await check.beforeRename();
    // Another program writes the old file in place (same inode, same size) before the rename.
    writeFileSync(path, THEIRS);
    const temp = join(dirname(path), "new.tmp");
    writeFileSync(temp, CHANGED);
    renameSync(temp, path);
    await expect(check.afterRename([Buffer.from(CHANGED)])).rejects.toThrow(/at the same moment/);
    expect(readFileSync(path, "utf8")).toBe(THEIRS);
  });
});
