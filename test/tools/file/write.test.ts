import { chmodSync, linkSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, fileContext } from "./util.js";

describe("Write", () => {
  it("creates a file and its missing parent directories, and says so with the line count", async () => {
    const ctx = fileContext();
    const result = await call(ctx, "Write", { file_path: "a/b/c.txt", content: "one\ntwo\n" });
    expect(result.text).toBe(`Created ${join(ctx.workingDir, "a/b/c.txt")} (2 lines).`);
    expect(readFileSync(join(ctx.workingDir, "a/b/c.txt"), "utf8")).toBe("one\ntwo\n");
  });

  it("refuses to overwrite a file never read, and one changed since its read", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "x.txt");
    writeFileSync(path, "original\n");
    expect((await call(ctx, "Write", { file_path: path, content: "new\n" })).text).toMatch(
      /has not been read/,
    );
    expect(readFileSync(path, "utf8")).toBe("original\n");
    await call(ctx, "Read", { file_path: path });
    writeFileSync(path, "someone else\n");
    const refused = await call(ctx, "Write", { file_path: path, content: "new\n" });
    expect(refused.text).toMatch(/changed on disk since you read it/);
    expect(readFileSync(path, "utf8")).toBe("someone else\n");
  });

  it("keeps an existing file's encoding, BOM and line endings", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "w.txt");
    writeFileSync(path, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("a\r\nb\r\n", "utf16le")]));
    await call(ctx, "Read", { file_path: path });
    const result = await call(ctx, "Write", { file_path: path, content: "x\ny\nz\n" });
    expect(result.text).toMatch(/^Updated .* \(3 lines\)\.$/);
    expect(
      readFileSync(path).equals(
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("x\r\ny\r\nz\r\n", "utf16le")]),
      ),
    ).toBe(true);
  });

  it("switches a latin1 file to UTF-8 when the content needs it, and says so", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "l.txt");
    writeFileSync(path, Buffer.from("caf\xe9\n", "latin1"));
    await call(ctx, "Read", { file_path: path });
    const result = await call(ctx, "Write", { file_path: path, content: "snow \u2603\n" });
    expect(result.text).toMatch(/now UTF-8/);
    expect(readFileSync(path, "utf8")).toBe("snow \u2603\n");
  });

  it("follows .editorconfig for new files", async () => {
    const ctx = fileContext();
    writeFileSync(
      join(ctx.workingDir, ".editorconfig"),
      "root = true\n[*.bat]\nend_of_line = crlf\ncharset = utf-8-bom\n",
    );
    await call(ctx, "Write", { file_path: "run.bat", content: "echo a\necho b\n" });
    await call(ctx, "Write", { file_path: "run.sh", content: "echo a\n" });
    expect(readFileSync(join(ctx.workingDir, "run.bat")).toString("latin1")).toBe(
      "\xef\xbb\xbfecho a\r\necho b\r\n",
    );
    expect(readFileSync(join(ctx.workingDir, "run.sh"), "utf8")).toBe("echo a\n");
  });

  it("writes through a symlink to its target and keeps the file mode", async () => {
    const ctx = fileContext();
    const target = join(ctx.workingDir, "real.sh");
    writeFileSync(target, "old\n");
    chmodSync(target, 0o751);
    symlinkSync(target, join(ctx.workingDir, "link.sh"));
    await call(ctx, "Read", { file_path: "link.sh" });
    expect((await call(ctx, "Write", { file_path: "link.sh", content: "new\n" })).isError).toBe(false);
    expect(readFileSync(target, "utf8")).toBe("new\n");
    expect(lstatSync(join(ctx.workingDir, "link.sh")).isSymbolicLink()).toBe(true);
    expect(statSync(target).mode & 0o777).toBe(0o751);
  });

  it("says when other hard links to the file keep the old content", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "shared.txt");
    writeFileSync(path, "old\n");
    linkSync(path, join(ctx.workingDir, "twin.txt"));
    await call(ctx, "Read", { file_path: path });
    const result = await call(ctx, "Write", { file_path: path, content: "new\n" });
    expect(result.text).toBe(
      `Updated ${path} (1 line). The file had another hard link, which still holds the old content: ` +
        "the write replaced this name only, so that it could be atomic.",
    );
    expect(readFileSync(join(ctx.workingDir, "twin.txt"), "utf8")).toBe("old\n");
  });
});

describe("Write: odd paths and line breaks", () => {
  it("names the file in the way when a parent of the path is a file", async () => {
    const ctx = fileContext();
    writeFileSync(join(ctx.workingDir, "afile"), "x");
    for (const name of ["afile/child.txt", "afile/sub/child.txt"]) {
      const result = await call(ctx, "Write", { file_path: join(ctx.workingDir, name), content: "y" });
      expect(result.isError).toBe(true);
      expect(result.text).toContain(`${join(ctx.workingDir, "afile")} is a file, not a directory`);
      expect(result.text).not.toContain("ENOTDIR");
    }
    expect(readFileSync(join(ctx.workingDir, "afile"), "utf8")).toBe("x");
  });

  it("counts the lines of classic Mac (lone CR) content as Read will number them", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "mac.txt");
    const result = await call(ctx, "Write", { file_path: path, content: "a\rb\rc" });
    expect(result.text).toContain("(3 lines)");
    expect(readFileSync(path, "latin1")).toBe("a\rb\rc");
    const read = await call(ctx, "Read", { file_path: path });
    expect(read.text).toBe("1\ta\n2\tb\n3\tc");
  });
});
