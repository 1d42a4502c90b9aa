import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { decodeText, encodeBody, spliceBytes, unencodable } from "../../src/fs/codec.js";
import { CORPUS } from "../fixtures/file/corpus.js";
import { LEGACY_TEXTS } from "../fixtures/file/legacy.js";

describe("legacy encodings", () => {
  for (const [name, { text, iconv: label, encoding }] of Object.entries(LEGACY_TEXTS)) {
    it(`reads ${name} and splices into it byte for byte`, () => {
      const bytes = iconv.encode(text, label);
      const decoded = decodeText(bytes)!;
      expect(decoded.format.encoding).toBe(encoding);
      expect(decoded.view).toBe(text);
      expect(decoded.unwritable).toBeUndefined();
      const at = decoded.view.indexOf("8080");
      const out = spliceBytes(decoded, [{ start: at, end: at + 4, text: "9090" }]);
      expect(out.equals(iconv.encode(text.replace("8080", "9090"), label))).toBe(true);
      // A splice in the middle of the multi-byte text lands on character boundaries.
      const line = decoded.view.indexOf("\n", decoded.view.indexOf("\n") + 1) + 1;
      const spliced = spliceBytes(decoded, [{ start: line, end: line, text: "# ok\n" }]);
      expect(spliced.equals(iconv.encode(`${text.slice(0, line)}# ok\n${text.slice(line)}`, label))).toBe(
        true,
      );
    });
  }

  it("keeps CRLF line endings of a legacy file", () => {
    const { text, iconv: label } = LEGACY_TEXTS["Shift_JIS (Japanese)"]!;
    const bytes = iconv.encode(text.replaceAll("\n", "\r\n"), label);
    const decoded = decodeText(bytes)!;
    expect(decoded.format).toMatchObject({ encoding: "Shift_JIS", eol: "crlf" });
    const at = decoded.view.indexOf("東京");
    const out = spliceBytes(decoded, [{ start: at, end: at + 2, text: "大阪\n京都" }]);
    expect(out.equals(iconv.encode(text.replace("東京", "大阪\n京都").replaceAll("\n", "\r\n"), label))).toBe(
      true,
    );
  });

  it("names the characters a legacy encoding cannot store", () => {
    expect(unencodable("東京 ☃ Ж", "Shift_JIS")).toEqual(["☃"]);
    expect(unencodable("Иван ☃ 東", "KOI8-R")).toEqual(["☃", "東"]);
    expect(encodeBody("Иван", "KOI8-R").equals(iconv.encode("Иван", "koi8-r"))).toBe(true);
  });

  it("marks a file whose decoding does not round-trip as unwritable", () => {
    // 0x87 0x90 is NEC's ≒, which Shift_JIS encoders write as JIS X 0208's 0x81 0xE0.
    const { text, iconv: label } = LEGACY_TEXTS["Shift_JIS (Japanese)"]!;
    const bytes = Buffer.concat([iconv.encode(text, label), Buffer.from([0x87, 0x90, 0x0a])]);
    const decoded = decodeText(bytes)!;
    expect(decoded.format.encoding).toBe("Shift_JIS");
    expect(decoded.view).toBe(`${text}\u2252\n`);
    expect(decoded.unwritable).toMatch(/does not give back the same bytes/);
    expect(() => spliceBytes(decoded, [{ start: 0, end: 1, text: "!" }])).toThrow(/cannot splice/);
  });

  it("reads ISO-2022-JP and UTF-7 (stateful) and marks them unwritable", () => {
    const jis = Buffer.from("subject: \x1b$B$3$s$K$A$O\x1b(B world\n", "latin1");
    const decoded = decodeText(jis)!;
    expect(decoded.format.encoding).toBe("ISO-2022-JP");
    expect(decoded.view).toBe("subject: こんにちは world\n");
    expect(decoded.unwritable).toMatch(/stateful/);
    const utf7 = decodeText(Buffer.from("+/v8-Hi +ZeVnLIqe-\n"))!;
    expect(utf7.format.encoding).toBe("UTF-7");
    expect(utf7.view).toBe("Hi 日本語\n");
    expect(utf7.unwritable).toMatch(/stateful/);
  });

  it("keeps Western 8-bit text Windows-1252, short legacy text included", () => {
    const western = [
      "Der Bär läuft über die Straße. Müller, Jürgen, Größe, Fußgänger.\n",
      "L'été dernier, nous sommes allés à la plage près de Nice. Ça coûte trop cher.\n",
      "# Configuración\nnombre = José\nciudad = Málaga\n",
      "Århus og Ødegård ligger i Danmark. Blåbærsyltetøy, ærlig, øl.\n",
      "Ça va?\n",
      "\u201cquoted\u201d \u2014 5 \u20ac\n",
    ];
    for (const text of western) {
      const decoded = decodeText(iconv.encode(text, "windows-1252"))!;
      expect(decoded.format.encoding).toBe("latin1");
      expect(decoded.view).toBe(text);
    }
    // Too little to tell Shift_JIS from its neighbours: read as before, not guessed.
    expect(decodeText(iconv.encode("設定\n", "shift_jis"))!.format.encoding).toBe("latin1");
  });

  it("does not look further than UTF-8 for UTF-8 and ASCII, ANSI escapes included", () => {
    for (const text of [
      "plain ascii\n",
      "caf\u00e9 \u6771\u4eac\n",
      "\x1b[31mred\x1b[0m\n",
      "+1 for this\n",
    ]) {
      expect(decodeText(Buffer.from(text))!.format.encoding).toBe("utf8");
    }
    for (const [name, bytes] of Object.entries(CORPUS)) {
      expect(decodeText(bytes)!.unwritable, name).toBeUndefined();
    }
  });
});
