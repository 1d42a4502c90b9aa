import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { missingFileMessage } from "../../src/fs/missing-file.js";
import { binaryLabel, sniffKind } from "../../src/fs/sniff.js";
import { tempDir } from "../helpers/context.js";

describe("paths", () => {
  it("sniffs images, PDFs and notebooks from their bytes and names", () => {
    expect(sniffKind("x", Buffer.from("\x89PNG\r\n\x1a\n....", "latin1"))).toEqual({
      kind: "image",
      mediaType: "image/png",
    });
    expect(sniffKind("x.png", Buffer.from("GIF89a", "latin1"))).toEqual({
      kind: "image",
      mediaType: "image/gif",
    });
    expect(sniffKind("x", Buffer.from("RIFF\0\0\0\0WEBPVP8 ", "latin1"))).toEqual({
      kind: "image",
      mediaType: "image/webp",
    });
    expect(sniffKind("x", Buffer.from("%PDF-1.7"))).toEqual({ kind: "pdf" });
    expect(sniffKind("a.IPYNB", Buffer.from("{"))).toEqual({ kind: "notebook" });
    expect(sniffKind("a.ts", Buffer.from("const x"))).toEqual({ kind: "text" });
  });

  it("names binary data by signature, else by extension", () => {
    expect(binaryLabel("a", Buffer.from("PK\x03\x04", "latin1"))).toMatch(/ZIP/);
    expect(binaryLabel("a.dat", Buffer.from([0, 1, 2]))).toBe("binary data (a .dat file)");
  });

  it("suggests close names in the directory, and says when the directory is missing", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "settings.json"), "");
    writeFileSync(join(dir, "README.md"), "");
    mkdirSync(join(dir, "src"));
    expect(await missingFileMessage(join(dir, "setings.json"), dir)).toContain(
      `Did you mean ${join(dir, "settings.json")}?`,
    );
    expect(await missingFileMessage(join(dir, "readme.txt"), dir)).toContain("README.md");
    expect(await missingFileMessage(join(dir, "nope", "deep", "x.ts"), dir)).toContain(
      `nearest existing ancestor is ${dir}`,
    );
  });

  it("names a file that sits where a directory should be", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "afile"), "x");
    const message = await missingFileMessage(join(dir, "afile", "sub", "x.txt"), dir);
    expect(message).toContain(`${join(dir, "afile")} is a file, not a directory`);
    expect(message).not.toContain("nearest existing ancestor");
  });

  it("says when the suggested name differs only in the Unicode form of an accent", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "caf\u00e9.txt"), "");
    const message = await missingFileMessage(join(dir, "cafe\u0301.txt"), dir);
    expect(message).toContain(`Did you mean ${join(dir, "caf\u00e9.txt")}? (it looks the same`);
    expect(await missingFileMessage(join(dir, "cafe.txt"), dir)).not.toContain("looks the same");
  });
});
