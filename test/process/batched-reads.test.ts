import { spawn, spawnSync } from "node:child_process";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { HOLD_BUDGET_BYTES, HOLD_BUDGET_PIECES, readInBatches } from "../../src/process/batched-reads.js";

/** Runs a Node script as a child and reads its stdout in batches, counting the reads. */
async function readChild(script: string) {
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  const stats = readInBatches(child.stdout, child);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, reads: chunks.length, text: Buffer.concat(chunks).toString("utf8"), stats };
}

const hasPython = spawnSync("python3", ["-c", ""]).status === 0;

const lines = (count: number) => Array.from({ length: count }, (_, i) => `piece ${i}\n`).join("");

describe("readInBatches", () => {
  it("gathers a slow writer's pieces into far fewer reads, every byte in order", async () => {
    // One write about every millisecond, like rg's one write per file with matches.
    const script = `
      const { writeSync } = require("node:fs");
      let i = 0;
      const timer = setInterval(() => {
        writeSync(1, "piece " + i + "\\n");
        if (++i === 150) clearInterval(timer);
      }, 1);`;
    const { code, reads, text, stats } = await readChild(script);
    expect(code).toBe(0);
    expect(text).toBe(lines(150));
    expect(stats.holds).toBeGreaterThan(5);
    expect(stats.fastWriter).toBe(false);
    expect(reads).toBeLessThan(100);
  });

  it("stops holding a writer that fills a short hold, and loses nothing", async () => {
    // Tens of thousands of tiny writes as fast as the child can make them: a hold of 1 ms gathers more
    // than the budget, so the rest is read as it comes.
    const script = `
      const { writeSync } = require("node:fs");
      for (let i = 0; i < 20000; i++) writeSync(1, "piece " + i + "\\n");`;
    const { code, text, stats } = await readChild(script);
    expect(code).toBe(0);
    expect(text).toBe(lines(20000));
    expect(stats.fastWriter).toBe(true);
    expect(stats.holds).toBeLessThan(20);
  });

  it("reads what the child wrote last, after its last hold began", async () => {
    const script = `
      const { writeSync } = require("node:fs");
      writeSync(1, "first\\n");
      setTimeout(() => writeSync(1, "last\\n"), 20);`;
    const { code, text } = await readChild(script);
    expect(code).toBe(0);
    expect(text).toBe("first\nlast\n");
  });

  it("leaves a stream that is not a pipe as it is", () => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    const stream = new PassThrough();
    expect(readInBatches(stream, child)).toEqual({ holds: 0, fastWriter: false });
    stream.end("data");
    expect(stream.read()?.toString()).toBe("data");
  });

  it.skipIf(!hasPython)(
    "keeps a hold's budget under half of what a child's pipe takes before its writer waits",
    async () => {
      // A child's stdout is a socket pair, which charges each write its own buffer: the number of writes it
      // takes, not only their bytes, is bounded. Measured in the child, on a socket pair of its own.
      const sizes = [1, 8, 64, 100, 123, 128, 192, 193, 196, 200, 256, 300, 1024, 4096];
      const script = `
import os, socket, stat, sys
print(stat.S_ISSOCK(os.fstat(1).st_mode))
for size in map(int, sys.argv[1:]):
    a, b = socket.socketpair()
    a.setblocking(False)
    n = 0
    try:
        while True:
            a.send(b"x" * size)
            n += 1
    except BlockingIOError:
        pass
    print(size, n)
`;
      const child = spawn("python3", ["-c", script, ...sizes.map(String)], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk));
      await new Promise((resolve) => child.on("close", resolve));
      const [isSocket, ...rows] = out.trim().split("\n");
      expect(isSocket).toBe("True");
      expect(rows).toHaveLength(sizes.length);
      for (const row of rows) {
        const [size, writes] = row.split(" ").map(Number) as [number, number];
        const budget = Math.min(HOLD_BUDGET_PIECES * size, HOLD_BUDGET_BYTES);
        expect(2 * budget, `writes of ${size} bytes`).toBeLessThanOrEqual(writes * size);
      }
    },
  );
});
