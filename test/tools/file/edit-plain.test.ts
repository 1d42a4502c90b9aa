import { execFile } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../../src/core/result.js";
import { isPlainUtf8 } from "../../../src/fs/codec.js";
import { contentHash, readStateSlot, settlePendingHashes } from "../../../src/fs/read-state.js";
import { spawnSyncAnnounced } from "../../../src/process/forks.js";
import { obtainGc } from "../../../src/process/memory.js";
import { call, fileContext, settledArrayBufferBytes } from "./util.js";

/**
 * Edit finds an exact, unique old_string of a plain UTF-8 file (no BOM, no CR) in the bytes, without
 * decoding the file; every other file, and every other match, goes through the decoded view. Both ways
 * must give the same result: the same text, metadata and bytes. A BOM sends the same text the decoded
 * way, so each case is run on the file with and without one.
 */

const BOM = "\ufeff";

async function editBoth(content: string, input: { old_string: string; new_string: string }) {
  const out = [];
  for (const bom of ["", BOM]) {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "f.txt");
    writeFileSync(path, bom + content);
    await call(ctx, "Read", { file_path: path });
    const result = await call(ctx, "Edit", { file_path: path, ...input });
    out.push({
      text: result.text.replace(path, "<path>"),
      isError: result.isError,
      metadata: { ...result.metadata, path: undefined },
      after: readFileSync(path, "utf8").slice(bom.length),
    });
  }
  return out;
}

/** Makes numbered lines long enough that a file of tens of thousands is over a MiB. */
const PAD = " ..............";

describe("Edit of a plain UTF-8 file, found in the bytes", () => {
  it("applies only to BOM-less UTF-8 without CR", () => {
    expect(isPlainUtf8(Buffer.from("a\nb é 😀\n"))).toBe(true);
    expect(isPlainUtf8(Buffer.from(`${BOM}a\n`))).toBe(false);
    expect(isPlainUtf8(Buffer.from("a\r\nb\n"))).toBe(false);
    expect(isPlainUtf8(Buffer.from([0x61, 0xe9, 0x0a]))).toBe(false); // latin1
    expect(isPlainUtf8(Buffer.from([0x61, 0x00, 0x62, 0x00]))).toBe(false); // UTF-16
  });

  const line = fc.constantFrom("x", "", "é", "a😀b", "  indent", "ß = 1;", "end");
  it("gives the same result as the decoded way, whatever the file and wherever the change", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { minLength: 1, maxLength: 14 }),
        fc.nat(),
        fc.nat(),
        fc.constantFrom("NEW", "", "two\nlines", "crlf\r\nnew", "ü"),
        fc.boolean(),
        async (lines, a, b, replacement, finalNewline) => {
          const content = lines.join("\n") + (finalNewline ? "\n" : "");
          const from = a % content.length;
          const to = from + 1 + (b % Math.min(40, content.length - from));
          const old = content.slice(from, to);
          // A slice may split a surrogate pair; such an old_string is matched the decoded way.
          const [plain, decoded] = await editBoth(content, { old_string: old, new_string: replacement });
          expect(plain).toEqual(decoded);
        },
      ),
      { numRuns: 60, seed: 17 },
    );
  });

  it("leaves every byte outside the change as it was in a large file, and numbers the lines right", async () => {
    const lines = Array.from({ length: 50_000 }, (_, i) => `line ${i + 1}: é ${"x".repeat(i % 50)}`);
    const content = `${lines.join("\n")}\n`;
    const [plain, decoded] = await editBoth(content, {
      old_string: "line 31415: ",
      new_string: "LINE 31415 😀: ",
    });
    expect(plain).toEqual(decoded);
    expect(plain!.after).toBe(content.replace("line 31415: ", "LINE 31415 😀: "));
    expect(plain!.text).toContain("31415\tLINE 31415 😀: ");
    expect(plain!.text).toContain("31412\tline 31412: ");
  });

  it("falls back to the ladder for an ambiguous match and lists every line", async () => {
    const [plain, decoded] = await editBoth("a = 1\nb = 2\na = 1\n", {
      old_string: "a = 1",
      new_string: "x",
    });
    expect(plain).toEqual(decoded);
    expect(plain!.isError).toBe(true);
    expect(plain!.text).toMatch(/matches 2 places .* lines 1, 3/);
  });
});

