/** A real git work tree with everything that trips searches up: ignores, hidden dirs, binaries, odd names. */
import { execFileSync } from "node:child_process";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { RIPGREP_ENV } from "../../src/search/ripgrep.js";

export const FILES: Record<string, string | Buffer> = {
  ".gitignore": "build/\n*.log\n",
  "src/app.ts":
    "import x from './util';\n// needle one\nconst a = 1;\nconst b = 2;\nconst c = 3;\n// needle two\n",
  "src/util.ts": "export function helper(\n  first,\n  second,\n) {}\n// Needle upper\n",
  "src/deep/inner.js": "let needle = 'js';\n",
  "dir with space/file: colon.txt": "a needle in an odd place\n",
  ".hidden/secret.txt": "hidden needle\n",
  "build/out.js": "needle in build output; onlyignored\n",
  "notes.log": "needle in a log\n",
  "data.bin": Buffer.concat([Buffer.from("onlybinary needle\n"), Buffer.from([0, 1, 2, 0])]),
  "long.txt": `short needle line\n${"x".repeat(600)} needle\n`,
  ".git/needle-inside-git": "needle\n",
};

/** Modification times, oldest first, so "newest first" is testable. */
const ORDER = [
  "long.txt",
  ".hidden/secret.txt",
  "src/util.ts",
  "src/deep/inner.js",
  "dir with space/file: colon.txt",
  "src/app.ts",
];

export function writeTree(root: string): void {
  execFileSync("git", ["init", "-q", root]);
  for (const [path, content] of Object.entries(FILES)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  const base = Date.now() / 1000 - 10_000;
  ORDER.forEach((path, i) => {
    utimesSync(join(root, path), base + i * 100, base + i * 100);
  });
}

export const MODES = [
  { mode: "ripgrep", env: undefined },
  { mode: "builtin", env: "off" },
] as const;

/** Runs a describe block's tests with the search backend forced one way. */
export function useSearchMode(env: string | undefined): void {
  let saved: string | undefined;
  beforeAll(() => {
    saved = process.env[RIPGREP_ENV];
    if (env === undefined) delete process.env[RIPGREP_ENV];
    else process.env[RIPGREP_ENV] = env;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env[RIPGREP_ENV];
    else process.env[RIPGREP_ENV] = saved;
  });
}
