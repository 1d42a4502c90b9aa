import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { HandOver } from "../../src/process/hand-over.js";
import { tempDir } from "../helpers/context.js";

// Counts the writes made from libuv's pool; they still write.
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  return { ...real, write: vi.fn(real.write) };
});

/** A child that copies its stdin to stdout, and what it copied once its stdin ended. */
function cat() {
  const child = spawn("cat", [], { stdio: ["pipe", "pipe", "ignore"] });
  child.stdin.on("error", () => {});
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  const copied = new Promise<string>((resolve) =>
    child.on("close", () => resolve(Buffer.concat(chunks).toString())),
  );
  return { child, copied };
}

/** Polls `check` every 10 ms until it holds; fails after 5 s. */
async function waitUntil(check: () => boolean): Promise<void> {
  for (const started = Date.now(); !check(); ) {
    if (Date.now() - started > 5_000) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("HandOver", () => {
  it("writes from the pool, in order, and ends the input after the last", async () => {
    const { child, copied } = cat();
    const input = new HandOver(child.stdin);
    const write = vi.mocked(fs.write);
    write.mockClear();
    input.write("12\nfirst script");
    // Many writes at once: the pool's four threads would take them in any order.
    const pieces = Array.from({ length: 200 }, (_, i) => `${i},`);
    for (const piece of pieces) input.write(piece);
    input.write("g", true);
    expect(await copied).toBe(`12\nfirst script${pieces.join("")}g`);
    expect(write.mock.calls.length).toBe(pieces.length + 2);
  });

  it("leaves to the stream what a full pipe does not take, and keeps the order behind it", async () => {
    const { child, copied } = cat();
    const input = new HandOver(child.stdin);
    // Larger than a pipe holds: the pool's write is short (or EAGAIN) and the stream writes the rest.
    const big = "x".repeat(300_000);
    const texts = ["a", big, "b", "c".repeat(70_000), "d"];
    for (const text of texts.slice(0, -1)) input.write(text);
    input.write(texts.at(-1)!, true);
    const got = await copied;
    expect(got.length).toBe(texts.join("").length);
    expect(got).toBe(texts.join(""));
  });

  it("writes through the stream when told not to use the pool", async () => {
    const { child, copied } = cat();
    const input = new HandOver(child.stdin, false);
    const write = vi.mocked(fs.write);
    write.mockClear();
    input.write("script");
    input.write("g", true);
    expect(await copied).toBe("scriptg");
    expect(write).not.toHaveBeenCalled();
  });

  it("keeps the descriptor until the pool's write is done, so it cannot land in a file opened meanwhile", async () => {
    const dir = tempDir();
    // Every thread of the pool blocks reading a FIFO nobody has written to yet, so the hand-over's write
    // waits behind them. (Opened read-write: the open itself never blocks, and a byte written later
    // releases a read whether it has started or is still queued.)
    const fifos = Array.from({ length: 8 }, (_, i) => join(dir, `fifo-${i}`));
    for (const fifo of fifos) execFileSync("mkfifo", [fifo]);
    const blockers = fifos.map((fifo) => fs.openSync(fifo, fs.constants.O_RDWR));
    const released = blockers.map(
      (fd) => new Promise((resolve) => fs.read(fd, Buffer.alloc(1), 0, 1, null, resolve)),
    );
    const child = spawn("sleep", ["30"], { stdio: ["pipe", "ignore", "ignore"] });
    child.stdin.on("error", () => {});
    const stdinFd = (child.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    const input = new HandOver(child.stdin);
    input.write("SECRET-SCRIPT\n");
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("exit", resolve));
    await new Promise((resolve) => setImmediate(resolve));
    // Node has destroyed the child's stdin; a file opened now takes the lowest free descriptor.
    expect(child.stdin.destroyed).toBe(true);
    const victim = join(dir, "victim.txt");
    const victimFd = fs.openSync(victim, "w");
    expect(victimFd).not.toBe(stdinFd);
    // Free the pool: the queued write runs now, into the dead child's pipe, not into the victim.
    for (const fd of blockers) fs.writeSync(fd, "x");
    await Promise.all(released);
    for (const fd of blockers) fs.closeSync(fd);
    await waitUntil(() => (child.stdin as unknown as { _handle: unknown })._handle === null);
    fs.closeSync(victimFd);
    expect(fs.readFileSync(victim, "utf8")).toBe("");
    // And the stream let its descriptor go once the write was done (waitUntil above).
  });

  it("does not throw when the child is gone", async () => {
    const { child, copied } = cat();
    child.kill("SIGKILL");
    await copied;
    const input = new HandOver(child.stdin);
    input.write("late");
    input.write("later", true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(child.exitCode ?? child.signalCode).toBe("SIGKILL");
  });
});
