import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalPath } from "../../src/fs/canonical.js";
import { tempDir } from "../helpers/context.js";

// canonicalPath answers a path that exists whole with one realpath, and walks component by component
// only where a part is missing: both ways must give the kernel's answer.
/** A tree with links: absolute, relative, a chain of two, and one whose target does not exist. */
function tree(): string {
  const root = tempDir("cc-tools-canonical-");
  mkdirSync(join(root, "a", "b", "c"), { recursive: true });
  symlinkSync(join(root, "a", "b"), join(root, "abs"));
  symlinkSync("a/b/c", join(root, "rel"));
  symlinkSync("rel", join(root, "chain"));
  symlinkSync(join(root, "a", "new-dir"), join(root, "dangling"));
  return root;
}

describe("canonicalPath", () => {
  const cases: Array<[string, string]> = [
    ["abs", "a/b"],
    ["abs/c", "a/b/c"],
    // `..` applies to where the link led, as the kernel does, not to the path as written.
    ["abs/..", "a"],
    ["abs/../b/c", "a/b/c"],
    ["chain/..", "a/b"],
    ["chain/../../x", "a/x"],
    ["./a//b/./c/", "a/b/c"],
    // Missing parts are appended as written after the existing prefix is resolved.
    ["abs/missing/file", "a/b/missing/file"],
    ["chain/missing/../other", "a/b/c/other"],
    // A dangling link leads where a write would create its target.
    ["dangling", "a/new-dir"],
    ["dangling/file", "a/new-dir/file"],
  ];
  for (const [path, expected] of cases) {
    it(`resolves ${path}`, () => {
      const root = tree();
      expect(canonicalPath(path, root)).toBe(join(root, expected));
      expect(canonicalPath(`${root}/${path}`, "/elsewhere")).toBe(join(root, expected));
    });
  }
});
