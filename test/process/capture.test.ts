import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OutputCapture } from "../../src/process/capture.js";
import { tempDir } from "../helpers/context.js";

function capture(dir: string, extra: Partial<ConstructorParameters<typeof OutputCapture>[0]> = {}) {
  return new OutputCapture({
    inlineChars: 20,
    headChars: 5,
    tailChars: 5,
    filePath: () => join(dir, "out.txt"),
    ...extra,
  });
}

describe("OutputCapture", () => {
  it("keeps short output whole and writes no file", () => {
    const c = capture(tempDir());
    c.write(Buffer.from("hello "));
    c.write(Buffer.from("world"));
    c.finish();
    expect(c.snapshot()).toMatchObject({ whole: "hello world", totalChars: 11, file: undefined });
  });

  it("past the inline limit keeps head and tail and spills every byte to the file", () => {
    const dir = tempDir();
    const c = capture(dir);
    const text = "0123456789abcdefghijklmnopqrstuvwxyz";
    for (const ch of text) c.write(Buffer.from(ch));
    c.finish();
    const snap = c.snapshot();
    expect(snap).toMatchObject({ whole: undefined, head: "01234", tail: "vwxyz", totalChars: text.length });
    expect(readFileSync(snap.file!, "utf8")).toBe(text);
  });

  it("decodes multi-byte characters split across chunks", () => {
    const c = capture(tempDir());
    const bytes = Buffer.from("héllo");
    c.write(bytes.subarray(0, 2));
    c.write(bytes.subarray(2));
    c.finish();
    expect(c.snapshot().whole).toBe("héllo");
  });

  it("stops the file at its size limit and says so", () => {
    const c = capture(tempDir(), { maxFileBytes: 10 });
    c.write(Buffer.from("x".repeat(30)));
    c.finish();
    const snap = c.snapshot();
    expect(readFileSync(snap.file!, "utf8")).toBe("x".repeat(10));
    expect(snap.fileComplete).toBe(false);
    expect(snap.totalChars).toBe(30);
  });

  it("writes the file from the first byte when eager", () => {
    const c = capture(tempDir(), { eagerFile: true });
    c.write(Buffer.from("ab"));
    expect(readFileSync(c.file!, "utf8")).toBe("ab");
    c.finish();
    expect(c.snapshot().whole).toBe("ab");
  });

  it("forgets everything on restart, spilled output and a half-written character included", () => {
    const c = capture(tempDir(), { eagerFile: true, maxFileBytes: 30 });
    c.write(Buffer.from("y".repeat(40)));
    c.write(Buffer.from("é").subarray(0, 1));
    c.restart();
    c.write(Buffer.from("again"));
    c.finish();
    expect(c.snapshot()).toMatchObject({ whole: "again", totalChars: 5, fileComplete: true });
    expect(readFileSync(c.file!, "utf8")).toBe("again");
  });
});
