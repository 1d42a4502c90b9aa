import { chmodSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decodeText, encodeBody } from "../../../src/fs/codec.js";
import { CORPUS } from "../../fixtures/file/corpus.js";
import { call, fileContext } from "./util.js";

function setup(content: string | Buffer, name = "f.txt") {
  const ctx = fileContext();
  const path = join(ctx.workingDir, name);
  writeFileSync(path, content);
  return { ctx, path };
}

async function readThenEdit(content: string | Buffer, input: Record<string, unknown>) {
  const { ctx, path } = setup(content);
  await call(ctx, "Read", { file_path: path });
  const result = await call(ctx, "Edit", { file_path: path, ...input });
  return { ctx, path, result, bytes: readFileSync(path) };
}

describe("Edit: the golden round-trip corpus", () => {
  for (const [name, original] of Object.entries(CORPUS)) {
    it(`changes only the edited bytes of a ${name} file`, async () => {
      const { result, bytes } = await readThenEdit(original, { old_string: "target", new_string: "TARGET" });
      expect(result.isError).toBe(false);
      const { encoding } = decodeText(original)!.format;
      const encode = (s: string) => encodeBody(s, encoding);
      const at = original.indexOf(encode("target"));
      const expected = Buffer.concat([
        original.subarray(0, at),
        encode("TARGET"),
        original.subarray(at + encode("target").length),
      ]);
      expect(bytes.equals(expected)).toBe(true);
    });
  }

  it("keeps a CRLF file CRLF when old_string and new_string span lines with LF", async () => {
    const { bytes } = await readThenEdit("a\r\nb\r\nc\r\n", { old_string: "a\nb", new_string: "a\nx\nb" });
    expect(bytes.toString()).toBe("a\r\nx\r\nb\r\nc\r\n");
  });
});

describe("Edit: the ladder through the pipeline", () => {
  const cases: Array<[string, string, string, string, string]> = [
    ["line-endings", "a\nb\n", "a\r\nb", "A\r\nB", "A\nB\n"],
    ["trailing-whitespace", "x = 1   \ny = 2\n", "x = 1\ny = 2", "x = 3\ny = 2", "x = 3\ny = 2\n"],
    [
      "indentation",
      "def f():\n    if a:\n        b()\n",
      "if a:\n    b()",
      "if a:\n    c()",
      "def f():\n    if a:\n        c()\n",
    ],
    ["quotes", "print(\u201cok\u201d)\n", 'print("ok")', 'print("fine")', "print(\u201cfine\u201d)\n"],
    ["line-numbers", "one\ntwo\n", "2\ttwo", "2\tTWO", "one\nTWO\n"],
    [
      "unicode-form",
      "caf\u00e9 au lait\n",
      "cafe\u0301 au",
      "cafe\u0301 noir au",
      "caf\u00e9 noir au lait\n",
    ],
    ["unicode-form", "cafe\u0301\n", "caf\u00e9", "the caf\u00e9", "the cafe\u0301\n"],
  ];
  for (const [rung, content, oldString, newString, expected] of cases) {
    it(`matches after ${rung} (${JSON.stringify(oldString)}) and says so`, async () => {
      const { result, bytes } = await readThenEdit(content, { old_string: oldString, new_string: newString });
      expect(result.isError).toBe(false);
      expect(result.metadata?.rung).toBe(rung);
      expect(result.text).toContain("Matched after");
      expect(bytes.toString()).toBe(expected);
    });
  }
});

