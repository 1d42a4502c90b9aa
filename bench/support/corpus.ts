/**
 * The bench corpus: a fixed, deterministic tree of real source files copied from the packages in
 * node_modules (or the user's own tree with `--tree DIR`), at three sizes for the scale rows, plus a
 * 2000-line file and a 10 MiB file. Trees are built once under os.tmpdir() and reused; a marker file that
 * names the version says a tree is complete.
 */
import {
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const CORPUS_VERSION = 1;
const SOURCE_EXTENSIONS = /\.(?:[cm]?js|[cm]?ts|jsx|tsx|json|md)$/;
/** Larger files are generated bundles, not source a user would search. */
const MAX_SOURCE_BYTES = 256 * 1024;
/** The base corpus: real files, each copied once. */
export const BASE_FILES = 10_000;
/** The scale rows' trees. The largest repeats the base corpus in sibling folders (hard links). */
export const SCALE_SIZES = [1_000, 10_000, 50_000] as const;
export const QUICK_SCALE_SIZES = [1_000, 10_000] as const;

/** What the Grep rows search for: a word real code has in a few percent of its files. */
export const NEEDLE = "TODO";
/** What the Glob rows match. */
export const GLOB = "**/*.ts";

export const READ_LINES = 2_000;
export const BIG_FILE_BYTES = 10 * 1024 * 1024;

const NODE_MODULES = fileURLToPath(new URL("../../node_modules/", import.meta.url));
const ROOT = join(tmpdir(), `cc-tools-bench-corpus-v${CORPUS_VERSION}`);

export interface TreeInfo {
  dir: string;
  files: number;
  bytes: number;
}

/** Every source file under `dir`, sorted, without following symbolic links. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    const entries = readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.isFile() && SOURCE_EXTENSIONS.test(e.name) && statSync(path).size <= MAX_SOURCE_BYTES)
        out.push(path);
    }
  };
  walk(dir);
  return out;
}

function measure(dir: string): TreeInfo {
  let files = 0;
  let bytes = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.isFile()) {
        files++;
        bytes += lstatSync(path).size;
      }
    }
  };
  walk(dir);
  return { dir, files, bytes };
}

/** Builds `dir` with `build` unless a marker says it is already complete. */
function once(dir: string, build: (dir: string) => void): string {
  const marker = join(dir, ".bench-complete");
  if (existsSync(marker)) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  build(dir);
  writeFileSync(marker, "");
  return dir;
}

/** The base corpus: BASE_FILES real files, evenly spread over node_modules' sorted source files. */
function baseTree(): string {
  return once(join(ROOT, "base"), (dir) => {
    const all = sourceFiles(NODE_MODULES);
    if (all.length < BASE_FILES)
      throw new Error(
        `bench: node_modules holds ${all.length} source files, fewer than ${BASE_FILES}; pass --tree DIR`,
      );
    const step = all.length / BASE_FILES;
    for (let i = 0; i < BASE_FILES; i++) {
      const from = all[Math.floor(i * step)]!;
      const to = join(dir, relative(NODE_MODULES, from));
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(from, to);
    }
  });
}

/** A tree of `size` files: the first `size` base files, or whole copies of the base side by side. */
export function scaleTree(size: number): TreeInfo {
  const base = baseTree();
  const files = sourceFiles(base);
  const dir = once(join(ROOT, `tree-${size}`), (dir) => {
    for (let i = 0; i < size; i++) {
      const from = files[i % files.length]!;
      const copy = Math.floor(i / files.length);
      const to = join(dir, `copy${copy}`, relative(base, from));
      mkdirSync(dirname(to), { recursive: true });
      linkSync(from, to);
    }
  });
  const info = measure(dir);
  info.files -= 1; // the marker
  return info;
}

/** The corpus the peer rows run on: the 10k tree, or the user's own. */
export function corpus(tree: string | undefined): TreeInfo {
  if (!tree) return scaleTree(BASE_FILES);
  return measure(tree);
}

function codeLines(count: number): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(`  const value_${i} = compute(${i}, "some text on line ${i}");`);
  return `${lines.join("\n")}\n`;
}

/** A 2000-line file and a 10 MiB file in `dir` (fresh each run: the Edit rows change them). */
export function writeFixtures(dir: string): { lines2k: string; big: string; bigLines: number } {
  const lines2k = join(dir, "lines2k.ts");
  writeFileSync(lines2k, codeLines(READ_LINES));
  const big = join(dir, "big10m.ts");
  const bigLines = Math.ceil(BIG_FILE_BYTES / codeLines(1).length);
  writeFileSync(big, codeLines(bigLines));
  return { lines2k, big, bigLines };
}

export const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