describe("Edit: the hash of what it wrote is taken after the call, never skipped", () => {
  it("records the hash of the bytes on disk", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "f.txt");
    writeFileSync(path, "one\ntwo\n");
    await call(ctx, "Read", { file_path: path });
    await call(ctx, "Edit", { file_path: path, old_string: "two", new_string: "2" });
    expect(ctx.session.get(readStateSlot).get(path)?.hash).toBe(contentHash(readFileSync(path)));
  });

  it.each([
    ["an Edit", "BETA"],
    ["a Read", "beta"],
  ])(
    "sees a same-size rewrite in place by another writer right after %s, before the hash was taken",
    async (_, beta) => {
      const ctx = fileContext();
      const path = join(ctx.workingDir, "f.txt");
      writeFileSync(path, "alpha\nbeta\ngamma\n");
      await call(ctx, "Read", { file_path: path });
      if (beta === "BETA")
        await call(ctx, "Edit", { file_path: path, old_string: "beta", new_string: "BETA" });
      // Same inode, same size, written at once (before the deferred hash ran): only the bytes differ.
      const fd = openSync(path, "r+");
      writeSync(fd, Buffer.from("ALPHA"), 0, 5, 0);
      closeSync(fd);
      const refused = await call(ctx, "Edit", { file_path: path, old_string: "gamma", new_string: "G" });
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/has changed on disk since you read it/);
      expect(refused.text).toContain("+ALPHA");
      expect(readFileSync(path, "utf8")).toBe(`ALPHA\n${beta}\ngamma\n`);
    },
  );

  it("sees such a rewrite of a large file too (no snapshot to show, so a Read is asked for)", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "big.txt");
    writeFileSync(path, `START\n${"0123456789abcdef\n".repeat(64 * 1024)}`);
    await call(ctx, "Read", { file_path: path, limit: 1 });
    await call(ctx, "Edit", { file_path: path, old_string: "START", new_string: "BEGIN" });
    const size = readFileSync(path).length;
    const fd = openSync(path, "r+");
    writeSync(fd, Buffer.from("fedcba9876543210"), 0, 16, size - 17);
    closeSync(fd);
    const refused = await call(ctx, "Edit", { file_path: path, old_string: "BEGIN", new_string: "S" });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(
      /has changed on disk since you read it, so nothing was written\. Read it again/,
    );
    expect(readFileSync(path, "utf8").startsWith("BEGIN\n")).toBe(true);
  });
});

describe("Edit: the freshness check runs while the new content syncs, and still decides first", () => {
  it("refuses a file changed on disk and leaves it and its directory as the other writer left them", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "big.txt");
    writeFileSync(path, `START\n${"0123456789abcdef\n".repeat(64 * 1024)}`);
    await call(ctx, "Read", { file_path: path, limit: 1 });
    const fd = openSync(path, "r+");
    writeSync(fd, Buffer.from("STOP!"), 0, 5, 0);
    closeSync(fd);
    const before = readFileSync(path);
    const refused = await call(ctx, "Edit", {
      file_path: path,
      old_string: "0123",
      new_string: "x",
      replace_all: true,
    });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/has changed on disk since you read it, so nothing was written/);
    expect(readFileSync(path).equals(before)).toBe(true);
    // The new content was written to a temp file before the check's verdict: it is gone.
    expect(readdirSync(ctx.workingDir).filter((name) => name !== "big.txt")).toEqual([]);
  });

  it("gives the change on disk as the reason when old_string is not found either", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "f.txt");
    writeFileSync(path, "alpha\nbeta\n");
    await call(ctx, "Read", { file_path: path });
    writeFileSync(path, "alpha\ngamma\n");
    const refused = await call(ctx, "Edit", { file_path: path, old_string: "beta", new_string: "b" });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/has changed on disk since you read it/);
    expect(refused.text).toContain("+gamma");
    expect(readFileSync(path, "utf8")).toBe("alpha\ngamma\n");
  });
});

/** Writes `size` bytes of 16-byte lines (zero-padded line numbers) to `path`; returns the lines. */
function writeNumberedLines(path: string, size: number): string[] {
  const lines = Array.from({ length: size / 16 }, (_, i) => `${String(i).padStart(15, "0")}`);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return lines;
}

