import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { readStateSlot } from "../../../src/fs/read-state.js";
import { formatLine, formattedLength, MAX_LINE_CHARS } from "../../../src/tools/file/line-format.js";
import { LEAN_READ_MIN_BYTES, type TextLines, textLines } from "../../../src/tools/file/read-lines.js";
import { pageOf, windowLines } from "../../../src/tools/file/read-page.js";
import { call, fileContext } from "./util.js";

/**
 * A large plain UTF-8 file is paged from its bytes (the lean path); everything else is decoded whole.
 * These tests hold the lean path to the decoded one on the same bytes: same line count, format and pages.
 */

const BOM = "\ufeff";
const GRIN = "😀"; // 4 bytes of UTF-8, two UTF-16 units
const EURO = "€"; // 3 bytes, one unit

/** A small deterministic generator (mulberry32), so a failure can be reproduced. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Lines that test cuts: around MAX_LINE_CHARS units, and around the bytes the lean path decodes of a line. */
const EDGE_LINES = [
  "a".repeat(MAX_LINE_CHARS - 1),
  "a".repeat(MAX_LINE_CHARS),
  "a".repeat(MAX_LINE_CHARS + 1),
  "a".repeat(MAX_LINE_CHARS - 1) + GRIN, // the cut falls inside the surrogate pair
  "a".repeat(MAX_LINE_CHARS - 2) + GRIN, // exactly MAX_LINE_CHARS units
  "a".repeat(MAX_LINE_CHARS - 2) + GRIN + "b",
  EURO.repeat(MAX_LINE_CHARS), // 6000 bytes, not cut
  EURO.repeat(MAX_LINE_CHARS + 1),
  EURO.repeat(2666) + "ab", // 8000 bytes
  EURO.repeat(2667), // 8001 bytes: the lean path decodes only its head
  GRIN.repeat(MAX_LINE_CHARS), // 8000 bytes, 4000 units
  GRIN.repeat(MAX_LINE_CHARS) + "x",
  "a".repeat(7999) + GRIN + "tail", // a 4-byte character across the head's end
  "ab".repeat(3999) + EURO + "tail",
  `${"é".repeat(5000)}${GRIN}`,
];

function randomLine(next: () => number): string {
  const r = next();
  if (r < 0.1) return "";
  if (r < 0.12) return EDGE_LINES[Math.floor(next() * EDGE_LINES.length)]!;
  const pieces = ["word ", "x", "é", EURO, GRIN, "\t", "ß", "中文", " "];
  let line = "";
  const length = Math.floor(next() * 120);
  while (line.length < length) line += pieces[Math.floor(next() * pieces.length)];
  return line;
}

/** About `bytes` bytes of lines (exactly that many when `exact`), from `seed`. */
function corpusText(seed: number, bytes: number, exact = false): string {
  const next = random(seed);
  const lines = [...EDGE_LINES];
  let size = Buffer.byteLength(lines.join("\n"));
  // Stops short of `bytes` by more than the longest line, for the padding of an exact size.
  while (size < bytes - (exact ? 20_000 : 0)) {
    const line = randomLine(next);
    lines.push(line);
    size += Buffer.byteLength(line) + 1;
  }
  let text = lines.join("\n");
  if (exact) text += `\n${"z".repeat(bytes - Buffer.byteLength(text) - 1)}`;
  return text;
}

interface Sample {
  name: string;
  bytes: Buffer;
}

function corpus(): Sample[] {
  const text = corpusText(1, LEAN_READ_MIN_BYTES + 50_000);
  const huge = `${"é😀a".repeat(200_000)}`;
  const samples: Record<string, string> = {
    "final newline": `${text}\n`,
    "no final newline": text,
    "two final newlines": `${text}\n\n`,
    "leading empty lines": `\n\n\n${text}\n`,
    "one huge line among short ones": `short\n${huge}\n${text}\n`,
    "only one huge line": huge,
    // Just enough lines that the lean path may take it (read-state would not keep its view).
    "only newlines": "\n".repeat(800_003),
    ASCII: `${Array.from({ length: 40_000 }, (_, i) => `value_${i} = ${i} * 2`).join("\n")}\n`,
    "just below the threshold": corpusText(2, LEAN_READ_MIN_BYTES - 1, true),
    "just above the threshold": corpusText(3, LEAN_READ_MIN_BYTES + 1, true),
  };
  return [
    ...Object.entries(samples).map(([name, content]) => ({ name, bytes: Buffer.from(content) })),
    { name: "BOM", bytes: Buffer.from(`${BOM}${text}\n`) },
    { name: "BOM, no final newline, huge first line", bytes: Buffer.from(`${BOM}${huge}\n${text}`) },
  ];
}

