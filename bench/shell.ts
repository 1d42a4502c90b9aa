import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createToolContext } from "../src/context.js";
import { runTool } from "../src/executor/run.js";
import type { Bench } from "./lib.js";
import { timePair } from "./lib.js";

/** One raw `bash -c` with its output collected: the floor any shell tool pays. */
function rawBash(command: string, cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", command], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.on("error", reject);
    child.on("close", () => resolve(out));
  });
}

const bench: Bench = async (report) => {
  const workingDir = realpathSync(mkdtempSync(join(tmpdir(), "cc-tools-bench-shell-")));
  const ctx = createToolContext({ workingDir, permissionMode: "bypassPermissions" });
  const { oursMs, baselineMs } = await timePair(
    () => runTool("Bash", { command: "echo hi" }, ctx),
    () => rawBash("echo hi", workingDir),
    30,
    5,
  );
  report({
    name: "Bash echo hi (runTool, in-process)",
    baseline: "child_process bash -c",
    oursMs,
    baselineMs,
    targetRatio: 1.5,
    note: "the whole runTool pipeline, process group and cwd capture included",
  });
  await ctx.session.dispose();
  rmSync(workingDir, { recursive: true, force: true });
};

export default bench;
