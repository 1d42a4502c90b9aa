import type { Command } from "commander";

/** The first sentence of a description, for one-line listings. */
export function summary(description: string): string {
  const first = description.split("\n")[0]!.trim();
  const end = first.search(/\.(\s|$)/);
  return end === -1 ? first : first.slice(0, end + 1);
}

export function registerList(program: Command): void {
  program
    .command("list")
    .description(
      "list the built-in tools: name, permission level, what each does; tools `cc-tools run` cannot serve are listed apart, with the reason",
    )
    .option("--json", "print JSON (name, level, aliases, description, available, unavailableReason)")
    .action(async (options: { json?: boolean }) => {
      const [{ builtinTools }, { terminalHost }] = await Promise.all([
        import("../../registry.js"),
        import("../terminal-host.js"),
      ]);
      const tools = builtinTools();
      // The host `cc-tools run` has at a terminal: a person to ask, no other conversation, no prompt runner.
      const host = terminalHost({ input: process.stdin, output: process.stderr });
      const { unavailable } = tools.availableFor(host);
      const reasons = new Map(unavailable.map((u) => [u.tool.name, u.reason]));
      if (options.json) {
        const rows = tools.tools.map((t) => ({
          name: t.name,
          level: t.permissionLevel,
          aliases: t.aliases,
          description: t.description,
          available: !reasons.has(t.name),
          ...(reasons.has(t.name) ? { unavailableReason: reasons.get(t.name) } : {}),
        }));
        process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      const nameWidth = Math.max(...tools.tools.map((t) => t.name.length));
      const levelWidth = Math.max(...tools.tools.map((t) => t.permissionLevel.length));
      const line = (name: string, level: string, text: string) =>
        `${name.padEnd(nameWidth)}  ${level.padEnd(levelWidth)}  ${text}\n`;
      for (const t of tools.tools.filter((tool) => !reasons.has(tool.name))) {
        process.stdout.write(line(t.name, t.permissionLevel, summary(t.description)));
      }
      if (unavailable.length > 0) {
        process.stdout.write(
          "\nNot available in `cc-tools run` at a terminal (`cc-tools agent`, `cc-tools mcp` or a library host may offer them):\n",
        );
        for (const { tool, reason } of unavailable) {
          process.stdout.write(
            line(tool.name, tool.permissionLevel, `${summary(tool.description)} Unavailable: ${reason}.`),
          );
        }
      }
    });
}
