import { execFileSync } from "node:child_process";
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ReplaceCheck,
  readCurrent,
  requireFreshRead,
  writeAndRecord,
} from "../../../src/tools/file/guard.js";
import { call, fileContext } from "./util.js";

/**
 * The check around the rename (ReplaceCheck in src/tools/file/guard.ts), driven step by step: another
 * program's write of the same size, which differs from what was read only in its last bytes, is seen
 * before the rename and after it, in a small file and in one read through several compare chunks.
 */

/** What was read, and another program's bytes of the same size that differ only at the end. */
function contents(size: number) {
  const body = "o".repeat(size);
  return { ours: `${body}ours\n`, theirs: `${body}THEM\n`, changed: `changed by us\n${body}ours\n` };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A file with `content`, read in `ctx`'s session. `settled`: left alone long enough before it is read
 * that its times alone tell, at the rename, whether it was written since the compare.
 */
async function readFile(ctx: ReturnType<typeof fileContext>, content: string, settled = false) {
  const path = join(ctx.workingDir, "f.txt");
  writeFileSync(path, content);
  if (settled) await pause(50);
  expect((await call(ctx, "Read", { file_path: path, limit: 1 })).isError).toBe(false);
  return path;
}

/** A file read in a session, and its check run up to the compare that comes while the new content syncs. */
async function compared(content: string, settled = false) {
  const ctx = fileContext();
  const path = await readFile(ctx, content, settled);
  const check = new ReplaceCheck(ctx, path, (await readCurrent(path))!);
  await check.duringSync();
  check.refuseIfChanged();
  return { ctx, path, check };
}

describe.each([
  ["a small file", 100],
  ["a file larger than a compare chunk", 3 * 1024 * 1024 + 17],
])("the check around the rename, %s", (_name, size) => {
  const { ours, theirs, changed } = contents(size);

  it("refuses when another program wrote the file in place after the read", async () => {
    const ctx = fileContext();
    const path = await readFile(ctx, ours);
    const basis = (await readCurrent(path))!;
    const write = writeAndRecord(ctx, path, basis, Buffer.from(changed), undefined, {
      // While the new content syncs: after the read, before the rename.
      whileSyncing: () => writeFileSync(path, theirs),
    });
    await expect(write).rejects.toThrow(/changed on disk since you read it/);
    expect(readFileSync(path, "utf8")).toBe(theirs);
    expect(readdirSync(dirname(path)).filter((name) => name.includes("cc-tools"))).toEqual([]);
  });

  it("puts back a write into the old file between the check and the rename", async () => {
    const { path, check } = await compared(ours);
    await check.beforeRename();
    // Another program writes the old file in place (same inode, same size) before the rename.
    writeFileSync(path, theirs);
    const temp = join(dirname(path), "new.tmp");
    writeFileSync(temp, changed);
    renameSync(temp, path);
    await expect(check.afterRename([Buffer.from(changed)])).rejects.toThrow(/at the same moment/);
    expect(readFileSync(path, "utf8")).toBe(theirs);
  });

  it("refuses a write in place after the compare and before the rename, rather than putting it back", async () => {
    for (const settled of [false, true]) {
      const { path, check } = await compared(ours, settled);
      // A tick of the kernel's clock later, so that the write has times of its own on any kernel.
      await pause(12);
      writeFileSync(path, theirs);
      await expect(check.beforeRename()).rejects.toThrow(/changed on disk since you read it/);
      expect(readFileSync(path, "utf8")).toBe(theirs);
    }
  });

  it("does not replace a file another program renamed over it after the compare", async () => {
    for (const [content, message] of [
      [theirs, /changed on disk since you read it/],
      [ours, /was replaced by another file while this change was being written/],
    ] as const) {
      const { path, check } = await compared(ours);
      // Another program saves by renaming its own file over the name (as editors and sed -i do).
      const saved = join(dirname(path), "saved.tmp");
      writeFileSync(saved, content);
      renameSync(saved, path);
      const ino = statSync(path).ino;
      await expect(check.beforeRename()).rejects.toThrow(message);
      expect(statSync(path).ino).toBe(ino);
      expect(readFileSync(path, "utf8")).toBe(content);
    }
  });

  it("does not replace a symlink put in the file's place, even one leading to the file compared", async () => {
    const { path, check } = await compared(ours);
    const moved = join(dirname(path), "moved.txt");
    renameSync(path, moved);
    symlinkSync(moved, path);
    await expect(check.beforeRename()).rejects.toThrow(/was replaced by another file/);
    expect(lstatSync(path).isSymbolicLink()).toBe(true);
  });
});

describe("the check around the rename, other things in the file's place and failures", () => {
  it("refuses a FIFO or a directory put in the file's place without opening it", async () => {
    for (const make of [
      (path: string) => execFileSync("mkfifo", [path]),
      (path: string) => mkdirSync(path),
    ]) {
      const { path, check } = await compared("content\n");
      rmSync(path);
      make(path);
      await expect(check.beforeRename()).rejects.toThrow(/was replaced by another file/);
    }
  });

  it("refuses a file larger than a change reads, put in the file's place, without reading it", async () => {
    const { path, check } = await compared("content\n");
    const large = join(dirname(path), "large.bin");
    // Sparse: 65 MiB that take no room.
    writeFileSync(large, "");
    truncateSync(large, 65 * 1024 * 1024);
    renameSync(large, path);
    const probe = await open(path, "r");
    const proto = Object.getPrototypeOf(probe) as {
      read: (...args: unknown[]) => Promise<{ bytesRead: number }>;
    };
    await probe.close();
    const read = proto.read;
    let bytesRead = 0;
    proto.read = async function (this: unknown, ...args: unknown[]) {
      const result = await read.apply(this, args);
      bytesRead += result.bytesRead;
      return result;
    };
    try {
      await expect(check.beforeRename()).rejects.toThrow(/was replaced by another file/);
    } finally {
      proto.read = read;
    }
    expect(bytesRead).toBe(0);
  });

  it("gives the caller's refusal when both find the file changed, and records only what it showed", async () => {
    const ctx = fileContext();
    const path = await readFile(ctx, "v0\n");
    writeFileSync(path, "v1, which the model has not seen\n");
    const basis = (await readCurrent(path))!;
    const write = writeAndRecord(ctx, path, basis, Buffer.from("ours\n"), undefined, {
      whileSyncing: () => {
        // Changed again before the compare...
        writeFileSync(path, "v2, written by another program\n");
        // ...and the caller's own check refuses v1, showing it (and recording it as read).
        requireFreshRead(ctx, path, basis, basis.toString());
      },
    });
    await expect(write).rejects.toThrow(/v1, which the model has not seen/);
    // The model has seen v1, not v2: a Write made from v1 must not replace v2.
    const overwrite = await call(ctx, "Write", { file_path: path, content: "from v1\n" });
    expect(overwrite.text).toMatch(/changed on disk since you read it/);
    expect(readFileSync(path, "utf8")).toBe("v2, written by another program\n");
  });

  it("reports a failed sync as the Edit's error, leaving nothing behind", async () => {
    const ctx = fileContext();
    const path = await readFile(ctx, `head\n${"x".repeat(3 * 1024 * 1024)}\n`);
    const probe = await open(path, "r");
    const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    const sync = proto.sync;
    proto.sync = () => Promise.reject(Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" }));
    try {
      const result = await call(ctx, "Edit", { file_path: path, old_string: "head", new_string: "HEAD" });
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/EIO/);
    } finally {
      proto.sync = sync;
    }
    expect(readFileSync(path, "utf8").startsWith("head\n")).toBe(true);
    expect(readdirSync(dirname(path)).filter((name) => name.includes("cc-tools"))).toEqual([]);
  });
});
