import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolWorker } from "./worker.js";

/**
 * F2 of issue 11: no update is lost across processes. Two worker processes, each with its own session (as
 * two MCP servers or two `cc-tools run --session` would have), edit one file at the same moment; and an
 * outside process writes a file in place while an Edit runs. Trials: RELIABILITY_TRIALS (default 25).
 */
const TRIALS = Number(process.env.RELIABILITY_TRIALS ?? 25);
const BASE = "line one\nline two\n";
/** The settled trials' file: large, and unchanged for SETTLE_MS before it is read. */
const SETTLED_FILE_BYTES = 1024 * 1024;
const SETTLE_MS = 40;

let dir: string;
let a: ToolWorker;
let b: ToolWorker;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "cc-tools-race-")));
  a = new ToolWorker(dir);
  b = new ToolWorker(dir);
  await Promise.all([a.ready, b.ready]);
}, 60_000);

afterAll(() => {
  a?.stop();
  b?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** What is left beside the files: temp files or lock directories would be leftovers. */
function leftovers(): string[] {
  return readdirSync(dir).filter((name) => name.includes("cc-tools"));
}

describe("cross-process races", () => {
  it("two processes editing one file: every successful Edit is in the file, the other is refused", async () => {
    const path = join(dir, "shared.txt");
    let lost = 0;
    let bothRefused = 0;
    const refusals = new Set<string>();
    for (let trial = 0; trial < TRIALS; trial++) {
      writeFileSync(path, BASE);
      await Promise.all([a.call("Read", { file_path: path }), b.call("Read", { file_path: path })]);
      const [ra, rb] = await Promise.all([
        a.call("Edit", { file_path: path, old_string: "line one", new_string: `line one A${trial}` }),
        b.call("Edit", { file_path: path, old_string: "line two", new_string: `line two B${trial}` }),
      ]);
      const final = readFileSync(path, "utf8");
      if (!ra.isError && !final.includes(`A${trial}`)) lost++;
      if (!rb.isError && !final.includes(`B${trial}`)) lost++;
      if (ra.isError && rb.isError) bothRefused++;
      for (const r of [ra, rb])
        if (r.isError) refusals.add(r.text.replace(/\n[\s\S]*/, "").replace(path, "F"));
    }
    console.log(
      `two-process race: ${TRIALS} trials, ${lost} successful Edits lost, ${bothRefused} with both refused`,
    );
    expect(lost).toBe(0);
    expect(bothRefused).toBe(0);
    expect([...refusals]).toEqual([
      "<tool_use_error>F has changed on disk since you read it, so nothing was written. This is what changed (- as you read it, + as it is now):",
    ]);
    expect(leftovers()).toEqual([]);
  }, 600_000);

  /**
   * Trials of an Edit while the test process writes the file in place (truncate and write, the same inode)
   * at a random moment: the foreign bytes must be in the file unless the Edit refused. `settled`: a file
   * of 1 MiB, left alone for a moment before it is read, and a foreign write that keeps its size, so that
   * only its bytes tell (its times would not, for a write still landing: see docs/PERFORMANCE.md, "Edit").
   */
  async function inPlaceTrials(name: string, settled: boolean) {
    const path = join(dir, name);
    let lost = 0;
    let editsWon = 0;
    let restored = 0;
    const base = settled ? `${BASE}${"x".repeat(SETTLED_FILE_BYTES)}\n` : BASE;
    for (let trial = 0; trial < TRIALS; trial++) {
      writeFileSync(path, base);
      if (settled) await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      await a.call("Read", { file_path: path, limit: 2 });
      const foreign = settled ? `${`foreign ${trial}`.padEnd(base.length - 1, ".")}\n` : `foreign ${trial}\n`;
      const delay = Math.random() * 30;
      const [edit] = await Promise.all([
        a.call("Edit", { file_path: path, old_string: "line one", new_string: `edited ${trial}` }),
        new Promise<void>((resolve) =>
          setTimeout(() => {
            writeFileSync(path, foreign); // in place: truncate and write the same inode
            resolve();
          }, delay),
        ),
      ]);
      const final = readFileSync(path, "utf8");
      // The foreign write happened in every trial, so it must be in the file unless the Edit replaced it.
      if (final !== foreign) {
        if (!edit.isError) lost++;
        else
          throw new Error(
            `trial ${trial}: the Edit failed yet the file is ${JSON.stringify(final.slice(0, 200))}`,
          );
      }
      if (!edit.isError) editsWon++;
      else if (edit.text.includes("at the same moment")) restored++;
    }
    console.log(
      `in-place race${settled ? " (settled file, same size)" : ""}: ${TRIALS} trials, ${editsWon} Edits applied, ` +
        `${TRIALS - editsWon} refused (${restored} after the rename, the other program's bytes put back), ${lost} lost`,
    );
    expect(lost).toBe(0);
    expect(leftovers()).toEqual([]);
  }

  it("an outside process writing the file in place during an Edit is never silently overwritten", async () => {
    await inPlaceTrials("inplace.txt", false);
  }, 600_000);

  it("nor when the file had settled before the Edit read it, and the write keeps its size", async () => {
    await inPlaceTrials("settled.txt", true);
  }, 600_000);
});
