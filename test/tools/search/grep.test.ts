import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../../src/core/result.js";
import { runTool } from "../../../src/executor/run.js";
import { tempDir, testContext } from "../../helpers/context.js";
import { MODES, useSearchMode, writeTree } from "../../search/fixture.js";

function setup() {
  const root = tempDir();
  writeTree(root);
  return testContext({ workingDir: root });
}

async function grep(ctx: ReturnType<typeof setup>, input: Record<string, unknown>) {
  const result = await runTool("Grep", input, ctx);
  return { result, text: ToolResult.text(result) };
}

describe.each(MODES)("Grep ($mode)", ({ mode, env }) => {
  useSearchMode(env);

  it("lists matching files newest first, with hidden files and odd paths, without ignored, binary or .git", async () => {
    const ctx = setup();
    const { result, text } = await grep(ctx, { pattern: "needle" });
    expect(result.isError).toBe(false);
    expect(result.metadata?.backend).toBe(mode);
    expect(text.split("\n")).toEqual([
      "Found 5 files",
      "src/app.ts",
      "dir with space/file: colon.txt",
      "src/deep/inner.js",
      ".hidden/secret.txt",
      "long.txt",
    ]);
  });

  it("shows content as path:line:text with context lines as path-line-text", async () => {
    const ctx = setup();
    const { text } = await grep(ctx, { pattern: "needle", path: "src", output_mode: "content", "-C": 1 });
    expect(text).toBe(
      [
        "src/app.ts-1-import x from './util';",
        "src/app.ts:2:// needle one",
        "src/app.ts-3-const a = 1;",
        "--",
        "src/app.ts-5-const c = 3;",
        "src/app.ts:6:// needle two",
        "--",
        "src/deep/inner.js:1:let needle = 'js';",
      ].join("\n"),
    );
  });

  it("parses paths with colons and spaces in content mode, and omits the path for a single file", async () => {
    const ctx = setup();
    const many = await grep(ctx, { pattern: "odd", output_mode: "content" });
    expect(many.text).toBe("dir with space/file: colon.txt:1:a needle in an odd place");
    const one = await grep(ctx, { pattern: "needle", path: "src/app.ts", output_mode: "content" });
    expect(one.text).toBe("2:// needle one\n6:// needle two");
    const bare = await grep(ctx, {
      pattern: "needle",
      path: "src/app.ts",
      output_mode: "content",
      "-n": false,
    });
    expect(bare.text).toBe("// needle one\n// needle two");
  });

  it("shows the lines of a CRLF file without their carriage returns, as Read does", async () => {
    const ctx = setup();
    writeFileSync(join(ctx.workingDir, "dos.txt"), "before\r\nneedle crlf\r\nafter\r\n");
    const { text } = await grep(ctx, { pattern: "crlf", path: "dos.txt", output_mode: "content", "-C": 1 });
    expect(text).toBe("1-before\n2:needle crlf\n3-after");
  });

  it("counts matching lines per file with a total", async () => {
    const ctx = setup();
    const { text } = await grep(ctx, { pattern: "needle", path: "src", output_mode: "count" });
    expect(text).toBe("src/app.ts:2\nsrc/deep/inner.js:1\n\nFound 3 matching lines across 2 files.");
  });

  it("ignores case, filters by glob and type, matches across lines and prints only matches", async () => {
    const ctx = setup();
    expect((await grep(ctx, { pattern: "NEEDLE", "-i": true, path: "src" })).text).toContain("src/util.ts");
    expect((await grep(ctx, { pattern: "NEEDLE", path: "src" })).text).toBe("No files found");
    const globbed = await grep(ctx, { pattern: "needle", glob: "*.{js,txt}", path: "src" });
    expect(globbed.text).toBe("Found 1 file\nsrc/deep/inner.js");
    const typed = await grep(ctx, { pattern: "[Nn]eedle", type: "ts" });
    expect(typed.text.split("\n").slice(1).sort()).toEqual(["src/app.ts", "src/util.ts"]);
    const multi = await grep(ctx, { pattern: "helper\\(.*second", multiline: true, output_mode: "content" });
    expect(multi.text).toBe(
      "src/util.ts:1:export function helper(\nsrc/util.ts:2:  first,\nsrc/util.ts:3:  second,",
    );
    const only = await grep(ctx, {
      pattern: "needle \\w+",
      path: "src/app.ts",
      output_mode: "content",
      "-o": true,
    });
    expect(only.text).toBe("2:needle one\n6:needle two");
  });

  it("replaces lines over 500 characters with a marker", async () => {
    const ctx = setup();
    const { text } = await grep(ctx, { pattern: "needle", path: "long.txt", output_mode: "content" });
    expect(text).toBe("1:short needle line\n2:[Omitted long matching line]");
  });

  it("pages with head_limit and offset and says how to get the next page", async () => {
    const ctx = setup();
    const first = await grep(ctx, { pattern: "needle", head_limit: 2 });
    expect(first.text.split("\n").slice(0, 3)).toEqual([
      "Found 5 files",
      "src/app.ts",
      "dir with space/file: colon.txt",
    ]);
    expect(first.text).toMatch(/files 1–2 of 5\. Pass offset: 2/);
    const second = await grep(ctx, { pattern: "needle", head_limit: 2, offset: 2 });
    expect(second.text.split("\n")[1]).toBe("src/deep/inner.js");
    const lines = await grep(ctx, { pattern: "const", output_mode: "content", head_limit: 1, offset: 1 });
    expect(lines.text).toMatch(/^src\/app\.ts:4:const b = 2;\n\n\(Showing lines 2–2 of 3\. Pass offset: 2/);
    const all = await grep(ctx, { pattern: "needle", head_limit: 0 });
    expect(all.text).not.toContain("offset");
  });

  it("says which files were skipped when nothing matched, and how to include them", async () => {
    const ctx = setup();
    const ignored = await grep(ctx, { pattern: "onlyignored" });
    expect(ignored.text).toMatch(/^No files found/);
    expect(ignored.text).toContain("1 ignored file matches");
    expect(ignored.text).toContain("build/out.js");
    const searched = await grep(ctx, { pattern: "onlyignored", path: "build" });
    expect(searched.text).toBe("Found 1 file\nbuild/out.js");
    const binary = await grep(ctx, { pattern: "onlybinary", output_mode: "content" });
    expect(binary.text).toMatch(/^No matches found/);
    expect(binary.text).toContain("1 binary file matches: data.bin");
  });

  it("rejects an invalid regex with the engine's reason", async () => {
    const ctx = setup();
    const { result, text } = await grep(ctx, { pattern: "foo(" });
    expect(result.isError).toBe(true);
    expect(text).toMatch(/<tool_use_error>The pattern is not a valid regular expression/);
    expect(text).toMatch(/unclosed group|Unterminated group/);
  });

  it("names the working directory when the path does not exist; shows absolute paths outside it", async () => {
    const ctx = setup();
    const missing = await grep(ctx, { pattern: "x", path: "nowhere" });
    expect(missing.result.isError).toBe(true);
    expect(missing.text).toContain(ctx.workingDir);
    const outside = tempDir();
    writeFileSync(join(outside, "o.txt"), "needle\n");
    const far = await grep(ctx, { pattern: "needle", path: outside });
    expect(far.text).toBe(`Found 1 file\n${join(outside, "o.txt")}`);
  });

  it("reports progress on a search with many files", async () => {
    const ctx = setup();
    mkdirSync(join(ctx.workingDir, "many"));
    for (let i = 0; i < 1_100; i++) writeFileSync(join(ctx.workingDir, "many", `f${i}.txt`), "needle\n");
    const progress: number[] = [];
    const result = await runTool("Grep", { pattern: "needle", path: "many" }, ctx, {
      onProgress: (p) => progress.push(p.progress),
    });
    expect(ToolResult.text(result)).toMatch(/^Found 1100 files/);
    expect(progress.length).toBeGreaterThan(0);
  });
});

describe.each(MODES)("Grep on awkward files ($mode)", ({ env }) => {
  useSearchMode(env);

  it("keeps a path that holds a newline whole in content and count modes", async () => {
    const ctx = setup();
    writeFileSync(join(ctx.workingDir, "new\nline.txt"), "needle nl\n");
    const content = await grep(ctx, { pattern: "needle nl", output_mode: "content" });
    expect(content.text).toBe("new\nline.txt:1:needle nl");
    const count = await grep(ctx, { pattern: "needle nl", output_mode: "count" });
    expect(count.text).toBe("new\nline.txt:1\n\nFound 1 matching line across 1 file.");
  });

  it("searches a binary file named as path, and says its lines are not shown", async () => {
    const ctx = setup();
    writeFileSync(join(ctx.workingDir, "mixed.bin"), Buffer.from("first needle\nsecond\0bin needle\n"));
    const files = await grep(ctx, { pattern: "needle", path: "mixed.bin" });
    expect(files.text).toBe("Found 1 file\nmixed.bin");
    const content = await grep(ctx, { pattern: "needle", path: "mixed.bin", output_mode: "content" });
    expect(content.text).toMatch(/^\(Binary file mixed\.bin matches; .*rg --text/);
    expect(content.text).not.toContain("ignored");
    const count = await grep(ctx, { pattern: "needle", path: "mixed.bin", output_mode: "count" });
    expect(count.text).toBe("mixed.bin:2\n\nFound 2 matching lines across 1 file.");
  });

  it("keeps the records after a file that turns out binary part way intact", async () => {
    const ctx = setup();
    const dir = join(ctx.workingDir, "late");
    mkdirSync(dir);
    writeFileSync(
      join(dir, "a.txt"),
      Buffer.concat([
        Buffer.from("needle early\n"),
        Buffer.alloc(100_000, 120),
        Buffer.from("\n\0needle late\n"),
      ]),
    );
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, `b${i}.txt`), "needle ok\n");
    const { text } = await grep(ctx, { pattern: "needle", path: "late", output_mode: "content" });
    const lines = text.split("\n");
    for (let i = 0; i < 5; i++) expect(lines).toContain(`late/b${i}.txt:1:needle ok`);
    expect(lines.every((l) => /^late\/[ab]\d?\.txt:1:needle (ok|early)$/.test(l))).toBe(true);
  });

  it("says a missing path may name a file or a directory", async () => {
    const ctx = setup();
    const { text } = await grep(ctx, { pattern: "x", path: "nowhere.ts" });
    expect(text).toContain("Give Grep an existing file or directory");
  });

  it("stops when cancelled part way and says so", async () => {
    const ctx = setup();
    mkdirSync(join(ctx.workingDir, "many"));
    for (let i = 0; i < 3_000; i++) writeFileSync(join(ctx.workingDir, "many", `f${i}.txt`), "needle\n");
    for (const output_mode of ["files_with_matches", "content"]) {
      const controller = new AbortController();
      const result = await runTool("Grep", { pattern: "needle", path: "many", output_mode }, ctx, {
        signal: controller.signal,
        onProgress: () => controller.abort(),
      });
      expect(result.isError).toBe(true);
      expect(ToolResult.text(result)).toMatch(/cancel/i);
    }
  });
});
