import { statSync } from "node:fs";
import { resolve } from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from "../core/permission-level.js";
import { validateRule } from "../permissions/rules.js";
import { SettingsError } from "../settings/load.js";

// The CLI's light layer: flags and exit codes. Commands load what runs tools (src/cli/common.ts, the
// executor, the tools) inside their actions, so `cc-tools --help` and the MCP server's opening stay fast.

/** Exit codes of every command: 0 success, 1 the tool (or server) failed, 2 bad usage. */
export const EXIT_OK = 0;
export const EXIT_TOOL_ERROR = 1;
export const EXIT_USAGE = 2;

/** Options shared by commands that run tools (`run`, `mcp`). */
export interface ContextFlags {
  cwd?: string;
  permissionMode?: PermissionMode;
  allow?: string[];
  deny?: string[];
  session?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export const SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Adds --cwd, --permission-mode, --allow, --deny (and --session where state can persist) to a command. */
export function addContextOptions(command: Command, { session }: { session: boolean }): Command {
  command
    .option("--cwd <dir>", "workspace directory (default: the current directory)")
    .addOption(
      new Option("--permission-mode <mode>", "permission mode")
        .choices([...PERMISSION_MODES])
        .argParser((v: string) => {
          if (!isPermissionMode(v))
            throw new InvalidArgumentError(`use one of ${PERMISSION_MODES.join(", ")}`);
          return v;
        }),
    )
    .option("--allow <rule>", "allow rule, e.g. 'Bash(npm test:*)' (repeatable)", collect)
    .option("--deny <rule>", "deny rule, e.g. 'Read(./.env)' (repeatable)", collect);
  if (session) {
    command.option(
      "--session <name>",
      "keep session state (files read, shell cwd, permission grants) between runs under this name",
      (v: string) => {
        if (!SESSION_NAME.test(v))
          throw new InvalidArgumentError("use letters, digits, '.', '_' and '-' (at most 64)");
        return v;
      },
    );
  }
  return command;
}

/** Refuses unparseable --allow / --deny rules: ignoring a bad deny rule would allow what it meant to forbid. */
export function checkRuleFlags(flags: ContextFlags): void {
  for (const [flag, rules] of [
    ["--allow", flags.allow],
    ["--deny", flags.deny],
  ] as const) {
    for (const rule of rules ?? []) {
      const problem = validateRule(rule);
      if (problem) throw new SettingsError(`${flag}: ${problem}`);
    }
  }
}

/** The workspace directory from --cwd (default: the current one); a missing one is a usage error. */
export function checkWorkingDir(cwd: string | undefined): string {
  const dir = resolve(cwd ?? process.cwd());
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    throw new SettingsError(`--cwd ${dir} is not an existing directory; give the workspace directory.`);
  }
  return dir;
}