/** What the window gives formatLine, line by line, for the lines it shares with the other window. */
function shownLines(lines: TextLines, first: number, size: number): string[] {
  const window = lines.window(first, size);
  const from = first - window.firstLine;
  const count = Math.min(size, lines.count - first + 1);
  return Array.from({ length: count }, (_, i) =>
    formatLine(window.lines[from + i]!, first + i, window.lengths?.[from + i]),
  );
}

describe("Read's lines of a large plain UTF-8 file, paged from its bytes", () => {
  const samples = corpus();

  it.each(samples.map((s) => [s.name, s] as const))("match the decoded file's: %s", (_, { bytes }) => {
    const decoded = textLines(bytes, Number.POSITIVE_INFINITY)!;
    const lean = textLines(bytes, 0)!;
    expect(lean.view).toBeUndefined(); // the lean path was taken
    expect(decoded.view).toBeDefined();
    expect(lean.format).toEqual({
      encoding: decoded.format.encoding,
      bom: decoded.format.bom,
      eol: decoded.format.eol,
    });
    expect(lean.count).toBe(decoded.count);
    const { count } = decoded;
    const offsets = [1, 2, 3, 17, Math.floor(count / 2), count - 2001, count - 2, count - 1, count];
    const limits = [undefined, 1, 2, 3, 7, 100, 2000, 2001, 5000];
    const budgets = [25_000, 1000, 10, 200_000];
    for (const offset of offsets.filter((o) => o >= 1 && o <= count)) {
      for (const limit of limits) {
        const size = windowLines(limit);
        // Every line of the window formats the same: the cut, its marker and its count of the rest.
        expect(shownLines(lean, offset, size)).toEqual(shownLines(decoded, offset, size));
        for (const tokenBudget of budgets) {
          for (const wholeFile of offset === 1 && limit === undefined ? [true, false] : [false]) {
            const request = { offset, limit, wholeFile, tokenBudget };
            expect(pageOf(lean.window(offset, size), request)).toEqual(
              pageOf(decoded.window(offset, size), request),
            );
          }
        }
      }
    }
  });

  it("takes files from LEAN_READ_MIN_BYTES on, and only those", () => {
    const [below, above] = ["just below the threshold", "just above the threshold"].map(
      (name) => samples.find((s) => s.name === name)!.bytes,
    );
    expect(below!.length).toBe(LEAN_READ_MIN_BYTES - 1);
    expect(above!.length).toBe(LEAN_READ_MIN_BYTES + 1);
    expect(textLines(below!)!.view).toBeDefined();
    expect(textLines(above!)!.view).toBeUndefined();
  });

  it("leaves every other file to the decoding path", () => {
    const text = corpusText(4, LEAN_READ_MIN_BYTES + 1000);
    const others = {
      CRLF: Buffer.from(`${text.replaceAll("\n", "\r\n")}\r\n`),
      "one CR": Buffer.from(`${text}\rx\n`),
      "classic Mac": Buffer.from(text.replaceAll("\n", "\r")),
      "BOM and invalid UTF-8": Buffer.concat([Buffer.from(`${BOM}${text}`), Buffer.from([0xff, 0x0a])]),
      latin1: Buffer.from(`${"caf\u00e9 ".repeat(300_000)}\n`, "latin1"),
      "UTF-16 LE": Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]),
      "ISO-2022-JP": Buffer.from(`\x1b$B$3$s$K$A$O\x1b(B\n${"a".repeat(LEAN_READ_MIN_BYTES)}\n`),
      // Under 768 KiB of text read-state may keep the view, which the lean path does not build.
      "small view": Buffer.from("x\n".repeat(300_000)),
    };
    for (const [name, bytes] of Object.entries(others)) {
      expect({ name, view: typeof textLines(bytes, 0)?.view }).toEqual({ name, view: "string" });
    }
    const nul = Buffer.from(`a\0b\n${text}\n`);
    expect(textLines(nul, 0)).toBeUndefined(); // binary either way
    expect(textLines(nul, Number.POSITIVE_INFINITY)).toBeUndefined();
  });

  it("gives Read the same result text, metadata and read-state as the same text with CRLF (decoded whole)", async () => {
    const ctx = fileContext();
    const state = ctx.session.get(readStateSlot);
    const inputs: Array<{ offset?: number; limit?: number }> = [
      {},
      { limit: 1 },
      { offset: 2 },
      { offset: 3, limit: 5 },
      { offset: 0, limit: 3 },
      { offset: 1500, limit: 2 },
    ];
    const names = [
      "no final newline",
      "one huge line among short ones",
      "only one huge line",
      "just above the threshold",
      "BOM, no final newline, huge first line",
    ];
    for (const sample of samples.filter((s) => names.includes(s.name))) {
      const lfPath = join(ctx.workingDir, "lf.txt");
      const crlfPath = join(ctx.workingDir, "crlf.txt");
      writeFileSync(lfPath, sample.bytes);
      writeFileSync(crlfPath, sample.bytes.toString("utf8").replaceAll("\n", "\r\n"));
      const count = textLines(sample.bytes)!.count;
      for (const input of [
        ...inputs,
        { offset: count },
        { offset: count + 1 },
        { offset: count + 40, limit: 1 },
      ]) {
        state.forget(lfPath);
        state.forget(crlfPath);
        const lf = await call(ctx, "Read", { file_path: lfPath, ...input });
        const crlf = await call(ctx, "Read", { file_path: crlfPath, ...input });
        const where = { sample: sample.name, input };
        expect({ where, text: lf.text.replaceAll(lfPath, "F") }).toEqual({
          where,
          text: crlf.text.replaceAll(crlfPath, "F"),
        });
        const eol = sample.bytes.includes(0x0a) ? "crlf" : "lf";
        expect({ where, metadata: lf.metadata }).toEqual({
          where,
          metadata: { ...crlf.metadata, path: lfPath, eol: "lf" },
        });
        expect(crlf.metadata?.eol).toBe(eol);
        expect(state.get(lfPath)?.ranges).toEqual(state.get(crlfPath)?.ranges);
        expect(state.get(lfPath)?.snapshot).toBeUndefined();
      }
    }
  }, 120_000);

  it("keeps to the token budget like the decoded path", async () => {
    const ctx = fileContext();
    const bytes = samples.find((s) => s.name === "one huge line among short ones")!.bytes;
    const path = join(ctx.workingDir, "huge.txt");
    writeFileSync(path, bytes);
    vi.stubEnv("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS", "600");
    try {
      const { text } = await call(ctx, "Read", { file_path: path });
      const decoded = textLines(bytes, Number.POSITIVE_INFINITY)!;
      const page = pageOf(decoded.window(1, windowLines()), {
        offset: 1,
        wholeFile: true,
        tokenBudget: 600,
      });
      expect(page.next).toBeDefined();
      expect(text).toBe(
        `${page.text}\n\n[Lines 1-${page.last} of ${decoded.count} shown. For the next page, Read with offset ${page.next!.offset} and limit ${page.next!.limit}.]`,
      );
      expect(text).toContain("[line cut: ");
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe("a page's size, counted without formatting its lines", () => {
  it("is the length of the formatted line, cut or not, whole or streamed (only its start held)", () => {
    const next = random(7);
    const lines = [...EDGE_LINES, ...Array.from({ length: 300 }, () => randomLine(next))];
    for (const [i, line] of lines.entries()) {
      for (const number of [1, 9, 10, 99_999, 1_000_000 + i]) {
        expect(formattedLength(number, line.length)).toBe(formatLine(line, number).length);
        // A line streamed from a huge file holds its first MAX_LINE_CHARS units, and its full length apart.
        const start = line.slice(0, MAX_LINE_CHARS);
        expect(formattedLength(number, line.length)).toBe(formatLine(start, number, line.length).length);
      }
    }
  });

  it("ends a page where the formatted lines reach the budget, as building them would", () => {
    const next = random(11);
    const lines = Array.from({ length: 400 }, () => randomLine(next));
    const window = { lines, firstLine: 1, reachesEnd: true };
    const formatted = lines.map((line, i) => formatLine(line, i + 1));
    for (let tokenBudget = 5; tokenBudget < 20_000; tokenBudget = Math.ceil(tokenBudget * 1.3)) {
      // The rule, on the built lines: at least one line, then every line whose text and newline still fit.
      let chars = 0;
      let count = 0;
      while (count < lines.length && (count === 0 || chars + formatted[count]!.length + 1 <= tokenBudget * 4))
        chars += formatted[count++]!.length + 1;
      const page = pageOf(window, { offset: 1, wholeFile: false, tokenBudget });
      expect(page.text).toBe(formatted.slice(0, count).join("\n"));
      expect(page.last).toBe(count);
    }
  });
});
