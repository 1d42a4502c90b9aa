import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { firstTwoOccurrences } from "../../src/fs/find-bytes.js";

/** The first two occurrences, overlapping ones included, found one position at a time. */
function naive(text: Buffer, needle: Buffer): [number, number] {
  const found: number[] = [];
  for (let i = 0; i + needle.length <= text.length && found.length < 2; i++)
    if (needle.equals(text.subarray(i, i + needle.length))) found.push(i);
  return [found[0] ?? -1, found[1] ?? -1];
}

/** Text mostly of a few common bytes, with rare ones among them: some needles then have an anchor. */
const byte = fc.oneof(
  { weight: 40, arbitrary: fc.constantFrom(...Buffer.from("ab ;")) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }) },
);
const text = fc.array(byte, { minLength: 0, maxLength: 3000 }).map((bytes) => Buffer.from(bytes));

describe("firstTwoOccurrences", () => {
  it("finds what a search one position at a time finds, anchored or not, however often the anchor occurs", () => {
    fc.assert(
      fc.property(
        text,
        fc.oneof(
          // A piece of the text itself (it occurs at least once), or any bytes.
          fc.tuple(fc.nat(), fc.integer({ min: 1, max: 40 })).map(([at, length]) => ({ at, length })),
          fc.array(byte, { minLength: 1, maxLength: 20 }).map((bytes) => Buffer.from(bytes)),
        ),
        fc.option(fc.integer({ min: 0, max: 6 })),
        // A sample smaller than the text lets a needle from the text have an anchor the sample lacks.
        fc.option(fc.integer({ min: 8, max: 256 })),
        (haystack, pick, maxCandidates, sampleBytes) => {
          let needle: Buffer;
          if (Buffer.isBuffer(pick)) needle = pick;
          else {
            const start = pick.at % (haystack.length || 1);
            needle = Buffer.from(haystack.subarray(start, start + pick.length));
          }
          if (needle.length === 0) return;
          const options = {
            anchoredFrom: 0,
            ...(maxCandidates === null ? {} : { maxCandidates }),
            ...(sampleBytes === null ? {} : { sampleBytes }),
          };
          expect(firstTwoOccurrences(haystack, needle, options)).toEqual(naive(haystack, needle));
          expect(firstTwoOccurrences(haystack, needle)).toEqual(naive(haystack, needle));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("counts overlapping occurrences, and searches a large text by an anchor of the needle's rarest bytes", () => {
    expect(firstTwoOccurrences(Buffer.from("xaaay"), Buffer.from("aa"))).toEqual([1, 2]);
    // An anchor that overlaps itself: its occurrences one byte apart are each a start.
    const repeated = Buffer.from(`${"Q".repeat(9)}${"ab;".repeat(600)}`);
    const options = { anchoredFrom: 0, sampleBytes: 16 };
    expect(firstTwoOccurrences(repeated, Buffer.from("QQQQQQQQ"), options)).toEqual([0, 1]);
    expect(firstTwoOccurrences(repeated, Buffer.from("QQQQQQQQQa"), options)).toEqual([0, -1]);
    // 1 MiB of common bytes, the needle once near the end: its rare bytes anchor it.
    const large = Buffer.alloc(1024 * 1024, "ab cd;");
    const needle = Buffer.from("ab cd;Q9 rare");
    needle.copy(large, large.length - 100);
    expect(firstTwoOccurrences(large, needle)).toEqual([large.length - 100, -1]);
    needle.copy(large, 50);
    expect(firstTwoOccurrences(large, needle)).toEqual([50, large.length - 100]);
  });

  it("finds its match where the needle's rare byte is rare only in the text's middle", () => {
    // 'Z' fills both ends of the text: counted in one window from the middle alone it looked rare.
    const text = Buffer.concat([
      Buffer.alloc(400_000, "Z"),
      Buffer.alloc(400_000, "ab cd;"),
      Buffer.alloc(400_000, "Z"),
    ]);
    const needle = Buffer.from("cd;ab cd;Z");
    const at = text.indexOf(needle);
    expect(firstTwoOccurrences(text, needle)).toEqual([at, -1]);
  });
});
