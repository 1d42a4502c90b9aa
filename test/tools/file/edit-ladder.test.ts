import { describe, expect, it } from "vitest";
import { applySplices } from "../../../src/fs/codec.js";
import { findEdit } from "../../../src/tools/file/edit-ladder.js";

function edit(view: string, oldString: string, newString: string, replaceAll = false) {
  const result = findEdit(view, oldString, newString, replaceAll);
  return result.ok ? { rung: result.rung, text: applySplices(view, result.splices) } : result;
}

describe("edit ladder", () => {
  it("prefers an exact match", () => {
    expect(edit("a = 1\nb = 2\n", "b = 2", "b = 3")).toEqual({ rung: "exact", text: "a = 1\nb = 3\n" });
  });

  it("reports every exact match when not unique, and replaces all with replace_all", () => {
    expect(edit("x\ny\nx\n", "x", "z")).toMatchObject({ ok: false, reason: "ambiguous", lines: [1, 3] });
    expect(edit("x\ny\nx\n", "x", "z", true)).toEqual({ rung: "exact", text: "z\ny\nz\n" });
  });

  it("counts overlapping matches as ambiguous", () => {
    expect(edit("aaa", "aa", "b")).toMatchObject({ ok: false, reason: "ambiguous" });
  });

  it("rung 1: CRLF in old_string", () => {
    expect(edit("a\nb\nc\n", "a\r\nb", "A\r\nB")).toEqual({ rung: "line-endings", text: "A\nB\nc\n" });
  });

  it("rung 2: trailing whitespace, only on whole lines", () => {
    const view = "function f() {  \n  return 1;\t\n}\n";
    expect(edit(view, "function f() {\n  return 1;\n}", "function f() {\n  return 2;\n}")).toEqual({
      rung: "trailing-whitespace",
      // The unchanged first line keeps its trailing spaces; the changed one takes new_string's text.
      text: "function f() {  \n  return 2;\n}\n",
    });
  });

  it("rung 3: a uniform indentation shift, re-indenting new_string", () => {
    const view = "class A {\n    run() {\n        go();\n\n        stop();\n    }\n}\n";
    expect(edit(view, "run() {\n    go();\n\n    stop();\n}", "run() {\n    go(1);\n}")).toEqual({
      rung: "indentation",
      text: "class A {\n    run() {\n        go(1);\n    }\n}\n",
    });
    // old_string indented more than the file: new_string is shifted left by the same amount.
    expect(edit("if x:\n  y()\n", "    if x:\n      y()", "    if x:\n      z()")).toEqual({
      rung: "indentation",
      text: "if x:\n  z()\n",
    });
  });

  it("rung 3 refuses a shift that does not hold on every line", () => {
    const view = "  a\n    b\n";
    expect(edit(view, "a\nb", "a\nc")).toMatchObject({ ok: false, reason: "not-found" });
  });

  it("rung 4: curly and straight quotes, keeping the file's style", () => {
    const view = "say(\u201chello\u201d)\nit\u2019s\n";
    expect(edit(view, 'say("hello")', 'say("hello world")')).toEqual({
      rung: "quotes",
      text: "say(\u201chello world\u201d)\nit\u2019s\n",
    });
    expect(edit("x = 'a'\n", "x = \u2018a\u2019", "x = \u2018b\u2019")).toEqual({
      rung: "quotes",
      text: "x = 'b'\n",
    });
  });

  it("rung 4 keeps each quote of a mixed-style region as the file has it", () => {
    // Straight delimiters around a curly apostrophe: curling every quote would break the code.
    const view = "def bar():\n    return 'it\u2019s'\n";
    expect(edit(view, "return 'it's'", "return 'it's ok'")).toEqual({
      rung: "quotes",
      text: "def bar():\n    return 'it\u2019s ok'\n",
    });
    // Quotes new_string adds follow the region when it uses one style only.
    expect(edit("say(\u201chi\u201d)\n", 'say("hi")', 'say("hi", "there")')).toEqual({
      rung: "quotes",
      text: "say(\u201chi\u201d, \u201cthere\u201d)\n",
    });
    // ...and are left alone when the region mixes styles.
    expect(edit("f('it\u2019s')\n", "f('it's')", "f('it's', 'x')")).toEqual({
      rung: "quotes",
      text: "f('it\u2019s', 'x')\n",
    });
  });

  it("rung 5: line-number prefixes copied from Read", () => {
    expect(edit("a\nb\nc\n", "2\tb\n3\tc", "2\tB\n3\tC")).toEqual({
      rung: "line-numbers",
      text: "a\nB\nC\n",
    });
    expect(edit("a\nb\nc\n", "  2\u2192b", "B")).toEqual({ rung: "line-numbers", text: "a\nB\nc\n" });
  });

  it("refuses a rung that matches in several places", () => {
    expect(edit("a \nb\na\t\nb\n", "a\nb", "c")).toMatchObject({
      ok: false,
      reason: "ambiguous",
      rung: "trailing-whitespace",
      lines: [1, 3],
    });
    expect(edit("  f(a)\n    f(a)\n", "f(a)\n", "g\n", true)).toMatchObject({ rung: "exact" });
    expect(edit("  f(x)\n  g\n    f(x)\n    g\n", "f(x)\ng", "h")).toMatchObject({
      ok: false,
      reason: "ambiguous",
      rung: "indentation",
    });
  });

  it("indentation by level prefers a mid-line start with the lines below at their own depth", () => {
    // Also fits as a copy shifted by one 8-column tab, which would indent baz() as a tab and 4 spaces.
    expect(
      edit("\tfoo := 1\n\t\tbar()\n", "foo := 1\n        bar()", "foo := 1\n        bar()\n    baz()"),
    ).toEqual({
      rung: "indentation-level",
      text: "\tfoo := 1\n\t\tbar()\n\tbaz()\n",
    });
  });

  it("does not take an indentation of no tab width for a tab", () => {
    expect(edit("\tp()\n", "   p()", "q()")).toMatchObject({ ok: false, reason: "not-found" });
  });

  it("does not combine two kinds of drift", () => {
    expect(edit("  a  \n  b\n", "a\nb", "c")).toMatchObject({ ok: false, reason: "not-found" });
  });
});
