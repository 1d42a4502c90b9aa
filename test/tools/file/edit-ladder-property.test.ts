import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applySplices } from "../../../src/fs/codec.js";
import { findEdit } from "../../../src/tools/file/edit-ladder.js";

/**
 * Properties of the ladder on generated files: old_string is a region of the file copied with one kind
 * of drift a model produces. Whatever rung matches it, an edit that keeps old_string's text must leave
 * the file as it was, and an appended line must be the only change.
 */

const words = ["x", "go()", "a - b", "end", "if a {", "}", "co-op", "wait...", "x = 1", ""];
const fileLine = fc.record({
  indent: fc.constantFrom("", "\t", "\t\t", "    ", "        ", "\t  "),
  word: fc.constantFrom(...words),
  lookAlike: fc.boolean(),
  trailing: fc.constantFrom("", "", " ", "  ", "\t"),
});

const LOOK_ALIKE: Array<[RegExp, string]> = [
  [/\.\.\./g, "\u2026"],
  [/ - /g, " \u2013 "],
  [/-/g, "\u2011"],
  [/ /g, "\u00a0"],
];

function render(line: { indent: string; word: string; lookAlike: boolean; trailing: string }): string {
  const word = line.lookAlike
    ? LOOK_ALIKE.reduce((w, [from, to]) => w.replace(from, to), line.word)
    : line.word;
  return line.indent + word + line.trailing;
}

/** The ways a model retypes what it read. */
const drifts: Record<string, (text: string) => string> = {
  trailing: (t) => t.replace(/[ \t]+$/gm, ""),
  tabsAsSpaces: (t) => t.replace(/^\t+/gm, (tabs) => "    ".repeat(tabs.length)),
  spacesAsTabs: (t) => t.replace(/^(?: {4})+/gm, (spaces) => "\t".repeat(spaces.length / 4)),
  asciiLookAlikes: (t) =>
    t
      .replaceAll("\u2026", "...")
      .replaceAll("\u2013", "-")
      .replaceAll("\u2011", "-")
      .replaceAll("\u00a0", " "),
  finalNewline: (t) => `${t}\n`,
  midLineTabsAsSpaces: (t) =>
    t.replace(/^[ \t]+/, "").replace(/^\t+/gm, (tabs) => "    ".repeat(tabs.length)),
  dedentTabsAsSpaces: (t) => drifts.dedent!(t).replace(/^\t+/gm, (tabs) => "    ".repeat(tabs.length)),
  dedent: (t) => {
    const lines = t.split("\n");
    const depth = Math.min(
      ...lines.filter((l) => l.trim() !== "").map((l) => l.length - l.trimStart().length),
    );
    return lines.map((l) => l.slice(Math.min(depth, l.length - l.trimStart().length))).join("\n");
  },
};

const scenario = fc
  .record({
    lines: fc.array(fileLine, { minLength: 1, maxLength: 12 }),
    finalNewline: fc.boolean(),
    from: fc.nat(),
    span: fc.integer({ min: 1, max: 4 }),
    drift: fc.constantFrom(...Object.keys(drifts)),
  })
  .map(({ lines, finalNewline, from, span, drift }) => {
    const rendered = lines.map(render);
    const view = rendered.join("\n") + (finalNewline ? "\n" : "");
    const first = from % rendered.length;
    const region = rendered.slice(first, first + span).join("\n");
    return { view, old: drifts[drift]!(region), drift };
  });

describe("edit ladder properties", () => {
  it("an edit that keeps old_string's text changes nothing, whatever rung matched", () => {
    const rungs = new Set<string>();
    fc.assert(
      fc.property(scenario, ({ view, old }) => {
        const result = findEdit(view, old, old, false);
        if (!result.ok) return;
        rungs.add(result.rung);
        expect(applySplices(view, result.splices)).toBe(view);
      }),
      { numRuns: 2000 },
    );
    // The generator reaches the lenient rungs, not only exact matches.
    expect([...rungs]).toEqual(
      expect.arrayContaining([
        "exact",
        "trailing-whitespace",
        "indentation",
        "indentation-level",
        "look-alikes",
      ]),
    );
  });

  it("appending a line changes nothing else", () => {
    fc.assert(
      fc.property(scenario, ({ view, old }) => {
        const body = old.endsWith("\n") ? old.slice(0, -1) : old;
        const added = `${body}\nADDED${old.endsWith("\n") ? "\n" : ""}`;
        const result = findEdit(view, old, added, false);
        if (!result.ok || old.trim() === "") return;
        const [splice] = result.splices;
        const region = view.slice(splice!.start, splice!.end);
        const regionBody = region.endsWith("\n") && old.endsWith("\n") ? region.slice(0, -1) : region;
        const tail = region.slice(regionBody.length);
        // A shift re-indents what new_string adds (by level, in the file's characters); no other rung
        // touches it.
        const reindents = result.rung === "indentation" || result.rung === "indentation-level";
        const text = reindents ? splice!.text.replace(/\n[ \t]*ADDED/, "\nADDED") : splice!.text;
        expect(text).toBe(`${regionBody}\nADDED${tail}`);
      }),
      { numRuns: 2000 },
    );
  });
});
