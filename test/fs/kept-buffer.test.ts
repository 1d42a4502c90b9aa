import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import {
  giveBuffer,
  KEPT_BUFFER_MAX_BYTES,
  KEPT_BUFFER_MIN_BYTES,
  takeBuffer,
} from "../../src/fs/kept-buffer.js";
import { spawnSyncAnnounced } from "../../src/process/forks.js";

const run = promisify(execFile);
const LARGE = 2 * KEPT_BUFFER_MIN_BYTES;

describe("the kept buffer for large reads", () => {
  it("hands the same memory back to the next large read once it was given back", () => {
    const first = takeBuffer(LARGE);
    first[0] = 42;
    giveBuffer(first.subarray(0, LARGE));
    const second = takeBuffer(LARGE);
    expect(second.buffer).toBe(first.buffer);
    // Taken means taken: a read while it is out gets a buffer of its own.
    expect(takeBuffer(LARGE).buffer).not.toBe(first.buffer);
    giveBuffer(second);
  });

  it("has room for a file that grows a little between reads", () => {
    const first = takeBuffer(LARGE);
    giveBuffer(first);
    const grown = takeBuffer(LARGE + 4096);
    expect(grown.buffer).toBe(first.buffer);
    giveBuffer(grown);
  });

  it("keeps a buffer for a file just under the largest size kept (its room stops there)", () => {
    const size = KEPT_BUFFER_MAX_BYTES - 1024 * 1024;
    const first = takeBuffer(size);
    expect(first.length).toBe(KEPT_BUFFER_MAX_BYTES);
    giveBuffer(first.subarray(0, size));
    expect(takeBuffer(size).buffer).toBe(first.buffer);
  });

  it("keeps only buffers it handed out, and none for small reads", () => {
    const foreign = Buffer.allocUnsafeSlow(LARGE);
    giveBuffer(foreign);
    expect(takeBuffer(LARGE).buffer).not.toBe(foreign.buffer);
    // A small read gets an ordinary buffer (a slice of Node's pool), which is never kept.
    const small = takeBuffer(1024);
    expect(small.length).toBe(1024);
    giveBuffer(small);
    expect(takeBuffer(LARGE).buffer).not.toBe(small.buffer);
  });

  it("lets the buffer go when the process spawns (the fork makes reusing its pages as slow as fresh ones)", async () => {
    const first = takeBuffer(LARGE);
    giveBuffer(first);
    await run("true");
    expect(takeBuffer(LARGE).buffer).not.toBe(first.buffer);
  });

  it("lets a buffer that was out while the process forked go when it comes back, its pages shared with the fork", () => {
    const out = takeBuffer(LARGE);
    spawnSyncAnnounced("true", [], { encoding: "utf8" });
    giveBuffer(out);
    expect(out.length).toBe(0);
    expect(takeBuffer(LARGE).buffer).not.toBe(out.buffer);
    // One taken after the fork is kept as before.
    const after = takeBuffer(LARGE);
    giveBuffer(after);
    expect(takeBuffer(LARGE).buffer).toBe(after.buffer);
  });

  it("lets the buffer go for this project's synchronous spawns too, which Node does not announce", () => {
    const first = takeBuffer(LARGE);
    giveBuffer(first);
    spawnSyncAnnounced("true", [], { encoding: "utf8" });
    expect(first.length).toBe(0);
    expect(takeBuffer(LARGE).buffer).not.toBe(first.buffer);
  });

  it("gives the pages of a buffer it lets go back to the system then, without waiting for a collection", async () => {
    const size = 16 * 1024 * 1024;
    const first = takeBuffer(size);
    first.fill(1); // resident
    giveBuffer(first);
    const before = process.memoryUsage.rss();
    await run("true");
    // Released: the memory is gone, and a view of it reads as empty rather than as stale bytes.
    expect(before - process.memoryUsage.rss()).toBeGreaterThan(size / 2);
    expect(first.length).toBe(0);
  });

  it("gives back at once a buffer it does not keep (one is kept already, as large)", () => {
    const kept = takeBuffer(LARGE);
    const other = takeBuffer(LARGE);
    giveBuffer(kept);
    giveBuffer(other);
    expect(other.length).toBe(0);
    expect(kept.length).toBeGreaterThanOrEqual(LARGE);
    expect(takeBuffer(LARGE).buffer).toBe(kept.buffer);
  });
});
