import fc from "fast-check";
import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { applySplices, decodeText, encodeBody, spliceBytes, unencodable } from "../../src/fs/codec.js";
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
    // UTF-8 with one stray byte is not taken for a legacy encoding (it reads as before).
    const japanese = Buffer.from(LEGACY_TEXTS["Shift_JIS (Japanese)"]!.text);
    const broken = Buffer.concat([japanese.subarray(0, 20), Buffer.from([0xff]), japanese.subarray(20)]);
    expect(decodeText(broken)!.format.encoding).toBe("latin1");
    for (const [name, bytes] of Object.entries(CORPUS)) {
      expect(decodeText(bytes)!.unwritable, name).toBeUndefined();
    }
  });

  it("never reads a fragment of text in a wrong legacy encoding, short ones included", () => {
    // Fragments of 8 to 40 characters in a line of code and a comment: short ones may fall back to
    // Windows-1252 (as before), but none may be read as another legacy encoding or Western text as one.
    const corpora: Array<[string, string[], string]> = [
      [
        "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。設定ファイルを読み込みます。エラーが発生しました。ユーザー名とパスワードを入力してください。",
        ["shift_jis", "euc-jp"],
        "ja",
      ],
      [
        "天下大势，分久必合，合久必分。周末七国分争，并入于秦。配置文件读取失败。请输入用户名和密码。服务器启动时读取此文件。",
        ["gbk"],
        "zh",
      ],
      [
        "天下大勢，分久必合，合久必分。周末七國分爭，並入於秦。設定檔讀取失敗。請輸入使用者名稱和密碼。伺服器啟動時讀取此檔案。",
        ["big5"],
        "zh-tw",
      ],
      [
        "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다. 설정 파일을 읽을 수 없습니다. 사용자 이름과 비밀번호를 입력하십시오.",
        ["euc-kr"],
        "ko",
      ],
      [
        "Все люди рождаются свободными и равными в своем достоинстве и правах. Не удалось прочитать файл настроек. Введите имя пользователя.",
        ["koi8-r", "windows-1251", "iso-8859-5"],
        "ru",
      ],
      [
        "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα. Δεν ήταν δυνατή η ανάγνωση του αρχείου ρυθμίσεων.",
        ["iso-8859-7"],
        "el",
      ],
      [
        "Der Bär läuft über die Straße. L'été dernier, nous sommes allés à la plage près de Nice. El señor Muñoz comió paella en Málaga. Århus og Ødegård, blåbærsyltetøy.",
        ["windows-1252"],
        "west",
      ],
    ];
    const expected: Record<string, string> = {
      shift_jis: "Shift_JIS",
      "euc-jp": "EUC-JP",
      gbk: "GB18030",
      big5: "Big5",
      "euc-kr": "EUC-KR",
      "koi8-r": "KOI8-R",
      "windows-1251": "windows-1251",
      "iso-8859-5": "ISO-8859-5",
      "iso-8859-7": "ISO-8859-7",
      "windows-1252": "latin1",
    };
    let seed = 1;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    const wrong: string[] = [];
    let detected = 0;
    for (const [text, labels] of corpora) {
      for (const label of labels) {
        for (let i = 0; i < 40; i++) {
          const length = 8 + Math.floor(random() * 33);
          const start = Math.floor(random() * (text.length - length));
          const fragment = text.slice(start, start + length);
          const file = `// ${fragment}\nconst x = 1; // ${fragment.slice(0, length / 2)}\n`;
          const { encoding } = decodeText(iconv.encode(file, label))!.format;
          if (encoding === expected[label]) detected++;
          else if (encoding !== "latin1" && encoding !== "utf8")
            wrong.push(`${label} read as ${encoding}: ${fragment}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    // Most fragments are long enough to be detected: the checks do not refuse everything.
    expect(detected).toBeGreaterThan(0.6 * 40 * 10);
  });

  it("splices any edit into a legacy file exactly as encoding the edited text would (LF and CRLF)", () => {
    const cases = ["Shift_JIS (Japanese)", "GBK (simplified Chinese)", "EUC-KR (Korean)", "KOI8-R (Russian)"];
    for (const name of cases) {
      const { text, iconv: label } = LEGACY_TEXTS[name]!;
      const alphabet = [...new Set(text)];
      fc.assert(
        fc.property(
          fc.nat({ max: text.length }),
          fc.nat({ max: 12 }),
          fc.array(fc.constantFrom(...alphabet), { maxLength: 10 }),
          fc.boolean(),
          (start, span, chars, crlf) => {
            const bytes = iconv.encode(crlf ? text.replaceAll("\n", "\r\n") : text, label);
            const decoded = decodeText(bytes)!;
            const splice = { start, end: Math.min(text.length, start + span), text: chars.join("") };
            const edited = applySplices(decoded.view, [splice]);
            const expected = iconv.encode(crlf ? edited.replaceAll("\n", "\r\n") : edited, label);
            expect(spliceBytes(decoded, [splice]).equals(expected)).toBe(true);
          },
        ),
        { numRuns: 200 },
      );
    }
  });
});