describe("Edit: the buffer large files are read into is reused, never shared", () => {
  it("keeps every file's own bytes when edits of two large files alternate and overlap", async () => {
    const ctx = fileContext();
    const files = ["a", "b"].map((name) => {
      const path = join(ctx.workingDir, `${name}.txt`);
      // Over a MiB each (the size from which the buffer is kept: 2.1 and 1.6 MB), and different sizes.
      const lines = Array.from({ length: name === "a" ? 90_000 : 70_000 }, (_, i) => `${name} ${i}${PAD}`);
      writeFileSync(path, `${lines.join("\n")}\n`);
      return { path, expected: `${lines.join("\n")}\n` };
    });
    for (const { path } of files) await call(ctx, "Read", { file_path: path, limit: 1 });
    const edit = async (file: (typeof files)[number], line: number) => {
      const name = file.path.endsWith("a.txt") ? "a" : "b";
      const result = await call(ctx, "Edit", {
        file_path: file.path,
        old_string: `\n${name} ${line}${PAD}\n`,
        new_string: `\n${name} ${line} edited\n`,
      });
      expect(result.isError).toBe(false);
      file.expected = file.expected.replace(`\n${name} ${line}${PAD}\n`, `\n${name} ${line} edited\n`);
    };
    for (let i = 1; i <= 4; i++) await edit(files[i % 2]!, 1000 * i);
    await Promise.all([edit(files[0]!, 50_000), edit(files[1]!, 50_000), edit(files[0]!, 60_000)]);
    for (const file of files) expect(readFileSync(file.path, "utf8")).toBe(file.expected);
  });

  it("keeps every file's bytes, and every Read's lines, when large reads and edits overlap spawns that let the kept buffer go", async () => {
    // A spawn gives the kept buffer's pages back at once (src/fs/kept-buffer.ts): a buffer still in use must
    // never be the one released, whatever the interleaving.
    const ctx = fileContext();
    const files = ["a", "b", "c"].map((name, n) => {
      const path = join(ctx.workingDir, `${name}.txt`);
      // 1.4 to 2.5 MB: each read into the kept buffer (from 1 MiB).
      const lines = Array.from({ length: 60_000 + 25_000 * n }, (_, i) => `${name} ${i}${PAD}`);
      writeFileSync(path, `${lines.join("\n")}\n`);
      return { name, path, expected: `${lines.join("\n")}\n` };
    });
    for (const { path } of files) await call(ctx, "Read", { file_path: path, limit: 1 });
    const spawnTrue = () => new Promise((resolve) => execFile("true", resolve));
    const edit = async (file: (typeof files)[number], line: number) => {
      const result = await call(ctx, "Edit", {
        file_path: file.path,
        old_string: `\n${file.name} ${line}${PAD}\n`,
        new_string: `\n${file.name} ${line} edited\n`,
      });
      expect(result.isError).toBe(false);
      file.expected = file.expected.replace(
        `\n${file.name} ${line}${PAD}\n`,
        `\n${file.name} ${line} edited\n`,
      );
    };
    const read = async (file: (typeof files)[number], line: number) => {
      const result = await call(ctx, "Read", { file_path: file.path, offset: line + 1, limit: 1 });
      expect(ToolResult.text(result)).toContain(`${file.name} ${line}`);
    };
    for (let round = 1; round <= 6; round++) {
      let done = false;
      // Spawns one after another for as long as the round runs, so forks land inside reads and writes.
      const spawning = (async () => {
        while (!done) await spawnTrue();
      })();
      await Promise.all(
        files.flatMap((file, n) => [
          edit(file, round * 1000 + n),
          read(file, round * 1000 + 500),
          round % 2 ? edit(file, round * 1000 + 700) : read(file, 10),
        ]),
      );
      done = true;
      await spawning;
    }
    for (const file of files) expect(readFileSync(file.path, "utf8")).toBe(file.expected);
  });

  it("holds one buffer of a large file's size across back-to-back edits, not two", async () => {
    const gc = obtainGc()!;
    const ctx = fileContext();
    const path = join(ctx.workingDir, "big.txt");
    const size = 8 * 1024 * 1024;
    writeNumberedLines(path, size);
    await call(ctx, "Read", { file_path: path, limit: 1 });
    const before = settledArrayBufferBytes(gc);
    for (let i = 1; i <= 4; i++) {
      const line = String(i * 1000).padStart(15, "0");
      const result = await call(ctx, "Edit", { file_path: path, old_string: line, new_string: `${line}x` });
      expect(result.isError).toBe(false);
    }
    expect(settledArrayBufferBytes(gc) - before).toBeLessThan(1.5 * size);
  });

  it("keeps no buffer alive per large file written once the writes are hashed", async () => {
    const gc = obtainGc()!;
    const ctx = fileContext();
    // Each larger than the last, so each is read into a buffer of its own.
    const size = 5 * 1024 * 1024;
    const paths = ["p", "q", "r", "s"].map((name, i) => {
      const path = join(ctx.workingDir, `${name}.txt`);
      writeFileSync(path, `${name}\n${"x".repeat(((2 + i) * size) / 5)}\n`);
      return path;
    });
    const before = settledArrayBufferBytes(gc);
    for (const path of paths) {
      await call(ctx, "Read", { file_path: path, limit: 1 });
      const name = path.slice(-5, -4);
      const result = await call(ctx, "Edit", {
        file_path: path,
        old_string: `${name}\n`,
        new_string: "edited\n",
      });
      expect(result.isError).toBe(false);
    }
    settlePendingHashes();
    // The kept buffer (the largest file's size) may remain; the basis of every write must not.
    expect(settledArrayBufferBytes(gc) - before).toBeLessThan(1.5 * size);
    for (const path of paths) expect(readFileSync(path, "utf8").startsWith("edited\n")).toBe(true);
  });

  it("a Read and the growing Edits after it allocate one buffer of the file's size between them", async () => {
    const gc = obtainGc()!;
    const ctx = fileContext();
    const path = join(ctx.workingDir, "grows.txt");
    const size = 8 * 1024 * 1024;
    const lines = writeNumberedLines(path, size);
    const before = settledArrayBufferBytes(gc);
    // No collection in between: every buffer allocated on the way is still counted at the end.
    const read = await call(ctx, "Read", { file_path: path, offset: 3, limit: 2 });
    expect(read.text).toContain("000000000000002");
    for (let i = 1; i <= 4; i++) {
      const line = String(i * 1000).padStart(15, "0");
      const result = await call(ctx, "Edit", { file_path: path, old_string: line, new_string: `${line}xyz` });
      expect(result.isError).toBe(false);
    }
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1.5 * size);
    const expected = lines.map((line, i) => (i > 0 && i <= 4000 && i % 1000 === 0 ? `${line}xyz` : line));
    expect(readFileSync(path, "utf8")).toBe(`${expected.join("\n")}\n`);
  });
});

