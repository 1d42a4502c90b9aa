import fc from "fast-check";
import ignore from "ignore";
import { describe, expect, it } from "vitest";
import {
  anchorPathPattern,
  compilePatternSet,
  compilePatternSetBelow,
  simplePattern,
} from "../../src/permissions/paths.js";

/** Gitignore patterns and paths from a small alphabet, so they often meet. */
const segment = fc.constantFrom("a", "b", ".env", "*", "?", "a*", "*.pem", "**", "x?y", ".a", "a.b");
const pattern = fc
  .tuple(fc.boolean(), fc.array(segment, { minLength: 1, maxLength: 4 }), fc.boolean())
  .map(([lead, parts, trail]) => `${lead ? "/" : ""}${parts.join("/")}${trail ? "/" : ""}`);
const pathPart = fc.constantFrom("a", "b", ".env", "x.pem", "xzy", ".a", "a.b", "ab", "c");
const path = fc.array(pathPart, { minLength: 1, maxLength: 5 }).map((parts) => parts.join("/"));

describe("the fast gitignore test agrees with the ignore package", () => {
  it("on random simple patterns and paths", () => {
    fc.assert(
      fc.property(
        fc.array(pattern, { minLength: 1, maxLength: 3 }),
        fc.array(path, { maxLength: 8 }),
        (patterns, paths) => {
          const reference = ignore().add(patterns);
          const base = "/w";
          const ours = compilePatternSet(patterns.map((p) => ({ base, pattern: p })));
          for (const rel of paths)
            expect([rel, ours(`${base}/${rel}`)]).toEqual([rel, reference.ignores(rel)]);
        },
      ),
      { seed: 20261201, numRuns: 3000 },
    );
  });

  it("judges a path below a search root as it judges the whole path, wherever the rules' bases lie", () => {
    // Bases at the root, below it, above it, beside it; whole directories and patterns; roots at any depth.
    const base = fc.constantFrom("/", "/w", "/w/a", "/w/a/b", "/w/b", "/v", "/w/a.b", "/w/.env");
    const anchored = fc.record({ base, pattern: fc.option(pattern, { nil: undefined }) });
    fc.assert(
      fc.property(
        fc.array(anchored, { minLength: 1, maxLength: 4 }),
        fc.constantFrom("/", "/w", "/w/a", "/w/a/b", "/v"),
        fc.array(path, { maxLength: 8 }),
        (patterns, root, paths) => {
          const whole = compilePatternSet(patterns);
          const below = compilePatternSetBelow(patterns, root);
          for (const rel of paths) {
            const absolute = root === "/" ? `/${rel}` : `${root}/${rel}`;
            expect([root, rel, below(rel)]).toEqual([root, rel, whole(absolute)]);
          }
        },
      ),
      { seed: 20261205, numRuns: 3000 },
    );
  });

  it("leaves patterns it does not model to the ignore package", () => {
    for (const p of ["[ab].env", "a\\*", "!x", "#x", "a ", "**", "a/./b", "a**b"]) {
      expect(simplePattern(p)).toBeUndefined();
    }
    const set = compilePatternSet([{ base: "/w", pattern: "[ab].env" }]);
    expect(set("/w/sub/a.env")).toBe(true);
    expect(set("/w/sub/c.env")).toBe(false);
  });

  it("anchors rules the way Read and Edit rules are written", () => {
    const bases = { workingDir: "/w", root: "/r", homeDir: "/h" };
    expect(anchorPathPattern("./src/**/*.ts", bases, false)).toEqual({ base: "/w/src", pattern: "/**/*.ts" });
    expect(anchorPathPattern("//etc/shadow", bases, false)).toEqual({ base: "/etc", pattern: "/shadow" });
    expect(anchorPathPattern("~/.ssh/**", bases, false)).toEqual({ base: "/h/.ssh", pattern: undefined });
    expect(anchorPathPattern(".env", bases, false)).toEqual({ base: "/w", pattern: ".env" });
  });
});
