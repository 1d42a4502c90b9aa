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