describe("Read: the hash of what it read is taken after the call, of the bytes it read", () => {
  it("hashes a large file's bytes before its buffer serves the next large read", async () => {
    const ctx = fileContext();
    const a = join(ctx.workingDir, "a.txt");
    const b = join(ctx.workingDir, "b.txt");
    // Both read into the one kept buffer (files of 1 MiB and more), the second right after the first.
    writeFileSync(a, `A-START\n${"0123456789abcdef\n".repeat(80 * 1024)}`);
    writeFileSync(b, `B-START\n${"fedcba9876543210\n".repeat(80 * 1024)}`);
    await call(ctx, "Read", { file_path: a, limit: 1 });
    await call(ctx, "Read", { file_path: b, limit: 1 });
    const state = ctx.session.get(readStateSlot);
    expect(state.get(a)?.hash).toBe(contentHash(readFileSync(a)));
    expect(state.get(b)?.hash).toBe(contentHash(readFileSync(b)));
    const edited = await call(ctx, "Edit", { file_path: a, old_string: "A-START", new_string: "A-BEGIN" });
    expect(edited.isError, edited.text).toBe(false);
    expect(readFileSync(a, "utf8").startsWith("A-BEGIN\n")).toBe(true);
  });

  it("hashes a large file's bytes before its buffer goes back to the system (a spawn right after the Read)", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "a.txt");
    writeFileSync(path, `A-START\n${"0123456789abcdef\n".repeat(80 * 1024)}`);
    await call(ctx, "Read", { file_path: path, limit: 1 });
    // A spawn lets the kept buffer go, its pages given back at once (kept-buffer.ts).
    spawnSyncAnnounced("true", [], { encoding: "utf8" });
    expect(ctx.session.get(readStateSlot).get(path)?.hash).toBe(contentHash(readFileSync(path)));
  });
});
