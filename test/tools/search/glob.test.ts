import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
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

async function glob(ctx: ReturnType<typeof setup>, input: Record<string, unknown>) {
  const result = await runTool("Glob", input, ctx);
  return { result, text: ToolResult.text(result) };
}

describe.each(MODES)("Glob ($mode)", ({ mode, env }) => {
  useSearchMode(env);

  it("lists hidden and ignored files newest first, never .git, and says how many are ignored", async () => {
    const ctx = setup();
    const { result, text } = await glob(ctx, { pattern: "**/*.{ts,js,txt}" });
    expect(result.metadata?.backend).toBe(mode);
    expect(text.split("\n\n")[0]!.split("\n")).toEqual([
      "build/out.js",
      "src/app.ts",
      "dir with space/file: colon.txt",
      "src/deep/inner.js",
      "src/util.ts",
      ".hidden/secret.txt",
      "long.txt",
    ]);
    expect(text).toContain("(1 of the 7 files shown is ignored by .gitignore or similar.)");
    const all = await glob(ctx, { pattern: "**/*" });
    expect(all.text).not.toContain(".git/");
    expect(all.text).toContain("notes.log");
    expect(all.text).toContain("(2 of the 10 files shown are ignored");
  });

  it("matches a name at any depth, or a path from the search root", async () => {
    const ctx = setup();
    expect((await glob(ctx, { pattern: "*.js" })).text).toMatch(
      /^src\/deep\/inner\.js\nbuild\/out\.js|^build\/out\.js\nsrc\/deep\/inner\.js/,
    );
    expect((await glob(ctx, { pattern: "deep/*.js", path: "src" })).text).toBe("src/deep/inner.js");
    expect((await glob(ctx, { pattern: "src/*.ts" })).text).toBe("src/app.ts\nsrc/util.ts");
    expect((await glob(ctx, { pattern: `${ctx.workingDir}/src/**/*.js` })).text).toBe("src/deep/inner.js");
    expect((await glob(ctx, { pattern: "*.nothing" })).text).toBe("No files found");
  });

  it("shows at most 250 paths, newest first, and says how many matched", async () => {
    const ctx = setup();
    const dir = join(ctx.workingDir, "many");
    mkdirSync(dir);
    const base = Date.now() / 1000 - 5_000;
    for (let i = 0; i < 300; i++) {
      writeFileSync(join(dir, `f${i}.md`), "");
      utimesSync(join(dir, `f${i}.md`), base + i, base + i);
    }
    const { text } = await glob(ctx, { pattern: "*.md", path: "many" });
    const [list, note] = text.split("\n\n");
    expect(list!.split("\n")).toHaveLength(250);
    expect(list!.split("\n")[0]).toBe("many/f299.md");
    expect(note).toContain("250 most recently modified of 300");
  });

  it("names the working directory for a missing path and shows absolute paths outside it", async () => {
    const ctx = setup();
    const missing = await glob(ctx, { pattern: "*", path: "gone" });
    expect(missing.result.isError).toBe(true);
    expect(missing.text).toContain(`the working directory is ${ctx.workingDir}`);
    const outside = tempDir();
    writeFileSync(join(outside, "x.txt"), "");
    expect((await glob(ctx, { pattern: "*.txt", path: outside })).text).toBe(join(outside, "x.txt"));
  });
});

describe.each(MODES)("Glob patterns and order ($mode)", ({ env }) => {
  useSearchMode(env);

  it("takes patterns that start with ./ or ../ or are absolute, relative to where they point", async () => {
    const ctx = setup();
    mkdirSync(join(ctx.workingDir, "src", "x"));
    writeFileSync(join(ctx.workingDir, "src", "x", "app.ts"), "");
    expect((await glob(ctx, { pattern: "./src/*.ts" })).text).toBe("src/app.ts\nsrc/util.ts");
    expect((await glob(ctx, { pattern: "../*.ts", path: "src/deep" })).text).toBe("src/app.ts\nsrc/util.ts");
    const name = ctx.workingDir.split("/").pop();
    expect((await glob(ctx, { pattern: `../${name}/src/x/*` })).text).toBe("src/x/app.ts");
    // A pattern without wildcards names one file, not every file of that name below.
    expect((await glob(ctx, { pattern: `${ctx.workingDir}/src/app.ts` })).text).toBe("src/app.ts");
    expect((await glob(ctx, { pattern: "./src/app.ts" })).text).toBe("src/app.ts");
    expect((await glob(ctx, { pattern: "./**/inner.js" })).text).toBe("src/deep/inner.js");
  });

  it("orders files with the same modification time by path, also across the 250 cut", async () => {
    const ctx = setup();
    const dir = join(ctx.workingDir, "same");
    mkdirSync(dir);
    const when = Date.now() / 1000 - 1_000;
    const names = Array.from({ length: 300 }, (_, i) => `f${String(i).padStart(3, "0")}.md`);
    // Written in reverse so directory order is not path order.
    for (const name of [...names].reverse()) {
      writeFileSync(join(dir, name), "");
      utimesSync(join(dir, name), when, when);
    }
    writeFileSync(join(dir, "newest.md"), "");
    const { text } = await glob(ctx, { pattern: "*.md", path: "same" });
    const [list, note] = text.split("\n\n");
    expect(list!.split("\n")).toEqual(["same/newest.md", ...names.slice(0, 249).map((n) => `same/${n}`)]);
    expect(note).toContain("250 most recently modified of 301");
  });

  it("counts files ignored by a custom core.excludesFile among the shown ones", async () => {
    const ctx = setup();
    const home = tempDir();
    writeFileSync(join(home, ".gitconfig"), '[core]\n\texcludesFile = "~/global-ignore"\n');
    writeFileSync(join(home, "global-ignore"), "*.secret\n");
    writeFileSync(join(ctx.workingDir, "key.secret"), "needle\n");
    const saved = process.env.HOME;
    process.env.HOME = home;
    try {
      const { text } = await glob(ctx, { pattern: "*.secret" });
      expect(text).toBe("key.secret\n\n(1 of the 1 files shown is ignored by .gitignore or similar.)");
      const grep = ToolResult.text(await runTool("Grep", { pattern: "needle" }, ctx));
      expect(grep).not.toContain("key.secret");
    } finally {
      process.env.HOME = saved;
    }
  });
});
