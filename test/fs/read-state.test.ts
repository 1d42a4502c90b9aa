import { describe, expect, it } from "vitest";
import { Session } from "../../src/core/session.js";
import {
  changeDiff,
  contentHash,
  contentHashBetweenTurns,
  deferredHash,
  ReadState,
  readStateSlot,
  settlePendingHashes,
} from "../../src/fs/read-state.js";
import { callEnded, callStarted, obtainGc } from "../../src/process/memory.js";

describe("read-state", () => {
  it("merges the line ranges read of unchanged content, and restarts them when the content changed", () => {
    const state = new ReadState();
    state.recordRead("/f", "h1", "x", [1, 10]);
    state.recordRead("/f", "h1", "x", [20, 30]);
    state.recordRead("/f", "h1", "x", [11, 19]);
    expect(state.get("/f")?.ranges).toEqual([[1, 30]]);
    state.recordRead("/f", "h2", "y", [5, 6]);
    expect(state.get("/f")?.ranges).toEqual([[5, 6]]);
  });

  it("survives a save and load through the session, as `--session` runs do, keeping hashes and never text", () => {
    const first = new Session();
    first.get(readStateSlot).recordRead("/a.txt", contentHash(Buffer.from("a")), "secret text\n", [1, 1]);
    first.get(readStateSlot).recordRead("/b.txt", "hb", "b\n", [1, 1]);
    const saved = JSON.stringify(first.snapshot());
    expect(saved).not.toContain("secret text");
    const second = new Session({ saved: JSON.parse(saved) });
    expect(second.get(readStateSlot).get("/a.txt")).toEqual({
      hash: contentHash(Buffer.from("a")),
      ranges: [[1, 1]],
    });
    // A state file from an older version that held text: the text is not taken back in.
    const old = new Session({
      saved: { "file-read-state": { "/c.txt": { hash: "hc", ranges: [], snapshot: "old text" } } },
    });
    expect(old.get(readStateSlot).get("/c.txt")).toEqual({ hash: "hc", ranges: [] });
  });

  it("keeps text only for small files, so memory stays bounded", () => {
    const state = new ReadState();
    state.recordRead("/big", "h", "x".repeat(300 * 1024), [1, 1]);
    expect(state.get("/big")?.snapshot).toBeUndefined();
    expect(state.get("/big")?.hash).toBe("h");
  });

  it("drops the oldest snapshots first when the session budget is spent", () => {
    const state = new ReadState();
    const text = "y".repeat(200 * 1024);
    for (let i = 0; i < 100; i++) state.recordRead(`/f${i}`, `h${i}`, text, [1, 1]);
    expect(state.get("/f0")?.snapshot).toBeUndefined();
    expect(state.get("/f0")?.hash).toBe("h0");
    expect(state.get("/f99")?.snapshot).toBe(text);
  });

  it("diffs with file line numbers, and gives up on large changes", () => {
    const before = "a\nb\nc\nd\ne\nf\n";
    expect(changeDiff(before, "a\nb\nc\nD\ne\nf\n")).toBe(
      "@@ lines 2-6 then, 2-6 now @@\n b\n c\n-d\n+D\n e\n f",
    );
    const many = Array.from({ length: 500 }, (_, i) => `${i}`).join("\n");
    expect(changeDiff(many, many.replaceAll("1", "x"))).toBeUndefined();
  });

  it("shows a change of only the final newline as such, not as a line replaced by itself", () => {
    expect(changeDiff("alpha\nbeta", "alpha\nbeta\n")).toBe(
      "@@ lines 1-2 then, 1-2 now @@\n alpha\n-beta\n\\ (no newline at the end of the file)\n+beta",
    );
  });
});

describe("deferred hashes", () => {
  it("are taken at once by settlePendingHashes, letting go of the content they held", () => {
    const released: string[] = [];
    const first = deferredHash(Buffer.from("one"), () => released.push("one"));
    const second = deferredHash([Buffer.from("tw"), Buffer.from("o")], () => released.push("two"));
    expect(released).toEqual([]);
    settlePendingHashes();
    expect(released.sort()).toEqual(["one", "two"]);
    expect(first()).toBe(contentHash(Buffer.from("one")));
    expect(second()).toBe(contentHash(Buffer.from("two")));
    // Settled once: neither settling again nor reading the hash calls back a second time.
    settlePendingHashes();
    expect(released).toHaveLength(2);
  });

  it("are taken once the call that wrote has answered, before the next call, not while it runs", async () => {
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    const released: string[] = [];
    callStarted();
    deferredHash(Buffer.from("written"), () => released.push("written"));
    await nextTurn();
    // The call still runs (it releases its lock, builds its result).
    expect(released).toEqual([]);
    callEnded();
    // The host writes the answer in the turn the call ended: the hash comes after it.
    expect(released).toEqual([]);
    await nextTurn();
    expect(released).toEqual(["written"]);
  });
});

describe("a hash taken a slice per turn of the event loop", () => {
  it("is the content's hash, whatever its size against the slice", async () => {
    for (const size of [0, 1, 128 * 1024 - 1, 128 * 1024, 128 * 1024 + 1, 1024 * 1024 + 3]) {
      const bytes = Buffer.alloc(size, "0123456789abcdef");
      expect(await contentHashBetweenTurns(bytes)).toBe(contentHash(bytes));
    }
  });

  it("lets other work of the process run between its slices", async () => {
    const order: string[] = [];
    const hashing = contentHashBetweenTurns(Buffer.alloc(1024 * 1024, 1)).then(() => order.push("hashed"));
    setImmediate(() => order.push("other work"));
    await hashing;
    expect(order).toEqual(["other work", "hashed"]);
  });
});

describe("a read recorded with its bytes, hashed after the call", () => {
  it("merges or restarts its ranges as a read recorded with the hash would", () => {
    let hashed = 0;
    const state = new ReadState();
    const read = (text: string, range: [number, number]) =>
      state.recordReadLater("/f", Buffer.from(text), text, range, () => hashed++);
    read("same", [1, 10]);
    read("same", [11, 20]);
    // Nothing hashed yet: the hashes wait for whoever needs them, or for their time.
    expect(hashed).toBe(0);
    expect(state.get("/f")?.ranges).toEqual([[1, 20]]);
    expect(hashed).toBe(2);
    expect(state.get("/f")?.hash).toBe(contentHash(Buffer.from("same")));
    read("changed", [3, 4]);
    state.recordRead("/f", contentHash(Buffer.from("changed")), "changed", [5, 9]);
    expect(state.get("/f")?.ranges).toEqual([[3, 9]]);
    read("again", [7, 7]);
    settlePendingHashes();
    expect(hashed).toBe(4);
    expect(state.get("/f")?.ranges).toEqual([[7, 7]]);
    // The saved form holds the values.
    expect(JSON.parse(JSON.stringify(state.toJSON()))["/f"]).toEqual({
      hash: contentHash(Buffer.from("again")),
      ranges: [[7, 7]],
    });
  });

  it("lets the earlier read of the file go once hashed, its text with it", async () => {
    const gc = obtainGc()!;
    const state = new ReadState();
    const big = "x".repeat(100_000);
    state.recordReadLater("/f", Buffer.from(big), big, [1, 1]);
    const first = new WeakRef(state.get("/f")!);
    state.recordReadLater("/f", Buffer.from(big), big, [1, 1]);
    settlePendingHashes();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(first.deref()).toBeUndefined();
    expect(state.get("/f")?.ranges).toEqual([[1, 1]]);
  });
});
