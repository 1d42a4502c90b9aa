import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { builtinBackend } from "../../src/search/builtin-backend.js";
import type { FileQuery } from "../../src/search/query.js";
import { ripgrepBackend } from "../../src/search/rg-backend.js";
import { findRipgrep } from "../../src/search/ripgrep.js";
import { tempDir } from "../helpers/context.js";

/**
 * Glob's newest-first listing splits the root's directories over several rg processes. Whatever the split,
 * it must list exactly what one walk of the whole root lists (the built-in search mirrors rg's rules), in
 * the same order.
 */
function tree(): string {
  const root = tempDir();
  const files = [
    "top.ts",
    "top.md",
    "-dash.ts",
    "a/one.ts",
    "a/deep/two.ts",
    "b/three.ts",
    "b/skip/four.ts",
    "c d/five.ts",
    ".github/six.ts",
    ".git/HEAD.ts",
    "build/out.ts",
    "z/seven.tsx",
  ];
  let time = 1_700_000_000;
  for (const file of files) {
    const path = join(root, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file);
    utimesSync(path, time, time);
    time += file.startsWith("b/") ? 0 : 60; // b's two files tie
  }
  mkdirSync(join(root, "outside"));
  writeFileSync(join(root, "outside", "linked.ts"), "x");
  symlinkSync(join(root, "outside"), join(root, "link"));
  symlinkSync(join(root, "top.ts"), join(root, "link.ts"));
  spawnSync("git", ["init", "-q"], { cwd: root });
  writeFileSync(join(root, ".gitignore"), "build/\n");
  return root;
}

const query = (root: string, globs: string[]): FileQuery => ({
  cwd: root,
  root,
  rootIsFile: false,
  globs,
  respectIgnore: false,
  signal: new AbortController().signal,
});

describe("newest-first listing", () => {
  it.each([
    [["**/*.ts"]],
    [["*.ts"]],
    [["a/**"]],
    [["**/*.ts", "!b/"]],
    [["!b"]],
    [["**/*.{ts,tsx}"]],
    [["c d/*"]],
  ])("split over processes, lists what one walk lists: %j", async (globs) => {
    const binary = await findRipgrep();
    if (!binary) return;
    const root = tree();
    const rg = await ripgrepBackend(binary).newestFiles(query(root, globs), 250);
    const walk = await builtinBackend.newestFiles(query(root, globs), 250);
    expect(rg).toEqual(walk);
    expect(rg.newest.some((p) => p.startsWith(".git/") || p.startsWith("link"))).toBe(false);
  });

  it("keeps the newest across processes and counts them all", async () => {
    const binary = await findRipgrep();
    if (!binary) return;
    const root = tree();
    const { newest, total } = await ripgrepBackend(binary).newestFiles(query(root, ["**/*.ts"]), 3);
    expect(newest).toEqual(["outside/linked.ts", "build/out.ts", ".github/six.ts"]);
    expect(total).toBe(10);
  });
});

describe("newest-first listing with odd names", () => {
  it("still lists a root where a directory name is not valid UTF-8", async () => {
    const binary = await findRipgrep();
    if (!binary) return;
    const root = tempDir();
    const bad = Buffer.concat([Buffer.from(`${root}/bad`), Buffer.from([0xff])]);
    mkdirSync(bad);
    writeFileSync(Buffer.concat([bad, Buffer.from("/c.txt")]), "x");
    mkdirSync(join(root, "ok1"));
    writeFileSync(join(root, "ok1", "a.txt"), "x");
    mkdirSync(join(root, "ok2"));
    writeFileSync(join(root, "ok2", "b.txt"), "x");
    // rg's output is read as UTF-8, so the undecodable path cannot be statted and drops out; the rest must
    // still be listed rather than the whole listing failing.
    const { newest } = await ripgrepBackend(binary).newestFiles(query(root, ["*.txt"]), 250);
    expect(newest).toEqual(expect.arrayContaining(["ok1/a.txt", "ok2/b.txt"]));
  });
});
