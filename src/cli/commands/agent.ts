import { readFileSync } from "node:fs";
import { type Command, InvalidArgumentError, Option } from "commander";
import { DEFAULT_CONTEXT_WINDOW } from "../../agent/context-window.js";
import { enableIdleCollection } from "../../process/memory.js";
import { usePrestartedShells } from "../../process/prestart.js";
import { addContextOptions, type ContextFlags, EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE } from "../options.js";

export interface AgentFlags extends ContextFlags {
  print?: boolean;
  outputFormat: "text" | "json" | "stream-json";
  model?: string;
  maxTurns?: number;
  contextWindow?: number;
  provider?: "anthropic" | "openai";
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("use a whole number of at least 1");
  return n;
}

/** The prompt: the argument, or standard input when it is `-` or absent and input is piped. */
function readPrompt(arg: string | undefined): string | undefined {
  if (arg !== undefined && arg !== "-") return arg;
  if (arg === "-" || !process.stdin.isTTY) return readFileSync(0, "utf8");
  return undefined;
}

export function registerAgent(program: Command): void {
  const command = program
    .command("agent")
    .description("run a coding agent on the tools: interactive, or -p for one prompt to completion")
    .argument("[prompt]", "the prompt (print mode); - or piped standard input to read it")
    .option("-p, --print", "run the prompt to completion, print the final answer, and exit")
    .addOption(
      new Option(
        "--output-format <format>",
        "print mode's output: text, json (one result object) or stream-json (one event per line)",
      )
        .choices(["text", "json", "stream-json"])
        .default("text"),
    )
    .option(
      "--model <model>",
      "model id or alias (sonnet, opus, haiku); default: the model setting, else a current Sonnet",
    )
    .option("--max-turns <n>", "most model turns one prompt may take", positiveInt)
    .option(
      "--context-window <tokens>",
      `the model's context window, where compaction aims below (default ${DEFAULT_CONTEXT_WINDOW}; set it for local models with less)`,
      positiveInt,
    )
    .addOption(
      new Option(
        "--provider <provider>",
        "model API: anthropic (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) or openai-compatible (OPENAI_BASE_URL, OPENAI_API_KEY)",
      ).choices(["anthropic", "openai"]),
    )
    .addHelpText(
      "after",
      `
Examples:
  cc-tools agent -p "explain what src/index.ts exports"
  cc-tools agent -p "fix the failing test" --permission-mode acceptEdits --allow 'Bash(npm test)'
  echo "summarise README.md" | cc-tools agent -p --output-format json
  OPENAI_BASE_URL=http://127.0.0.1:11434/v1 cc-tools agent --provider openai --model qwen3-coder --context-window 32768

Interactive mode: type a prompt and Enter; /cost, /clear, /help, /exit; Ctrl-C interrupts the turn, twice quits.

Exit codes: 0 the agent finished, 1 it stopped on an error, a cancellation or the turn limit, 2 bad usage
(no API key, bad flags or settings).`,
    );
  addContextOptions(command, { session: false });
  command.action(async (promptArg: string | undefined, flags: AgentFlags) => {
    const prompt = flags.print ? readPrompt(promptArg) : promptArg;
    if (flags.print && !prompt?.trim()) {
      process.stderr.write(
        "cc-tools agent: -p needs a prompt: give it as an argument or on standard input.\n",
      );
      process.exitCode = EXIT_USAGE;
      return;
    }
    // A long-running host, as the MCP server: collect a large call's garbage when quiet.
    enableIdleCollection();
    usePrestartedShells();
    const { startAgentSession } = await import("../agent-session.js");
    const terminal = flags.print ? undefined : (await import("../agent-terminal.js")).createTerminal();
    const session = await startAgentSession(flags, terminal?.io);
    if ("usage" in session) {
      process.stderr.write(`cc-tools agent: ${session.usage}\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    if (flags.print) {
      const ok = await session.print(prompt!, flags.outputFormat);
      process.exitCode = ok ? EXIT_OK : EXIT_TOOL_ERROR;
      return;
    }
    await terminal!.run(session, prompt);
    process.exitCode = EXIT_OK;
  });
}
