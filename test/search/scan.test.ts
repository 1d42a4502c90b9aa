import { describe, expect, it } from "vitest";
import { toJsRegExp } from "../../src/search/js-regex.js";
import { scanRecords } from "../../src/search/scan.js";
import { splitGlobs } from "../../src/tools/search/grep.js";

const text = ["a", "hit 1", "b", "c", "d", "hit 2", "hit 3", "e", "f", "g", "h", "hit 4"].join("\n");
const options = { multiline: false, before: 0, after: 0, onlyMatching: false };

describe("scanRecords (the built-in search's rg records)", () => {
  it("merges overlapping context and breaks between separate groups", () => {
    const re = toJsRegExp("hit", { ignoreCase: false, multiline: false });
    expect(scanRecords(text, re, { ...options, before: 1, after: 1 })).toEqual([
      "1-a",
      "2:hit 1",
      "3-b",
      "--",
      "5-d",
      "6:hit 2",
      "7:hit 3",
      "8-e",
      "--",
      "11-h",
      "12:hit 4",
    ]);
    expect(scanRecords(text, re, options)).toEqual(["2:hit 1", "6:hit 2", "7:hit 3", "12:hit 4"]);
  });

  it("marks every line a multiline match covers", () => {
    const re = toJsRegExp("1.*d", { ignoreCase: false, multiline: true });
    expect(scanRecords(text, re, { ...options, multiline: true })).toEqual(["2:hit 1", "3:b", "4:c", "5:d"]);
  });
});

describe("toJsRegExp", () => {
  it("translates rg-only syntax and refuses line breaks outside multiline", () => {
    expect(toJsRegExp("(?i)abc", { ignoreCase: false, multiline: false }).test("ABC")).toBe(true);
    expect(toJsRegExp("(?P<w>x)", { ignoreCase: false, multiline: false }).exec("x")?.groups?.w).toBe("x");
    expect(() => toJsRegExp("a\\nb", { ignoreCase: false, multiline: false })).toThrow(/multiline: true/);
  });
});

describe("splitGlobs", () => {
  it("splits at spaces and at commas outside braces", () => {
    expect(splitGlobs("*.{ts,tsx} !*.test.ts,*.md")).toEqual(["*.{ts,tsx}", "!*.test.ts", "*.md"]);
    expect(splitGlobs(undefined)).toEqual([]);
  });
});
