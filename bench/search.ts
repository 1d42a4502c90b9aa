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
import { emptySettings } from "../src/settings/types.js";
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
  await denyRuleRows(root, report);
  await session.dispose();
};

/** Read deny rules of the kinds people write: files by name anywhere, directories, extensions, anchored paths. */
const TEN_READ_DENY_RULES = [
  "Read(.env)",
  "Read(.env.*)",
  "Read(**/secrets/**)",
  "Read(*.pem)",
  "Read(*.key)",
  "Read(./build/**)",
  "Read(./pkg3/mod 4/file7.ts)",
  "Read(~/.ssh/**)",
  "Read(//etc/shadow)",
  "Read(**/credentials.json)",
];

/**
 * Grep and Glob with ten Read deny rules against the same search with none, both through the pipeline:
 * the rules' filter must cost little next to the search itself (issue 8: within 1.2x).
 */
async function denyRuleRows(root: string, report: Parameters<Bench>[0]): Promise<void> {
  const session = new Session();
  const plain = createToolContext({ workingDir: root, session, permissionMode: "bypassPermissions" });
  const config = emptySettings(root);
  for (const rule of TEN_READ_DENY_RULES) {
    config.rules.push({ rule, behavior: "deny", source: { scope: "project", root } });
  }
  const ruled = createToolContext({ workingDir: root, session, config, permissionMode: "bypassPermissions" });
  const cases = [
    { name: "Grep files_with_matches, 10 Read deny rules", tool: "Grep", input: { pattern: NEEDLE } },
    { name: "Glob **/*.ts, 10 Read deny rules", tool: "Glob", input: { pattern: "**/*.ts" } },
  ];
  for (const c of cases) {
    const check = await runTool(c.tool, c.input, ruled);
    if (check.isError) throw new Error(`${c.name} failed: ${ToolResult.text(check)}`);
    const { oursMs, baselineMs } = await timePair(
      () => runTool(c.tool, c.input, ruled),
      () => runTool(c.tool, c.input, plain),
    );
    report({ name: c.name, baseline: "the same call with no rules", oursMs, baselineMs, targetRatio: 1.2 });
  }
  await session.dispose();
}

export default bench;
