/**
 * Glob and Grep through the whole pipeline (runTool, in process) against ripgrep spawned directly with the
 * equivalent flags, on a generated tree of 11,000+ files: a git repo with a .gitignore'd build dir, a
 * hidden dir and binary files. The tree is built once under os.tmpdir() and reused (a marker file says
 * it is complete).
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createToolContext } from "../src/context.js";
import { ToolResult } from "../src/core/result.js";
import { Session } from "../src/core/session.js";
import { runTool } from "../src/executor/run.js";
import { findRipgrep } from "../src/search/ripgrep.js";
import { type Bench, timePair } from "./lib.js";

const TREE_VERSION = 1;
const TOP_DIRS = 20;
const SUB_DIRS = 10;
const FILES_PER_DIR = 50;
const IGNORED_FILES = 500;
const HIDDEN_FILES = 200;

/** The word the bench greps for: present in one file in seven, twice in each. */
const NEEDLE = "needle_marker";

function fileText(i: number): string {
  const lines: string[] = [];
  for (let l = 0; l < 40; l++) {
    lines.push(`const value_${i}_${l} = compute(${l}, "some text for line ${l} of file ${i}");`);
    if (i % 7 === 0 && (l === 10 || l === 30)) lines.push(`// ${NEEDLE} appears here in file ${i}`);
  }
  return `${lines.join("\n")}\n`;
}

/** Returns the root of the bench tree, generating it if it is not there yet. */
function benchTree(): string {
  const root = join(tmpdir(), `cc-tools-bench-search-v${TREE_VERSION}`);
  const done = join(root, ".bench-complete");
  if (existsSync(done)) return root;
  mkdirSync(root, { recursive: true });
  execFileSync("git", ["init", "-q", root]);
  writeFileSync(join(root, ".gitignore"), "build/\n*.log\n");
  let n = 0;
  for (let t = 0; t < TOP_DIRS; t++) {
    for (let s = 0; s < SUB_DIRS; s++) {
      const dir = join(root, `pkg${t}`, `mod ${s}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < FILES_PER_DIR; f++, n++) {
        writeFileSync(join(dir, `file${f}.${f % 3 === 0 ? "py" : "ts"}`), fileText(n));
      }
      writeFileSync(join(dir, "blob.bin"), Buffer.from([0, 1, 2, 3, ...Buffer.from(NEEDLE)]));
    }
  }
  mkdirSync(join(root, "build"), { recursive: true });
  for (let f = 0; f < IGNORED_FILES; f++, n++) writeFileSync(join(root, "build", `out${f}.js`), fileText(n));
  mkdirSync(join(root, ".cache"), { recursive: true });
  for (let f = 0; f < HIDDEN_FILES; f++, n++) writeFileSync(join(root, ".cache", `c${f}.txt`), fileText(n));
  writeFileSync(done, "");
  return root;
}

/** Runs rg as a user would from a shell, collecting its output as our search does. */
function rawRg(binary: string, args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd, stdio: ["ignore", "pipe", "ignore"] });
    let bytes = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    child.on("error", reject);
    child.on("close", () => resolve(bytes));
  });
}

const bench: Bench = async (report) => {
  const binary = await findRipgrep();
  if (!binary) throw new Error("bench/search.ts needs ripgrep (the @vscode/ripgrep package or rg on PATH)");
  const root = benchTree();
  const session = new Session();
  const ctx = createToolContext({ workingDir: root, session, permissionMode: "bypassPermissions" });
  const vcs = ["--glob", "!.git"];
  const cases = [
    {
      name: "Grep files_with_matches",
      input: { pattern: NEEDLE },
      baseline: ["--hidden", "--null", "--files-with-matches", ...vcs, NEEDLE],
      targetRatio: 1.2,
    },
    {
      name: "Grep content",
      input: { pattern: NEEDLE, output_mode: "content" },
      baseline: ["--hidden", "--null", "--line-number", "--max-columns", "500", ...vcs, NEEDLE],
      targetRatio: 1.2,
    },
    {
      name: "Glob **/*.ts",
      input: { pattern: "**/*.ts" },
      baseline: ["--files", "--hidden", "--no-ignore", "--null", "--glob", "**/*.ts", ...vcs],
      targetRatio: 1.5,
    },
  ];
  for (const c of cases) {
    const tool = c.name.split(" ")[0]!;
    const check = await runTool(tool, c.input, ctx);
    if (check.isError) throw new Error(`${c.name} failed: ${ToolResult.text(check)}`);
    const { oursMs, baselineMs } = await timePair(
      () => runTool(tool, c.input, ctx),
      () => rawRg(binary, c.baseline, root),
    );
    report({
      name: c.name,
      baseline: `rg ${c.baseline.join(" ")}`,
      oursMs,
      baselineMs,
      targetRatio: c.targetRatio,
    });
  }
  await session.dispose();
};

export default bench;
