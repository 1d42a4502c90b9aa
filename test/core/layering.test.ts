import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Every relative module a file imports or re-exports, statically or with import(). */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*["'](\.[^"']+)["']/g)].map((m) => m[1]!);
  return specifiers;
}

describe("layering", () => {
  it("src/core imports nothing outside src/core", () => {
    const core = join(SRC, "core");
    const offending = sourceFiles(core).flatMap((file) =>
      relativeImports(file)
        .filter((spec) => !join(file, "..", spec).startsWith(`${core}/`))
        .map((spec) => `${relative(SRC, file)} imports ${spec}`),
    );
    expect(offending).toEqual([]);
  });

  it("the check sees a violation (it would fail on one)", () => {
    expect(relativeImports(join(SRC, "registry.ts")).some((s) => s.startsWith("./tools/"))).toBe(true);
  });
});

/**
 * Locale APIs load ICU data from the node binary on first use, and it stays resident: toLocaleString of a
 * number about 5 MB, localeCompare about 2 MB (measured in /proc/self/smaps). They also make output depend
 * on the machine's locale. src/core/order.ts orders strings without them.
 */
const LOCALE_API = /\btoLocale(?:[A-Z]\w*)?String\b|\blocaleCompare\b|\bIntl\b/;

function localeCalls(text: string): number[] {
  return text
    .split("\n")
    .flatMap((line, i) => (LOCALE_API.test(line.replace(/^\s*(?:\/\/|\*).*$/, "")) ? [i + 1] : []));
}

describe("no locale APIs", () => {
  it("src calls none of toLocaleString, localeCompare or Intl", () => {
    const offending = sourceFiles(SRC).flatMap((file) =>
      localeCalls(readFileSync(file, "utf8")).map((line) => `${relative(SRC, file)}:${line}`),
    );
    expect(offending).toEqual([]);
  });

  it("the check sees a call (it would fail on one)", () => {
    expect(
      localeCalls('const a = (1).toLocaleString("en-US");\nx.sort((a, b) => a.localeCompare(b));'),
    ).toEqual([1, 2]);
    expect(localeCalls("new Intl.NumberFormat()")).toEqual([1]);
    expect(
      localeCalls("const { Collator } = Intl;\nNumber.prototype.toLocaleString.call(n)\nx.localeCompare (y)"),
    ).toEqual([1, 2, 3]);
    expect(localeCalls(" * localeCompare is not used: .localeCompare( in a comment")).toEqual([]);
  });
});
