import { describe, expect, it } from "vitest";
import {
  applySplices,
  decodeText,
  encodeBody,
  encodeText,
  type Splice,
  spliceBytes,
} from "../../src/fs/codec.js";
import { CORPUS } from "../fixtures/file/corpus.js";

function spliceAt(view: string, needle: string, text: string): Splice {
  const start = view.indexOf(needle);
  return { start, end: start + needle.length, text };
}

describe("codec", () => {
  it("detects encodings, BOMs, line endings and the final newline", () => {
    const formats = Object.fromEntries(Object.entries(CORPUS).map(([k, v]) => [k, decodeText(v)!.format]));
    expect(formats.lf).toMatchObject({ encoding: "utf8", bom: false, eol: "lf", finalNewline: true });
    expect(formats.crlf).toMatchObject({ eol: "crlf", newline: "\r\n" });
    expect(formats.mixed).toMatchObject({ eol: "mixed" });
    expect(formats["utf8-bom"]).toMatchObject({ encoding: "utf8", bom: true });
    expect(formats["utf16le-bom"]).toMatchObject({ encoding: "utf16le", bom: true, eol: "crlf" });
    expect(formats["utf16be-bom"]).toMatchObject({ encoding: "utf16be", bom: true });
    expect(formats.latin1).toMatchObject({ encoding: "latin1" });
    expect(formats["no-final-newline"]).toMatchObject({ finalNewline: false });
  });

  it("shows CRLF as LF in the view and decodes every encoding", () => {
    expect(decodeText(CORPUS.crlf)!.view).toBe("alpha\nbeta target here\ngamma\n");
    expect(decodeText(CORPUS["utf16be-bom"])!.view).toBe("alpha\nbeta target here\n");
    expect(decodeText(CORPUS.latin1)!.view).toBe("café\nbeta target here\nnaïve\n");
  });

  it("takes NUL-bearing data for binary", () => {
    expect(decodeText(Buffer.from([0x00, 0x01, 0x02, 0x41]))).toBeUndefined();
    // Little-endian 16-bit numbers look like UTF-16 by their zero bytes, but decode to control characters.
    expect(
      decodeText(Buffer.from(Uint16Array.from({ length: 64 }, (_, i) => i % 20).buffer)),
    ).toBeUndefined();
    // An odd length cannot be UTF-16, whatever its first bytes suggest.
    expect(decodeText(Buffer.concat([Buffer.from("hello", "utf16le"), Buffer.from([0x41])]))).toBeUndefined();
  });

  it("reads legacy 8-bit text as Windows-1252, so curly quotes and the euro sign survive", () => {
    const bytes = Buffer.from([0x93, 0x68, 0x69, 0x94, 0x20, 0x80, 0x81, 0x0a]);
    const decoded = decodeText(bytes)!;
    expect(decoded.view).toBe("\u201chi\u201d \u20ac\u0081\n");
    expect(encodeText(decoded.view, decoded.format).equals(bytes)).toBe(true);
    const out = spliceBytes(decoded, [spliceAt(decoded.view, "hi", "\u2018x\u2019 \u2014")]);
    expect([...out]).toEqual([0x93, 0x91, 0x78, 0x92, 0x20, 0x97, 0x94, 0x20, 0x80, 0x81, 0x0a]);
  });

  it("reads UTF-16 without a BOM and lone-CR (classic Mac) files as text", () => {
    expect(decodeText(CORPUS["utf16le-no-bom"])).toMatchObject({
      view: "alpha\nbeta target here\n",
      format: { encoding: "utf16le", bom: false, eol: "crlf" },
    });
    expect(decodeText(CORPUS["utf16be-no-bom"])!.format).toMatchObject({ encoding: "utf16be", bom: false });
    expect(decodeText(CORPUS["lone-cr"])).toMatchObject({
      view: "alpha\nbeta target here\ngamma\n",
      format: { eol: "cr", newline: "\r", finalNewline: true },
    });
  });

  it("gives lines inserted in a lone-CR file CR endings", () => {
    const decoded = decodeText(CORPUS["lone-cr"])!;
    const out = spliceBytes(decoded, [spliceAt(decoded.view, "gamma", "gamma\ndelta")]);
    expect(out.toString()).toBe("alpha\rbeta target here\rgamma\rdelta\r");
    expect(encodeText("a\nb\n", decoded.format).toString()).toBe("a\rb\r");
  });

  for (const [name, bytes] of Object.entries(CORPUS)) {
    it(`changes exactly the edited bytes of a ${name} file`, () => {
      const decoded = decodeText(bytes)!;
      const out = spliceBytes(decoded, [spliceAt(decoded.view, "target", "TARGET")]);
      const encode = (s: string) => encodeBody(s, decoded.format.encoding);
      const at = bytes.indexOf(encode("target"));
      const expected = Buffer.concat([
        bytes.subarray(0, at),
        encode("TARGET"),
        bytes.subarray(at + encode("target").length),
      ]);
      expect(out.equals(expected)).toBe(true);
    });
  }

  it("gives inserted lines the ending of the region they land in (mixed files)", () => {
    const decoded = decodeText(CORPUS.mixed)!;
    const out = spliceBytes(decoded, [spliceAt(decoded.view, "gamma", "gamma\nnew")]);
    expect(out.toString()).toBe("alpha\r\nbeta target here\ngamma\r\nnew\r\ndelta\n");
    const out2 = spliceBytes(decoded, [spliceAt(decoded.view, "beta", "beta\nnew")]);
    expect(out2.toString()).toBe("alpha\r\nbeta\nnew target here\ngamma\r\ndelta\n");
  });

  it("applies several splices to multi-byte UTF-8 text", () => {
    const decoded = decodeText(Buffer.from("é1\r\né2\r\né3\r\n"))!;
    const splices = [spliceAt(decoded.view, "1", "one"), spliceAt(decoded.view, "3", "three")];
    expect(spliceBytes(decoded, splices).toString()).toBe("éone\r\né2\r\néthree\r\n");
    expect(applySplices(decoded.view, splices)).toBe("éone\né2\néthree\n");
  });

  it("encodes new text in a format, keeping CRLFs the text brings", () => {
    expect(encodeText("a\nb\n", { encoding: "utf8", bom: false, newline: "\r\n" }).toString()).toBe(
      "a\r\nb\r\n",
    );
    expect(encodeText("a\r\nb\n", { encoding: "utf8", bom: false, newline: "\r\n" }).toString()).toBe(
      "a\r\nb\n",
    );
    expect([...encodeText("a", { encoding: "utf16le", bom: true, newline: "\n" })]).toEqual([
      0xff, 0xfe, 0x61, 0,
    ]);
  });
});
