import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { tinyPdf } from "../../fixtures/file/pdf.js";
import { call, fileContext } from "./util.js";

function setup(name: string, content: string | Buffer) {
  const ctx = fileContext();
  const path = join(ctx.workingDir, name);
  writeFileSync(path, content);
  return { ctx, path };
}

describe("Read: text", () => {
  it("numbers lines from 1, shows CRLF as LF, and honours offset and limit", async () => {
    const { ctx } = setup("a.txt", "one\r\ntwo\r\nthree\r\n");
    expect((await call(ctx, "Read", { file_path: "a.txt" })).text).toBe("1\tone\n2\ttwo\n3\tthree");
    expect((await call(ctx, "Read", { file_path: "a.txt", offset: 2, limit: "1" })).text).toBe("2\ttwo");
  });

  it("cuts lines over 2000 characters with a marker", async () => {
    const { ctx } = setup("long.txt", `${"x".repeat(2500)}\n`);
    const { text } = await call(ctx, "Read", { file_path: "long.txt" });
    expect(text).toContain("[line cut: 500 more characters");
    expect(text.length).toBeLessThan(2200);
  });

  it("pages a large file: the first page plus the exact offset and limit of the next", async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `row ${i + 1} ${"y".repeat(60)}`);
    const { ctx } = setup("big.txt", `${lines.join("\n")}\n`);
    const first = await call(ctx, "Read", { file_path: "big.txt" });
    expect(first.isError).toBe(false);
    const next = /offset (\d+) and limit (\d+)/.exec(first.text);
    expect(next).not.toBeNull();
    const lastShown = Number(next![1]) - 1;
    expect(first.text).toContain(`${lastShown}\trow ${lastShown} `);
    const second = await call(ctx, "Read", { file_path: "big.txt", offset: next![1], limit: next![2] });
    expect(second.text.startsWith(`${lastShown + 1}\trow ${lastShown + 1} `)).toBe(true);
  });

  it("tells where to go on after the default 2000 lines, but not after an exact limit", async () => {
    const { ctx } = setup("rows.txt", `${Array.from({ length: 2500 }, (_, i) => `r${i + 1}`).join("\n")}\n`);
    expect((await call(ctx, "Read", { file_path: "rows.txt", offset: 2 })).text).toMatch(
      /Lines 2-2001 of 2500 shown\. For the next page, Read with offset 2002 and limit 499\./,
    );
    expect((await call(ctx, "Read", { file_path: "rows.txt", offset: 2, limit: 3 })).text).toBe(
      "2\tr2\n3\tr3\n4\tr4",
    );
  });

  it("keeps to the token budget set in the environment", async () => {
    const { ctx } = setup(
      "rows.txt",
      `${Array.from({ length: 100 }, (_, i) => `row ${i + 1}`).join("\n")}\n`,
    );
    vi.stubEnv("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS", "10");
    try {
      const { text } = await call(ctx, "Read", { file_path: "rows.txt", limit: 50 });
      // 10 tokens is 40 characters: five "N\trow N" lines, and four more after them.
      expect(text).toBe(
        "1\trow 1\n2\trow 2\n3\trow 3\n4\trow 4\n5\trow 5\n\n[Lines 1-5 of 100 shown. For the next page, Read with offset 6 and limit 4.]",
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("takes the token budget from the settings' env too, as Claude Code does", async () => {
    const ctx = fileContext();
    ctx.config.env.CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS = "10";
    writeFileSync(
      join(ctx.workingDir, "rows.txt"),
      `${Array.from({ length: 100 }, (_, i) => `row ${i + 1}`).join("\n")}\n`,
    );
    const { text } = await call(ctx, "Read", { file_path: "rows.txt", limit: 50 });
    expect(text).toContain("[Lines 1-5 of 100 shown. For the next page, Read with offset 6 and limit 4.]");
  });

  it("notes an empty file and an offset past the end instead of failing", async () => {
    const { ctx } = setup("empty.txt", "");
    const empty = await call(ctx, "Read", { file_path: "empty.txt" });
    expect(empty.isError).toBe(false);
    expect(empty.text).toMatch(/<system-reminder>.*empty/);
    writeFileSync(join(ctx.workingDir, "short.txt"), "a\nb\n");
    const past = await call(ctx, "Read", { file_path: "short.txt", offset: 10 });
    expect(past.isError).toBe(false);
    expect(past.text).toMatch(/has 2 lines, so offset 10 is past its end/);
  });

  it("reads latin1 and UTF-16 files as text", async () => {
    const { ctx } = setup("l1.txt", Buffer.from("caf\xe9\n", "latin1"));
    expect((await call(ctx, "Read", { file_path: "l1.txt" })).text).toBe("1\tcaf\u00e9");
    writeFileSync(
      join(ctx.workingDir, "u16.txt"),
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hi\n", "utf16le")]),
    );
    expect((await call(ctx, "Read", { file_path: "u16.txt" })).text).toBe("1\thi");
  });
});

describe("Read: files too large to decode whole", () => {
  it("pages through them from a stream, and Edit refuses them with a way out", async () => {
    const line = (i: number) => `entry ${i} ${"z".repeat(90)}`;
    const count = 700_000;
    const ctx = fileContext();
    const path = join(ctx.workingDir, "huge.log");
    const chunks: string[] = [];
    for (let i = 1; i <= count; i++) chunks.push(line(i));
    writeFileSync(path, `${chunks.join("\r\n")}\r\n`);
    const first = await call(ctx, "Read", { file_path: "huge.log" });
    expect(first.text.startsWith(`1\t${line(1)}\n2\t${line(2)}`)).toBe(true);
    expect(first.text).toMatch(
      /too large to count its lines.*For the next page, Read with offset \d+ and limit \d+\./,
    );
    const middle = await call(ctx, "Read", { file_path: "huge.log", offset: 654_321, limit: 2 });
    expect(middle.text).toBe(
      `654321\t${line(654_321)}\n654322\t${line(654_322)}\n\n${middle.text.split("\n\n")[1]}`,
    );
    const past = await call(ctx, "Read", { file_path: "huge.log", offset: count + 5 });
    expect(past.text).toContain(`has ${count} lines`);
    const edit = await call(ctx, "Edit", { file_path: "huge.log", old_string: "entry 1 ", new_string: "x" });
    expect(edit.text).toMatch(/more than Write and Edit change.*sed -i/);
  }, 60_000);
});

describe("Read: errors", () => {
  it("names the working directory and close names for a missing file", async () => {
    const { ctx } = setup("config.json", "{}");
    const result = await call(ctx, "Read", { file_path: "confg.json" });
    expect(result.isError).toBe(true);
    expect(result.text).toContain(`working directory: ${ctx.workingDir}`);
    expect(result.text).toContain(`Did you mean ${join(ctx.workingDir, "config.json")}`);
  });

  it("points a directory at Glob or ls", async () => {
    const ctx = fileContext();
    mkdirSync(join(ctx.workingDir, "src"));
    const result = await call(ctx, "Read", { file_path: "src" });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/is a directory.*Glob.*ls/);
  });

  it("names the type of a binary file", async () => {
    const { ctx } = setup(
      "app.bin",
      Buffer.concat([Buffer.from("\x7fELF\x02\x01\x01", "latin1"), Buffer.alloc(64)]),
    );
    const result = await call(ctx, "Read", { file_path: "app.bin" });
    expect(result.text).toMatch(/<tool_use_error>.*binary \(ELF executable/);
  });

  it("rejects pages for a file that is not a PDF", async () => {
    const { ctx } = setup("a.txt", "x\n");
    expect((await call(ctx, "Read", { file_path: "a.txt", pages: "1" })).text).toMatch(/only to PDF/);
  });
});

describe("Read: images, PDFs, notebooks", () => {
  it("returns a PNG as an image block", async () => {
    const { default: sharp } = await import("sharp");
    const png = await sharp({ create: { width: 4, height: 3, channels: 3, background: "#f00" } })
      .png()
      .toBuffer();
    const { ctx } = setup("dot.png", png);
    const result = await call(ctx, "Read", { file_path: "dot.png" });
    expect(result.content).toEqual([{ type: "image", data: png.toString("base64"), mimeType: "image/png" }]);
  });

  it("scales an image over the model's limits down before returning it", async () => {
    const { default: sharp } = await import("sharp");
    const wide = await sharp({ create: { width: 9000, height: 100, channels: 3, background: "#0a0" } })
      .png()
      .toBuffer();
    const { ctx } = setup("wide.png", wide);
    const result = await call(ctx, "Read", { file_path: "wide.png" });
    const image = result.content.find((b) => b.type === "image")!;
    const meta = await sharp(Buffer.from(image.type === "image" ? image.data : "", "base64")).metadata();
    expect(meta.width).toBeLessThanOrEqual(8000);
    expect(result.text).toMatch(/scaled to 8000x\d+/);
  });

  it("re-encodes an image whose bytes exceed the limit until it fits", async () => {
    const { default: sharp } = await import("sharp");
    const side = 1500;
    const noise = randomBytes(side * side * 3);
    const png = await sharp(noise, { raw: { width: side, height: side, channels: 3 } })
      .png()
      .toBuffer();
    expect(png.length).toBeGreaterThan(3.75 * 1024 * 1024);
    const { ctx } = setup("noise.png", png);
    const result = await call(ctx, "Read", { file_path: "noise.png" });
    const image = result.content.find((b) => b.type === "image");
    expect(image?.type === "image" && image.data.length).toBeLessThanOrEqual(5 * 1024 * 1024);
    expect(result.text).toMatch(/exceeded the model's limits/);
  }, 30_000);

  it("returns PDF text per page with page markers, honouring pages", async () => {
    const { ctx } = setup("doc.pdf", tinyPdf(["First page text", "Second page text", "Third page text"]));
    const all = await call(ctx, "Read", { file_path: "doc.pdf" });
    expect(all.text).toMatch(/--- Page 1 of 3 ---\nFirst page text/);
    expect(all.text).toContain("--- Page 3 of 3 ---");
    const some = await call(ctx, "Read", { file_path: "doc.pdf", pages: "2-3" });
    expect(some.text).not.toContain("First page");
    expect(some.text).toMatch(/--- Page 2 of 3 ---\nSecond page text/);
    expect((await call(ctx, "Read", { file_path: "doc.pdf", pages: "7" })).text).toMatch(/has 3 pages/);
  }, 30_000);

  it("refuses a truncated image with a way out instead of passing it to the model", async () => {
    const { default: sharp } = await import("sharp");
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#00f" } })
      .png()
      .toBuffer();
    const { ctx } = setup("cut.png", png.subarray(0, 60));
    const result = await call(ctx, "Read", { file_path: "cut.png" });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(
      /cut\.png has the header of a PNG image but cannot be decoded .*truncated or corrupt/,
    );
    expect(result.text).not.toMatch(/unexpected/);
  });

  it("refuses a corrupt PDF with a way out, not an unexpected failure", async () => {
    const { ctx } = setup("broken.pdf", "%PDF-1.4\nthis is not really a pdf");
    const result = await call(ctx, "Read", { file_path: "broken.pdf" });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/broken\.pdf starts like a PDF but cannot be parsed .*pdftotext/);
    expect(result.text).not.toMatch(/unexpected/);
  }, 30_000);

  it("returns every notebook cell with its id, type, source and outputs, images as image blocks", async () => {
    const nb = {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: { language_info: { name: "python" } },
      cells: [
        { cell_type: "markdown", id: "intro", metadata: {}, source: ["# Title\n", "text"] },
        {
          cell_type: "code",
          id: "calc",
          metadata: {},
          execution_count: 1,
          source: "print(1+1)",
          outputs: [
            { output_type: "stream", name: "stdout", text: ["2\n"] },
            {
              output_type: "display_data",
              metadata: {},
              data: { "image/png": "iVBORw0KGgo=", "text/plain": "<Figure>" },
            },
          ],
        },
      ],
    };
    const { ctx } = setup("n.ipynb", JSON.stringify(nb, null, 1));
    const result = await call(ctx, "Read", { file_path: "n.ipynb" });
    expect(result.text).toContain('<cell id="intro" type="markdown">\n# Title\ntext\n</cell>');
    expect(result.text).toContain(
      '<cell id="calc" type="code" language="python" execution_count="1">\nprint(1+1)',
    );
    expect(result.text).toContain("2\n<Figure>");
    expect(result.content).toContainEqual({ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" });
  });
});
