import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createToolContext } from "../src/context.js";
import { runTool } from "../src/executor/run.js";
import { usePrestartedShells } from "../src/process/prestart.js";
import { emptySettings } from "../src/settings/types.js";
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

/** The pause between calls in the rows with shells started ahead (a model takes far longer). */
const THINK_MS = 50;

const bench: Bench = async (report) => {
  const workingDir = realpathSync(mkdtempSync(join(tmpdir(), "cc-tools-bench-shell-")));
  // The pipeline's own cost, apart from the sandbox (measured below against this).
  const config = emptySettings(workingDir);
  config.sandbox.enabled = false;
  const ctx = createToolContext({ workingDir, permissionMode: "bypassPermissions", config });
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
  const sandboxed = createToolContext({ workingDir, permissionMode: "bypassPermissions" });
  const pair = await timePair(
    () => runTool("Bash", { command: "echo hi" }, sandboxed),
    () => runTool("Bash", { command: "echo hi" }, ctx),
    30,
    5,
  );
  report({
    name: "Bash echo hi in the OS sandbox (bubblewrap)",
    baseline: "the same call unsandboxed",
    oursMs: pair.oursMs,
    baselineMs: pair.baselineMs,
    targetMs: pair.baselineMs + 10,
    note: "target: under 10 ms added per command (policy, mounts, namespaces; no network proxy)",
  });
  await sandboxed.session.dispose();
  await ctx.session.dispose();

  // As the MCP server and the agent run commands: each session's next bash started ahead of its command
  // (src/process/prestart.ts), so neither call waits for this process to fork. It is started once the
  // process has been quiet for a moment, so the calls come with a pause between them, as from a model.
  usePrestartedShells();
  // The sandbox itself is started ahead too: in a project (a git repository with .claude/ and .mcp.json)
  // as it is, in the bare workspace without the stand-ins for the missing control files, which are mounted
  // as the command comes.
  const project = join(workingDir, "project");
  mkdirSync(join(project, ".claude"), { recursive: true });
  writeFileSync(join(project, ".mcp.json"), "{}\n");
  execFileSync("git", ["init", "-q", project]);
  const projectConfig = emptySettings(project);
  projectConfig.sandbox.enabled = false;
  const offAhead = createToolContext({
    workingDir: project,
    permissionMode: "bypassPermissions",
    config: projectConfig,
  });
  const onAhead = createToolContext({ workingDir: project, permissionMode: "bypassPermissions" });
  const bareAhead = createToolContext({ workingDir, permissionMode: "bypassPermissions" });
  for (const [sandboxed, name, note] of [
    [
      onAhead,
      "Bash echo hi in the OS sandbox started ahead (a project, as the MCP server runs it)",
      "the sandbox for the next command waits, set up, while the model thinks",
    ],
    [
      bareAhead,
      "Bash echo hi in the OS sandbox, bare workspace, shells started ahead",
      "no .git, .claude or .mcp.json: the stand-ins for them are mounted as the command comes",
    ],
  ] as const) {
    const ahead = await timePair(
      () => runTool("Bash", { command: "echo hi" }, sandboxed),
      () => runTool("Bash", { command: "echo hi" }, offAhead),
      30,
      5,
      THINK_MS,
    );
    report({
      name,
      baseline: "the same call unsandboxed",
      oursMs: ahead.oursMs,
      baselineMs: ahead.baselineMs,
      targetMs: ahead.baselineMs + 10,
      note: `usePrestartedShells(), ${THINK_MS} ms between calls: ${note}`,
    });
  }
  await onAhead.session.dispose();
  await bareAhead.session.dispose();
  await offAhead.session.dispose();
  rmSync(workingDir, { recursive: true, force: true });
};

export default bench;
