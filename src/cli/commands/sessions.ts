import { resolve } from "node:path";
import type { Command } from "commander";
import { byCodeUnits } from "../../core/order.js";
import { EXIT_USAGE } from "../options.js";

interface SessionsFlags {
  cwd?: string;
  json?: boolean;
}

/** `cc-tools sessions list`: the named sessions saved for this workspace, most recently used first. */
async function list(flags: SessionsFlags): Promise<void> {
  const { existsSync, readdirSync, statSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { sessionPaths, stateDir } = await import("../common.js");
  const workingDir = resolve(flags.cwd ?? process.cwd());
  const root = join(stateDir(), "sessions");
  const names = existsSync(root) ? readdirSync(root) : [];
  const sessions = names
    .map((name) => ({ name, file: sessionPaths(name, workingDir).file }))
    .filter(({ file }) => existsSync(file))
    .map(({ name, file }) => ({ name, saved: statSync(file).mtime.toISOString(), file }))
    .sort((a, b) => byCodeUnits(b.saved, a.saved));
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ workspace: workingDir, sessions }, null, 2)}\n`);
    return;
  }
  if (sessions.length === 0) {
    process.stdout.write(
      `No named sessions for ${workingDir}. Start one with 'cc-tools run … --session NAME'.\n`,
    );
    return;
  }
  const width = Math.max(...sessions.map((s) => s.name.length));
  for (const s of sessions) process.stdout.write(`${s.name.padEnd(width)}  last saved ${s.saved}\n`);
}

/** `cc-tools sessions reset NAME`: forgets a session's state in this workspace (and its spilled files). */
async function reset(name: string, flags: SessionsFlags): Promise<void> {
  const { existsSync, rmSync } = await import("node:fs");
  const { SESSION_NAME } = await import("../options.js");
  const { sessionPaths } = await import("../common.js");
  if (!SESSION_NAME.test(name)) {
    process.stderr.write(`cc-tools sessions reset: "${name}" is not a session name.\n`);
    process.exitCode = EXIT_USAGE;
    return;
  }
  const workingDir = resolve(flags.cwd ?? process.cwd());
  const { dir } = sessionPaths(name, workingDir);
  const existed = existsSync(dir);
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(
    existed
      ? `Session ${name} of ${workingDir} reset: the next --session ${name} starts afresh.\n`
      : `Session ${name} had nothing saved for ${workingDir}.\n`,
  );
}

export function registerSessions(program: Command): void {
  const sessions = program
    .command("sessions")
    .description("list or reset the named sessions (`run --session NAME`) of a workspace");
  sessions
    .command("list", { isDefault: true })
    .description("the named sessions saved for this workspace")
    .option("--cwd <dir>", "workspace directory (default: the current directory)")
    .option("--json", "print JSON: each session's name, when it was last saved, and its state file")
    .action(list);
  sessions
    .command("reset")
    .description("forget a named session's state in this workspace: files read, shell directory, grants")
    .argument("<name>", "the session name given to --session")
    .option("--cwd <dir>", "workspace directory (default: the current directory)")
    .action(reset);
}
