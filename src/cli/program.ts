/**
 * The `cc-tools` command line: every subcommand, parsed by commander. Loaded by the entry (main.ts) once
 * it has started what must not wait for it.
 */
import { Command, CommanderError } from "commander";
import { packageVersion } from "../core/version.js";
import { registerAgent } from "./commands/agent.js";
import { registerList } from "./commands/list.js";
import { registerMcp } from "./commands/mcp.js";
import { registerRun } from "./commands/run.js";
import { registerSandbox } from "./commands/sandbox.js";
import { registerSchema } from "./commands/schema.js";
import { registerSessions } from "./commands/sessions.js";
import { EXIT_USAGE } from "./options.js";

// `cc-tools list | head` closes the pipe early; that ends the output, it is not a crash.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

const program = new Command()
  .name("cc-tools")
  .description("Claude Code's tools for any agent: run them from the shell, or serve them over MCP.")
  .version(packageVersion(), "-V, --version")
  .showHelpAfterError("(run with --help for usage)")
  .exitOverride();

registerList(program);
registerSchema(program);
registerRun(program);
registerMcp(program);
registerAgent(program);
registerSessions(program);
registerSandbox(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Help and version exit 0; every other usage problem exits 2.
    process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE;
  } else {
    process.stderr.write(`cc-tools: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  }
}