describe("Edit: refusals leave the file untouched", () => {
  const content = "alpha\nbeta\ngamma\nbeta\n";
  const refusals: Array<[string, Record<string, unknown>, RegExp]> = [
    ["not found", { old_string: "delta", new_string: "x" }, /not found/],
    ["several matches", { old_string: "beta", new_string: "x" }, /matches 2 places .* lines 2, 4/],
    ["old == new", { old_string: "alpha", new_string: "alpha" }, /the same/],
    ["empty old_string on a non-empty file", { old_string: "", new_string: "x" }, /old_string is empty/],
  ];
  for (const [name, input, message] of refusals) {
    it(`refuses: ${name}`, async () => {
      const { result, bytes } = await readThenEdit(content, input);
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/^<tool_use_error>/);
      expect(result.text).toMatch(message);
      expect(bytes.toString()).toBe(content);
    });
  }

  it("refuses notebooks with a pointer to NotebookEdit", async () => {
    const { ctx, path } = setup("{}", "n.ipynb");
    const result = await call(ctx, "Edit", { file_path: path, old_string: "{", new_string: "[" });
    expect(result.text).toContain("NotebookEdit");
    expect(readFileSync(path, "utf8")).toBe("{}");
  });

  it("shows the closest region with visible whitespace on a near miss", async () => {
    const { result } = await readThenEdit("function f() {\n\treturn 1;\n}\n", {
      old_string: "function f() {\n    return 2;\n}",
      new_string: "x",
    });
    expect(result.text).toContain("lines 1-3");
    expect(result.text).toContain("2\t\treturn 1;");
    expect(result.text).toContain("- \u2192return\u00b71;");
    expect(result.text).toContain("+ \u00b7\u00b7\u00b7\u00b7return\u00b72;");
  });

  it("stores the euro sign and curly quotes in a legacy 8-bit file as Windows-1252 bytes", async () => {
    const original = Buffer.from("caf\xe9 price 5\n", "latin1");
    const { result, bytes } = await readThenEdit(original, {
      old_string: "price 5",
      new_string: "price \u201c5 \u20ac\u201d",
    });
    expect(result.isError).toBe(false);
    expect([...bytes]).toEqual([
      ...Buffer.from("caf\xe9 price ", "latin1"),
      0x93,
      0x35,
      0x20,
      0x80,
      0x94,
      0x0a,
    ]);
  });

  it("refuses characters a latin1 file cannot store", async () => {
    const original = Buffer.from("caf\xe9\n", "latin1");
    const { result, bytes } = await readThenEdit(original, {
      old_string: "caf\u00e9",
      new_string: "caf\u00e9 \u2603",
    });
    expect(result.text).toMatch(/latin1-encoded and cannot store \u2603 from new_string/);
    expect(bytes.equals(original)).toBe(true);
  });
});

