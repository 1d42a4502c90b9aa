import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import type { ToolResult } from "../../core/result.js";
import { addContextOptions, type ContextFlags, EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE } from "../options.js";

interface RunFlags extends ContextFlags {
  json?: boolean;
}

function usageError(message: string): void {
  process.stderr.write(`cc-tools run: ${message}\n`);
  process.exitCode = EXIT_USAGE;
}

/** The input argument: inline JSON, or `-` for standard input. */
function readInput(arg: string | undefined): { ok: true; value: unknown } | { ok: false; message: string } {
  const text = arg === undefined ? "{}" : arg === "-" ? readFileSync(0, "utf8") : arg;
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const source = arg === "-" ? "standard input" : "the input argument";
    return {
      ok: false,
      message: `${source} is not valid JSON (${(error as Error).message}). Pass one JSON object, e.g. '{"file_path": "README.md"}'.`,
    };
  }
}

function printResult(result: ToolResult, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const parts = result.content.map((block) =>
    block.type === "text"
      ? block.text
      : `[image: ${block.mimeType}, ${Buffer.from(block.data, "base64").length} bytes]`,
  );
  const text = parts.join("\n");
  const stream = result.isError ? process.stderr : process.stdout;
  stream.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function registerRun(program: Command): void {
  const command = program
    .command("run")
    .description(
      "run one tool call through the executor (validation, hooks, permissions) and print its result",
    )
    .argument("<tool>", "tool name, e.g. Read")
    .argument("[input]", "the input as JSON, or - to read it from standard input", undefined)
    .option("--json", "print the whole result as JSON (content blocks, isError, metadata)")
    .addHelpText(
      "after",
      `
Examples:
  cc-tools run Read '{"file_path": "README.md", "limit": 20}'
  echo '{"command": "git status"}' | cc-tools run Bash - --allow 'Bash(git status)'
  cc-tools run Bash '{"command": "cd src"}' --session work --allow 'Bash(cd:*)'
  cc-tools run Bash '{"command": "pwd"}' --session work --allow 'Bash(pwd)'    # prints …/src
  cc-tools sessions reset work                                                 # start "work" afresh

Exit codes: 0 success, 1 the tool reported an error, 2 bad usage (bad JSON, an unknown tool or
option, a missing --cwd directory, an invalid rule or settings file).`,
    );
  addContextOptions(command, { session: true });
  command.action(async (name: string, inputArg: string | undefined, flags: RunFlags) => {
    const input = readInput(inputArg);
    if (!input.ok) return usageError(input.message);
    const [
      { runTool },
      { runHost },
      { SettingsError },
      { contextFromFlags, openSession, saveSession },
      { isRunning, taskStoreSlot },
    ] = await Promise.all([
      import("../../executor/run.js"),
      import("../terminal-host.js"),
      import("../../settings/load.js"),
      import("../common.js"),
      import("../../tasks/store.js"),
    ]);
    const workingDir = resolve(flags.cwd ?? process.cwd());
    const session = openSession(flags.session, workingDir);
    // A person at a terminal is asked; with piped input, or in CI, an ask becomes a denial that says why.
    const host = runHost(inputArg === "-");
    let ctx: ReturnType<typeof contextFromFlags>;
    try {
      ctx = contextFromFlags(flags, { session, host });
    } catch (error) {
      if (error instanceof SettingsError) return usageError(error.message);
      throw error;
    }
    const controller = new AbortController();
    const onSignal = () => controller.abort("interrupted");
    process.once("SIGINT", onSignal);
    let result: ToolResult;
    try {
      // MCP tools exist only once their servers are connected; other tools never wait for MCP.
      if (name.startsWith("mcp__")) await ctx.mcpManager?.connect();
      result = await runTool(name, input.value, ctx, { signal: controller.signal });
    } finally {
      process.removeListener("SIGINT", onSignal);
      await saveSession(flags.session, workingDir, session);
      // Background tasks cannot outlive this process; say so rather than let "running in the background" mislead.
      const running = session.get(taskStoreSlot).list().filter(isRunning);
      if (running.length > 0) {
        process.stderr.write(
          `cc-tools run: background task ${running.map((t) => t.id).join(", ")} ends now, with this command. ` +
            "To keep background work running between calls, serve the tools with 'cc-tools mcp' or use the library.\n",
        );
      }
      await session.dispose();
      await ctx.mcpManager?.close();
      if (host) process.stdin.destroy();
    }
    printResult(result, flags.json ?? false);
    // Naming a tool that does not exist is a mistake in the command line, like `schema Bogus`.
    if (result.metadata?.unknownTool) process.exitCode = EXIT_USAGE;
    else process.exitCode = result.isError ? EXIT_TOOL_ERROR : EXIT_OK;
  });
}
