import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { ReadState, readStateSlot, settlePendingHashes } from "../../../src/fs/read-state.js";
import { obtainGc } from "../../../src/process/memory.js";
import { call, fileContext } from "./util.js";

// The buffers Read reads files into, watched (not changed), to see what stays alive.
const handedOut = vi.hoisted(() => [] as WeakRef<ArrayBufferLike>[]);
vi.mock("../../../src/fs/kept-buffer.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../../src/fs/kept-buffer.js")>();
  return {
    ...real,
    takeBuffer: (size: number) => {
      const taken = real.takeBuffer(size);
      handedOut.push(new WeakRef(taken.buffer));
      return taken;
    },
  };
});

/** Takes every pending hash, then collects twice. */
async function settleAndCollect(): Promise<void> {
  settlePendingHashes();
  const gc = obtainGc()!;
  gc();
  await new Promise((resolve) => setImmediate(resolve));
  gc();
}

describe("what a Read's record keeps once its hash is taken", () => {
  it("not the bytes, even where what runs after the hash refers to them", async () => {
    const state = new ReadState();
    let bytesRef!: WeakRef<Buffer>;
    (() => {
      const bytes = Buffer.alloc(512 * 1024, 0x61);
      bytesRef = new WeakRef(bytes);
      state.recordReadLater("/f", bytes, undefined, [1, 1], () => void bytes.length);
    })();
    await settleAndCollect();
    expect(state.get("/f")?.ranges).toEqual([[1, 1]]);
    expect(bytesRef.deref()).toBeUndefined();
  });

  it("not the buffers of the files a session read, one per file", async () => {
    const ctx = fileContext();
    handedOut.length = 0;
    for (let i = 0; i < 10; i++) {
      const path = join(ctx.workingDir, `f${i}.txt`);
      writeFileSync(path, `${i}\n`.repeat(100_000));
      await call(ctx, "Read", { file_path: path, limit: 1 });
    }
    expect(handedOut).toHaveLength(10);
    await settleAndCollect();
    expect(ctx.session.get(readStateSlot).get(join(ctx.workingDir, "f9.txt"))?.ranges).toEqual([[1, 1]]);
    expect(handedOut.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
  });
});
