import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { HandOver } from "../../src/process/hand-over.js";

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