describe("Edit: read-before-write", () => {
  it("refuses a file never read in this session, and accepts a partial read", async () => {
    const { ctx, path } = setup("a\nb\nc\n");
    const refused = await call(ctx, "Edit", { file_path: path, old_string: "c", new_string: "C" });
    expect(refused.text).toMatch(/has not been read/);
    expect(readFileSync(path, "utf8")).toBe("a\nb\nc\n");
    await call(ctx, "Read", { file_path: path, offset: 1, limit: 1 });
    const ok = await call(ctx, "Edit", { file_path: path, old_string: "c", new_string: "C" });
    expect(ok.isError).toBe(false);
  });

  it("refuses after a content change, shows the diff, then lets the retry through", async () => {
    const { ctx, path } = setup("one\ntwo\nthree\n");
    await call(ctx, "Read", { file_path: path });
    writeFileSync(path, "one\n2\nthree\n");
    const refused = await call(ctx, "Edit", { file_path: path, old_string: "three", new_string: "3" });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("-two");
    expect(refused.text).toContain("+2");
    expect(readFileSync(path, "utf8")).toBe("one\n2\nthree\n");
    const retry = await call(ctx, "Edit", { file_path: path, old_string: "three", new_string: "3" });
    expect(retry.isError).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("one\n2\n3\n");
  });

  it("does not count a touch (new mtime, same bytes) or a mode change as a change", async () => {
    const { ctx, path } = setup("same\n");
    await call(ctx, "Read", { file_path: path });
    utimesSync(path, new Date(2001, 1, 1), new Date(2001, 1, 1));
    chmodSync(path, 0o600);
    const result = await call(ctx, "Edit", { file_path: path, old_string: "same", new_string: "new" });
    expect(result.isError).toBe(false);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("counts its own edits as read: consecutive edits need no new Read", async () => {
    const { ctx, path } = setup("a\n");
    await call(ctx, "Read", { file_path: path });
    expect((await call(ctx, "Edit", { file_path: path, old_string: "a", new_string: "b" })).isError).toBe(
      false,
    );
    expect((await call(ctx, "Edit", { file_path: path, old_string: "b", new_string: "c" })).isError).toBe(
      false,
    );
    expect(readFileSync(path, "utf8")).toBe("c\n");
  });

  it("creates a missing file from an empty old_string", async () => {
    const ctx = fileContext();
    const result = await call(ctx, "Edit", {
      file_path: "new/dir/x.txt",
      old_string: "",
      new_string: "hi\n",
    });
    expect(result.text).toMatch(/^Created/);
    expect(readFileSync(join(ctx.workingDir, "new/dir/x.txt"), "utf8")).toBe("hi\n");
  });
});

describe("Edit: results and concurrency", () => {
  it("shows a few numbered lines around the change and a structured patch", async () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`);
    const { result } = await readThenEdit(`${lines.join("\n")}\n`, {
      old_string: "line 50\n",
      new_string: "fifty\n",
    });
    expect(result.text).toContain("50\tfifty");
    expect(result.text).toContain("47\tline 47");
    expect(result.text).not.toContain("line 60");
    expect(result.metadata?.patch).toEqual({
      hunks: [
        {
          oldStart: 47,
          oldLines: 7,
          newStart: 47,
          newLines: 7,
          lines: [
            " line 47",
            " line 48",
            " line 49",
            "-line 50",
            "+fifty",
            " line 51",
            " line 52",
            " line 53",
          ],
        },
      ],
    });
  });

  it("says when replace_all replaced every occurrence", async () => {
    const { result, bytes } = await readThenEdit("x y x y x\n", {
      old_string: "x",
      new_string: "z",
      replace_all: true,
    });
    expect(result.text).toContain("replaced all 3 occurrences");
    expect(bytes.toString()).toBe("z y z y z\n");
  });

  it("words a replace_all that found a single occurrence as such", async () => {
    const { result } = await readThenEdit("x y\n", { old_string: "x", new_string: "z", replace_all: true });
    expect(result.text).toContain("replaced all occurrences (there was 1)");
  });

  it("serialises parallel edits of one file so none is lost", async () => {
    const names = Array.from({ length: 16 }, (_, i) => `name${i}`);
    const { ctx, path } = setup(`${names.join("\n")}\n`);
    await call(ctx, "Read", { file_path: path });
    const results = await Promise.all(
      names.map((n) =>
        call(ctx, "Edit", { file_path: path, old_string: `${n}\n`, new_string: `${n.toUpperCase()}\n` }),
      ),
    );
    expect(results.every((r) => !r.isError)).toBe(true);
    expect(readFileSync(path, "utf8")).toBe(`${names.map((n) => n.toUpperCase()).join("\n")}\n`);
  });
});

describe("Edit: how ambiguity and counts are reported", () => {
  it("lists the line of overlapping matches once, and counts a lone replace_all match in words", async () => {
    const { ctx, path, result } = await readThenEdit("aaa\n", { old_string: "aa", new_string: "b" });
    expect(result.isError).toBe(true);
    expect(result.text).toContain("matches 2 places");
    expect(result.text).toContain("at line 1.");
    const all = await call(ctx, "Edit", {
      file_path: path,
      old_string: "aa",
      new_string: "b",
      replace_all: true,
    });
    expect(all.text).toContain("replaced all occurrences (there was 1)");
    expect(readFileSync(path, "utf8")).toBe("ba\n");
  });

  it("says more than the listed number when old_string occurs very often", async () => {
    const { result } = await readThenEdit("x\n".repeat(1000), { old_string: "x\n", new_string: "y\n" });
    expect(result.isError).toBe(true);
    expect(result.text).toContain("matches more than 20 places");
  });

  it("refuses an edit after only the final newline changed, and the diff shows that change", async () => {
    const { ctx, path } = setup("alpha\nbeta");
    await call(ctx, "Read", { file_path: path });
    writeFileSync(path, "alpha\nbeta\n");
    const result = await call(ctx, "Edit", { file_path: path, old_string: "alpha", new_string: "ALPHA" });
    expect(result.isError).toBe(true);
    expect(result.text).toContain("-beta\n\\ (no newline at the end of the file)\n+beta");
    const retry = await call(ctx, "Edit", { file_path: path, old_string: "alpha", new_string: "ALPHA" });
    expect(retry.isError).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("ALPHA\nbeta\n");
  });
});
