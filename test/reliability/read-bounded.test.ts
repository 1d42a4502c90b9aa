import { spawnSync } from "node:child_process";
import { closeSync, openSync, truncateSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, fileContext } from "../tools/file/util.js";

/**
 * F1 of issue 11: Read holds a bounded amount in memory whatever the file's shape. The files are sparse
 * (truncate), so a gigabyte costs no disk; the RSS check is a ceiling far below what holding the line
 * would take (a 600 M-character line is over 1 GB as a JS string, or a RangeError).
 */

/** Most the process may grow while reading one of these files. */
const RSS_GROWTH_CEILING = 256 * 1024 * 1024;

function sparseFile(path: string, head: string, size: number): void {
  const fd = openSync(path, "w");
  writeSync(fd, head);
  closeSync(fd);
  truncateSync(path, size);
}

async function readMeasured(ctx: ReturnType<typeof fileContext>, input: Record<string, unknown>) {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  try {
    return { result: await call(ctx, "Read", input), growth: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

describe("Read of pathological files stays bounded", () => {
  it("reads a 1 GB sparse file that starts with text: its lines, then one cut line of NULs", async () => {
    const ctx = fileContext();
    const head = Array.from({ length: 1000 }, (_, i) => `line ${i + 1} of text`).join("\n");
    sparseFile(join(ctx.workingDir, "sparse.log"), `${head}\n`, 1024 ** 3);
    const { result, growth } = await readMeasured(ctx, { file_path: "sparse.log" });
    expect(result.isError, result.text.slice(0, 300)).toBe(false);
    expect(result.text.startsWith("1\tline 1 of text\n2\tline 2 of text\n")).toBe(true);
    expect(result.text).toContain("1000\tline 1000 of text\n1001\t");
    expect(result.text).toMatch(/\[line cut: \d{10} more characters/);
    expect(result.text).toContain("of a 1073741824-byte file");
    expect(growth).toBeLessThan(RSS_GROWTH_CEILING);
  }, 120_000);

  it("reads a single line of 600 M characters as one cut line", async () => {
    const ctx = fileContext();
    sparseFile(join(ctx.workingDir, "one-line.txt"), "x".repeat(10_000), 600 * 1024 ** 2);
    const { result, growth } = await readMeasured(ctx, { file_path: "one-line.txt", offset: 1, limit: 5 });
    expect(result.isError, result.text.slice(0, 300)).toBe(false);
    expect(
      result.text.startsWith(`1\t${"x".repeat(2000)}... [line cut: ${600 * 1024 ** 2 - 2000} more`),
    ).toBe(true);
    expect(growth).toBeLessThan(RSS_GROWTH_CEILING);
  }, 120_000);

  it("keeps a CRLF split across read chunks as one line break", async () => {
    const ctx = fileContext();
    const chunk = 1024 * 1024;
    // "a\r" ends exactly at the first chunk, "\n" opens the second: one break, not an empty line.
    const head = `${"a".repeat(chunk - 1)}\r\nb\r\nc\n`;
    sparseFile(join(ctx.workingDir, "split.txt"), head, 65 * 1024 * 1024);
    const result = await call(ctx, "Read", { file_path: "split.txt", offset: 2, limit: 2 });
    expect(result.text.startsWith("2\tb\n3\tc")).toBe(true);
  }, 60_000);
});

describe("the crash guard", () => {
  it("logs an uncaught exception and an unhandled rejection, and the process keeps running", () => {
    const guard = new URL("../../src/core/crash-guard.ts", import.meta.url).pathname;
    const script = `
      const { installCrashGuard } = await import(${JSON.stringify(guard)});
      installCrashGuard("test host");
      setTimeout(() => { throw new Error("boom in a callback"); }, 1);
      Promise.reject(new Error("nobody awaited this"));
      setTimeout(() => { process.stdout.write("still alive"); }, 50);
    `;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(run.stdout).toBe("still alive");
    expect(run.stderr).toContain("boom in a callback");
    expect(run.stderr).toContain("nobody awaited this");
    expect(run.status).toBe(0);
  });
});
