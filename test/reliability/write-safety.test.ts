import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lockPath } from "../../src/fs/siblings.js";
import { call, fileContext } from "../tools/file/util.js";

describe("writes that must not go ahead, and names that must work", () => {
  it("refuses to change a file its owner made read-only (0444), even as root", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "frozen.txt");
    writeFileSync(path, "keep me\n");
    chmodSync(path, 0o444);
    await call(ctx, "Read", { file_path: path });
    const edit = await call(ctx, "Edit", { file_path: path, old_string: "keep", new_string: "lose" });
    expect(edit.isError).toBe(true);
    expect(edit.text).toContain("is read-only (mode 0444)");
    expect(edit.text).toContain("chmod u+w");
    const write = await call(ctx, "Write", { file_path: path, content: "gone\n" });
    expect(write.text).toContain("is read-only");
    expect(readFileSync(path, "utf8")).toBe("keep me\n");
  });

  it("writes and edits a file whose name is 255 bytes", async () => {
    const ctx = fileContext();
    const name = `${"ü".repeat(120)}${"n".repeat(15)}`;
    expect(Buffer.byteLength(name)).toBe(255);
    const path = join(ctx.workingDir, name);
    expect((await call(ctx, "Write", { file_path: path, content: "one\n" })).isError).toBe(false);
    const edit = await call(ctx, "Edit", { file_path: path, old_string: "one", new_string: "two" });
    expect(edit.isError, edit.text).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("two\n");
    expect(readdirSync(ctx.workingDir)).toEqual([name]);
  });

  it("takes over a lock a killed process left, and sweeps it", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "a.txt");
    writeFileSync(path, "a\n");
    const lock = lockPath(path);
    mkdirSync(lock);
    const minuteAgo = Date.now() / 1000 - 60;
    utimesSync(lock, minuteAgo, minuteAgo);
    // Another file's leftover lock in the same directory goes too.
    const other = lockPath(join(ctx.workingDir, "b.txt"));
    mkdirSync(other);
    utimesSync(other, minuteAgo, minuteAgo);
    await call(ctx, "Read", { file_path: path });
    const edit = await call(ctx, "Edit", { file_path: path, old_string: "a", new_string: "b" });
    expect(edit.isError, edit.text).toBe(false);
    expect(readdirSync(ctx.workingDir)).toEqual(["a.txt"]);
  });

  it("takes over at once a fresh lock whose owner is dead or whose release a kill cut short", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "a.txt");
    writeFileSync(path, "a\n");
    const dead = spawnSync("true").pid!;
    mkdirSync(lockPath(path));
    writeFileSync(join(lockPath(path), "owner"), String(dead));
    // A release is unlink(owner) then rmdir: a writer killed between the two leaves an ownerless lock,
    // here another file's, which the sweep must remove.
    mkdirSync(lockPath(join(ctx.workingDir, "b.txt")));
    await call(ctx, "Read", { file_path: path });
    const started = Date.now();
    const edit = await call(ctx, "Edit", { file_path: path, old_string: "a", new_string: "b" });
    expect(edit.isError, edit.text).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(readdirSync(ctx.workingDir)).toEqual(["a.txt"]);
  });
});

/** Sets or lists user.* extended attributes through Python (Node has no xattr API); undefined when unsupported. */
function xattr(path: string, set?: Record<string, string>): Record<string, string> | undefined {
  const script = `
import os, sys, json
p = sys.argv[1]
for k, v in json.loads(sys.argv[2]).items(): os.setxattr(p, k, v.encode())
print(json.dumps({k: os.getxattr(p, k).decode() for k in os.listxattr(p) if k.startswith("user.")}))`;
  const run = spawnSync("python3", ["-c", script, path, JSON.stringify(set ?? {})], { encoding: "utf8" });
  return run.status === 0 ? JSON.parse(run.stdout) : undefined;
}

const probe = join(tmpdir(), `cc-tools-xattr-probe-${process.pid}`);
writeFileSync(probe, "");
const xattrsWork = xattr(probe, { "user.probe": "1" }) !== undefined;
rmSync(probe);

describe.skipIf(!xattrsWork)("extended attributes", () => {
  it("survive Edit and Write", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "tagged.txt");
    writeFileSync(path, "one\n");
    expect(xattr(path, { "user.origin": "downloaded", "user.note": "keep" })).toEqual({
      "user.origin": "downloaded",
      "user.note": "keep",
    });
    await call(ctx, "Read", { file_path: path });
    expect((await call(ctx, "Edit", { file_path: path, old_string: "one", new_string: "two" })).isError).toBe(
      false,
    );
    expect((await call(ctx, "Write", { file_path: path, content: "three\n" })).isError).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("three\n");
    expect(xattr(path)).toEqual({ "user.origin": "downloaded", "user.note": "keep" });
  });
});
