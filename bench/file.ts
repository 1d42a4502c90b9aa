/**
 * File tools against raw tools: Edit of one line in a 10 MB file (after a Read of it) against `sed -i`
 * making the same substitution, and Read of a 2000-line file in-process against spawning `cat`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createToolContext } from "../src/context.js";
import { Session } from "../src/core/session.js";
import { runTool } from "../src/executor/run.js";
import { type Bench, flushedAfter, timePair } from "./lib.js";

/** Size of the file the Edit benchmark changes. */
const EDIT_FILE_BYTES = 10 * 1024 * 1024;
const READ_FILE_LINES = 2000;

function codeLines(count: number): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(`  const value_${i} = compute(${i}, "some text on line ${i}");`);
  return `${lines.join("\n")}\n`;
}

const bench: Bench = async (report) => {
  const dir = mkdtempSync(join(tmpdir(), "cc-tools-bench-file-"));
  const session = new Session({ dir: join(dir, "session") });
  const ctx = createToolContext({ workingDir: dir, permissionMode: "bypassPermissions", session });
  try {
    const big = join(dir, "big.ts");
    const lineCount = Math.ceil(EDIT_FILE_BYTES / codeLines(1).length);
    writeFileSync(big, codeLines(lineCount));
    const mid = Math.floor(lineCount / 2);
    const read = await runTool("Read", { file_path: big }, ctx);
    if (read.isError) throw new Error("bench: the Read of the 10 MB file failed");

    // Each run flips the line back and forth, so every run is a real change.
    let flip = false;
    const edit = async () => {
      const [from, to] = flip
        ? [`value_${mid}_x =`, `value_${mid} =`]
        : [`value_${mid} =`, `value_${mid}_x =`];
      flip = !flip;
      const result = await runTool("Edit", { file_path: big, old_string: from, new_string: to }, ctx);
      if (result.isError) throw new Error(`bench: Edit failed: ${JSON.stringify(result.content)}`);
    };
    const sedFile = join(dir, "sed.ts");
    writeFileSync(sedFile, codeLines(lineCount));
    let sedFlip = false;
    const sed = () => {
      const expr = sedFlip ? `s/value_${mid}_x =/value_${mid} =/` : `s/value_${mid} =/value_${mid}_x =/`;
      sedFlip = !sedFlip;
      execFileSync("sed", ["-i", expr, sedFile]);
    };
    // Each file flushed after its change, untimed: sed's unwritten pages would otherwise be written by the
    // Edit's sync that follows (see flushedAfter).
    const editTimes = await timePair(flushedAfter(edit, big), flushedAfter(sed, sedFile));
    report({
      name: "Edit one line of a 10 MB file",
      baseline: "sed -i",
      ...editTimes,
      targetRatio: 2,
      targetMs: 100,
    });

    const small = join(dir, "small.ts");
    writeFileSync(small, codeLines(READ_FILE_LINES));
    const readTimes = await timePair(
      async () => {
        const result = await runTool("Read", { file_path: small }, ctx);
        if (result.isError) throw new Error("bench: Read failed");
      },
      () => execFileSync("cat", [small], { maxBuffer: 64 * 1024 * 1024 }),
    );
    report({ name: "Read a 2000-line file (in-process)", baseline: "spawn cat", ...readTimes });
  } finally {
    await session.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
