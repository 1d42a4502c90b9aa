import {
  lstatSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ReplaceCheck, readCurrent, writeAndRecord } from "../../../src/tools/file/guard.js";
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

async function readFile(ctx: ReturnType<typeof fileContext>, content: string) {
  const path = join(ctx.workingDir, "f.txt");
  writeFileSync(path, content);
  expect((await call(ctx, "Read", { file_path: path, limit: 1 })).isError).toBe(false);
  return path;
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

  /** A file read in a session, and its check run up to the compare that comes while the new content syncs. */
  async function compared() {
    const ctx = fileContext();
    const path = await readFile(ctx, ours);
    const check = new ReplaceCheck(ctx, path, (await readCurrent(path))!);
    await check.duringSync();
    return { path, check };
  }

  it("puts back a write into the old file between the check and the rename", async () => {
    const { path, check } = await compared();
    await check.beforeRename();
    // Another program writes the old file in place (same inode, same size) before the rename.
    writeFileSync(path, theirs);
    const temp = join(dirname(path), "new.tmp");
    writeFileSync(temp, changed);
    renameSync(temp, path);
    await expect(check.afterRename([Buffer.from(changed)])).rejects.toThrow(/at the same moment/);
    expect(readFileSync(path, "utf8")).toBe(theirs);
  });

  it("does not replace a file another program renamed over it after the compare, even with the same bytes", async () => {
    for (const content of [theirs, ours]) {
      const { path, check } = await compared();
      // Another program saves by renaming its own file over the name (as editors and sed -i do).
      const saved = join(dirname(path), "saved.tmp");
      writeFileSync(saved, content);
      renameSync(saved, path);
      const ino = statSync(path).ino;
      await expect(check.beforeRename()).rejects.toThrow(/changed on disk since you read it/);
      expect(statSync(path).ino).toBe(ino);
      expect(readFileSync(path, "utf8")).toBe(content);
    }
  });

  it("does not replace a symlink put in the file's place, even one leading to the file compared", async () => {
    const { path, check } = await compared();
    const moved = join(dirname(path), "moved.txt");
    renameSync(path, moved);
    symlinkSync(moved, path);
    await expect(check.beforeRename()).rejects.toThrow(/changed on disk since you read it/);
    expect(lstatSync(path).isSymbolicLink()).toBe(true);
  });
});
