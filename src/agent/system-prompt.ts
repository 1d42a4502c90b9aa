import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { homedir, platform, release } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { hostProgram } from "../process/shells.js";
import { hostEnv } from "../sandbox/host-programs.js";

/** Longest CLAUDE.md text taken from one file, and git status lines shown. */
const MAX_MEMORY_FILE_CHARS = 40_000;
const MAX_GIT_STATUS_LINES = 40;

/** CLAUDE.md files that apply to `workingDir`: the user's (~/.claude), then from the root down to it. */
export async function memoryFiles(
  workingDir: string,
  configDir = join(homedir(), ".claude"),
): Promise<string[]> {
  const dirs: string[] = [];
  for (let dir = workingDir; ; dir = dirname(dir)) {
    dirs.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  const candidates = [
    join(configDir, "CLAUDE.md"),
    ...dirs.flatMap((d) => [join(d, "CLAUDE.md"), join(d, ".claude", "CLAUDE.md")]),
  ];
  const found: string[] = [];
  for (const path of [...new Set(candidates)]) {
    if (
      await readFile(path, "utf8").then(
        () => true,
        () => false,
      )
    )
      found.push(path);
  }
  return found;
}

async function gitStatus(cwd: string): Promise<string | undefined> {
  try {
    const run = promisify(execFile);
    const git = hostProgram("git");
    if (!git) return undefined;
    // git status runs clean filters (git-lfs): they come from outside the sandbox's reach too.
    const options = { cwd, timeout: 5_000, env: hostEnv() };
    const [{ stdout: branch }, { stdout: status }] = await Promise.all([
      run(git, ["rev-parse", "--abbrev-ref", "HEAD"], options),
      run(git, ["status", "--short"], options),
    ]);
    const lines = status.split("\n").filter(Boolean);
    const shown = lines.slice(0, MAX_GIT_STATUS_LINES).join("\n");
    const more =
      lines.length > MAX_GIT_STATUS_LINES ? `\n… and ${lines.length - MAX_GIT_STATUS_LINES} more` : "";
    return `Branch: ${branch.trim()}\n${lines.length === 0 ? "(clean)" : shown + more}`;
  } catch {
    return undefined;
  }
}

export interface SystemPromptOptions {
  workingDir: string;
  /** The agent type's own instructions (a custom agent's body), put before the environment. */
  instructions?: string;
  configDir?: string;
  now?: Date;
  /** The agent types Task can start, when the agent has Task: the model picks `subagent_type` from them. */
  agentTypes?: ReadonlyArray<{ name: string; description: string }>;
}

const BASE_INSTRUCTIONS = `You are a coding agent working in the user's repository through the tools you are given.
Read files before you change them, make the smallest change that does the job, and check your work by running
the project's own commands. When a tool call is refused, say what you needed and why instead of working around
the refusal. Keep answers short and concrete; end with what you did and anything left for the user.`;

/** The system prompt: instructions, then where and when the agent works, git status and CLAUDE.md memory. */
export async function systemPrompt(options: SystemPromptOptions): Promise<string> {
  const now = options.now ?? new Date();
  const [files, git] = await Promise.all([
    memoryFiles(options.workingDir, options.configDir),
    gitStatus(options.workingDir),
  ]);
  const memory: string[] = [];
  for (const file of files) {
    const text = await readFile(file, "utf8").catch(() => "");
    if (text.trim()) memory.push(`Contents of ${file}:\n${text.slice(0, MAX_MEMORY_FILE_CHARS)}`);
  }
  return [
    options.instructions ?? BASE_INSTRUCTIONS,
    [
      "<env>",
      `Working directory: ${options.workingDir}`,
      `Platform: ${platform()} ${release()}`,
      `Date: ${now.toISOString().slice(0, 10)}`,
      `Git repository: ${git ? "yes" : "no"}`,
      "</env>",
    ].join("\n"),
    ...(git ? [`<git_status>\n${git}\n</git_status>`] : []),
    ...(options.agentTypes?.length
      ? [
          `Agent types for the Task tool (subagent_type):\n${options.agentTypes.map((t) => `- ${t.name}: ${t.description}`).join("\n")}`,
        ]
      : []),
    ...(memory.length > 0 ? [`<memory>\n${memory.join("\n\n")}\n</memory>`] : []),
  ].join("\n\n");
}
