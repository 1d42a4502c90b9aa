import type { Command } from "commander";
import { addContextOptions, type ContextFlags, EXIT_USAGE } from "../options.js";

interface StatusFlags extends ContextFlags {
  json?: boolean;
}

export function registerSandbox(program: Command): void {
  const sandbox = program
    .command("sandbox")
    .description("the OS sandbox that Bash and PowerShell commands run in");
  addContextOptions(
    sandbox
      .command("status")
      .description("show whether commands are sandboxed here, why, and what the sandbox allows")
      .option("--json", "print JSON"),
    { session: false },
  ).action(async (flags: StatusFlags) => {
    const [{ contextFromFlags }, { SettingsError }, { formatStatus, sandboxStatus }] = await Promise.all([
      import("../common.js"),
      import("../../settings/load.js"),
      import("../../sandbox/status.js"),
    ]);
    let ctx: ReturnType<typeof contextFromFlags>;
    try {
      ctx = contextFromFlags(flags, { mcpManager: undefined });
    } catch (error) {
      if (!(error instanceof SettingsError)) throw error;
      process.stderr.write(`cc-tools sandbox status: ${error.message}\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    const status = sandboxStatus(ctx);
    process.stdout.write(flags.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
    await ctx.session.dispose();
  });
}
