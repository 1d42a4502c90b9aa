import { spawn } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI } from "../e2e/cli.js";
import { ToolWorker } from "./worker.js";

/**
 * A kill -9 harness: a writer process is SIGKILLed at a random moment while it Writes, Edits and
 * NotebookEdits files in a loop, and while `cc-tools run --session` saves its session state (the task
 * store and read-state) on exit. After each kill every file must hold one whole version, and temp files
 * left by a killed writer must be gone after the next write. KILL9_RUNS runs each (default 8).
 */
const RUNS = Number(process.env.KILL9_RUNS ?? 8);
const WRITE_FILL = 256 * 1024;

const dir = realpathSync(mkdtempSync(join(tmpdir(), "cc-tools-kill9-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const notebook = (source: string) =>
  `${JSON.stringify(
    {
      cells: [
        { cell_type: "code", id: "c1", metadata: {}, source: [source], outputs: [], execution_count: null },
      ],
      metadata: {},
      nbformat: 4,
      nbformat_minor: 5,
    },
    null,
    1,
  )}\n`;

function leftoverTemps(): string[] {
  return readdirSync(dir).filter((name) => /\.cc-tools-\d+-[0-9a-f]+\.tmp$/.test(name));
}

function leftoverLocks(): string[] {
  return readdirSync(dir).filter((name) => name.includes("cc-tools-lock"));
}

/** Runs the loop in a fresh worker until it is killed `delayMs` after it starts. */
async function killDuringLoop(paths: { w: string; e: string; n: string }, delayMs: number): Promise<number> {
  const worker = new ToolWorker(dir);
  await worker.ready;
  for (const path of Object.values(paths)) await worker.call("Read", { file_path: path });
  let done = 0;
  let alive = true;
  const killed = new Promise<void>((resolve) => {
    worker.child.on("exit", () => {
      alive = false;
      resolve();
    });
  });
  setTimeout(() => worker.stop(), delayMs);
  const loop = (async () => {
    for (let k = 0; alive; k++) {
      const current = /v(\d+)/.exec(readFileSync(paths.e, "utf8"))![1];
      const calls = [
        worker.call("Write", { file_path: paths.w, content: `W${k}:${"x".repeat(WRITE_FILL)}` }),
        worker.call("Edit", { file_path: paths.e, old_string: `v${current}`, new_string: `v${k + 1000}` }),
        worker.call("NotebookEdit", { notebook_path: paths.n, cell_id: "c1", new_source: `v${k}` }),
      ];
      await Promise.race([Promise.all(calls), killed]);
      done++;
    }
  })();
  await killed;
  await Promise.race([loop, new Promise((r) => setTimeout(r, 100))]);
  return done;
}

describe("kill -9 during writes", () => {
  it("Write, Edit and NotebookEdit leave whole files and no temp files", async () => {
    const paths = { w: join(dir, "w.txt"), e: join(dir, "e.txt"), n: join(dir, "n.ipynb") };
    writeFileSync(paths.w, `W-1:${"x".repeat(WRITE_FILL)}`);
    writeFileSync(paths.e, "value v0\n");
    writeFileSync(paths.n, notebook("start"));
    let corrupted = 0;
    let tempsAfterKill = 0;
    let locksAfterKill = 0;
    for (let run = 0; run < RUNS; run++) {
      await killDuringLoop(paths, 50 + Math.random() * 400);
      tempsAfterKill += leftoverTemps().length;
      locksAfterKill += leftoverLocks().length;
      if (!/^W-?\d+:x+$/.test(readFileSync(paths.w, "utf8")) || readFileSync(paths.w).length < WRITE_FILL)
        corrupted++;
      if (!/^value v\d+\n$/.test(readFileSync(paths.e, "utf8"))) corrupted++;
      try {
        if (JSON.parse(readFileSync(paths.n, "utf8")).cells.length !== 1) corrupted++;
      } catch {
        corrupted++;
      }
    }
    // The next write in the directory sweeps what the killed writers left.
    const sweeper = new ToolWorker(dir);
    await sweeper.ready;
    // A new name each try: a retry of this test reuses the directory, and a Write over the first try's
    // file (never Read) would be refused before it swept anything.
    const after = join(dir, `after-${Date.now()}-${Math.random().toString(36).slice(2)}.txt`);
    const swept = await sweeper.call("Write", { file_path: after, content: "after\n" });
    expect(swept.isError, JSON.stringify(swept)).toBe(false);
    sweeper.stop();
    console.log(
      `kill -9 harness (tools): ${RUNS} kills, ${corrupted} corrupted files, ${tempsAfterKill} temp files and ${locksAfterKill} locks right after the kills, ${leftoverTemps().length} and ${leftoverLocks().length} after the next write`,
    );
    expect(corrupted).toBe(0);
    expect(leftoverTemps()).toEqual([]);
    expect(leftoverLocks()).toEqual([]);
  }, 600_000);

  it("a killed `cc-tools run --session` leaves its saved state whole", async () => {
    const state = join(dir, "state");
    const env = { ...process.env, CC_TOOLS_STATE_DIR: state, CC_TOOLS_LOG: "silent" };
    writeFileSync(join(dir, "r.txt"), "read me\n");
    let corrupted = 0;
    let saved = 0;
    for (let run = 0; run < RUNS; run++) {
      const child = spawn(
        process.execPath,
        [
          CLI,
          "run",
          "--session",
          "k9",
          "--cwd",
          dir,
          "Bash",
          JSON.stringify({ command: "sleep 0.1; echo hi", run_in_background: true }),
        ],
        { env, stdio: "ignore" },
      );
      setTimeout(() => child.kill("SIGKILL"), 150 + Math.random() * 1500);
      await new Promise((resolve) => child.on("exit", resolve));
      const files = existsSync(state) ? readdirSync(state, { recursive: true, encoding: "utf8" }) : [];
      for (const file of files.filter((f) => f.endsWith("state.json"))) {
        saved++;
        try {
          JSON.parse(readFileSync(join(state, file), "utf8"));
        } catch {
          corrupted++;
        }
      }
    }
    const temps = existsSync(state)
      ? readdirSync(state, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".tmp"))
      : [];
    console.log(
      `kill -9 harness (session save): ${RUNS} kills, ${saved} state files checked, ${corrupted} corrupted, ${temps.length} temp files left`,
    );
    expect(corrupted).toBe(0);
  }, 600_000);
});
