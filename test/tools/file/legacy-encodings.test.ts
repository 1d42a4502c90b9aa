import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { readHead, streamWindow } from "../../../src/tools/file/read-stream.js";
import { LEGACY_TEXTS } from "../../fixtures/file/legacy.js";
import { call, fileContext } from "./util.js";

/** Read, Edit and Write on legacy-encoded files, checked by the bytes on disk. */

async function readFile(name: string, bytes: Buffer) {
  const ctx = fileContext();
  const path = join(ctx.workingDir, name);
  writeFileSync(path, bytes);
  const read = await call(ctx, "Read", { file_path: path });
  return { ctx, path, read };
}

const sjis = LEGACY_TEXTS["Shift_JIS (Japanese)"]!;
const gbk = LEGACY_TEXTS["GBK (simplified Chinese)"]!;
const koi8 = LEGACY_TEXTS["KOI8-R (Russian)"]!;

describe("legacy encodings through the tools", () => {
  it("Read shows Shift_JIS text as text, not mojibake", async () => {
    const { read } = await readFile("app.conf", iconv.encode(sjis.text, sjis.iconv));
    expect(read.isError).toBe(false);
    expect(read.text).toContain("4\t都市 = 東京");
    expect(read.metadata?.encoding).toBe("Shift_JIS");
  });

  it("Edit changes a GBK file in GBK and leaves every other byte as it was", async () => {
    const { ctx, path } = await readFile("app.conf", iconv.encode(gbk.text, gbk.iconv));
    const result = await call(ctx, "Edit", {
      file_path: path,
      old_string: "城市 = 北京",
      new_string: "城市 = 上海",
    });
    expect(result.isError).toBe(false);
    expect(readFileSync(path).equals(iconv.encode(gbk.text.replace("北京", "上海"), gbk.iconv))).toBe(true);
  });

  it("Edit refuses characters the file's encoding cannot store, naming them", async () => {
    const original = iconv.encode(koi8.text, koi8.iconv);
    const { ctx, path } = await readFile("app.conf", original);
    const result = await call(ctx, "Edit", {
      file_path: path,
      old_string: "имя = Иван Петров",
      new_string: "имя = 東京",
    });
    expect(result.isError).toBe(true);
    expect(result.text).toContain("KOI8-R-encoded and cannot store 東 京");
    expect(readFileSync(path).equals(original)).toBe(true);
  });

  it("Write keeps a KOI8-R file KOI8-R", async () => {
    const { ctx, path } = await readFile("app.conf", iconv.encode(koi8.text, koi8.iconv));
    const result = await call(ctx, "Write", { file_path: path, content: "имя = Пётр\n" });
    expect(result.isError).toBe(false);
    expect(readFileSync(path).equals(iconv.encode("имя = Пётр\n", "koi8-r"))).toBe(true);
  });

  it("Edit and Write refuse a Shift_JIS file that does not round-trip, and say what to do", async () => {
    // 0x87 0x90 (NEC's ≒) decodes to a character Shift_JIS encoders write as 0x81 0xE0.
    const original = Buffer.concat([iconv.encode(sjis.text, sjis.iconv), Buffer.from([0x87, 0x90, 0x0a])]);
    const { ctx, path, read } = await readFile("app.conf", original);
    expect(read.text).toContain("\u2252");
    const edit = await call(ctx, "Edit", { file_path: path, old_string: "8080", new_string: "9090" });
    expect(edit.isError).toBe(true);
    expect(edit.text).toContain(
      "cannot be changed: it reads as Shift_JIS, but encoding the decoded text again",
    );
    expect(edit.text).toContain("iconv -f Shift_JIS -t UTF-8");
    const write = await call(ctx, "Write", { file_path: path, content: "port = 9090\n" });
    expect(write.isError).toBe(true);
    expect(write.text).toContain("Nothing was changed");
    expect(readFileSync(path).equals(original)).toBe(true);
  });

  it("Edit and Write refuse an ISO-2022-JP file as stateful, after Read showed it", async () => {
    const original = Buffer.from("subject: \x1b$B$3$s$K$A$O\x1b(B world\n", "latin1");
    const { ctx, path, read } = await readFile("mail.txt", original);
    expect(read.text).toContain("subject: こんにちは world");
    const edit = await call(ctx, "Edit", { file_path: path, old_string: "world", new_string: "there" });
    expect(edit.isError).toBe(true);
    expect(edit.text).toMatch(
      /it is ISO-2022-JP, a stateful encoding .* which cc-tools reads but does not write/,
    );
    const write = await call(ctx, "Write", { file_path: path, content: "x\n" });
    expect(write.isError).toBe(true);
    expect(readFileSync(path).equals(original)).toBe(true);
  });

  it("pages through a legacy file too large to decode whole, decoding it as a stream", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "big.log");
    const line = "# 設定ファイル このファイルはサーバーの起動時に読み込まれます。名前 = 山田太郎";
    writeFileSync(path, iconv.encode(`${line}\n`.repeat(3000), "shift_jis"));
    const { window, linesSeen } = await streamWindow(path, await readHead(path), 2999, 1);
    expect(window.lines).toEqual([line, line]);
    expect(linesSeen).toBe(3000);
  });
});
