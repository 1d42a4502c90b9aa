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
    .description("list the built-in tools: name, permission level, what each does")
    .option("--json", "print JSON (name, level, aliases, description)")
    .action(async (options: { json?: boolean }) => {
      const [{ allTools }, { toolUnavailable }] = await Promise.all([
        import("../../registry.js"),
        import("../../process/shells.js"),
      ]);
      const tools = allTools().map((tool) => ({ tool, unavailable: toolUnavailable(tool.name) }));
      if (options.json) {
        const rows = tools.map(({ tool: t, unavailable }) => ({
          name: t.name,
          level: t.permissionLevel,
          aliases: t.aliases,
          description: t.description,
          available: unavailable === undefined,
          ...(unavailable ? { unavailableReason: unavailable } : {}),
        }));
        process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      const nameWidth = Math.max(...tools.map(({ tool }) => tool.name.length));
      const levelWidth = Math.max(...tools.map(({ tool }) => tool.permissionLevel.length));
      for (const { tool: t, unavailable } of tools) {
        const what = unavailable ? `(unavailable here) ${unavailable}` : summary(t.description);
        process.stdout.write(
          `${t.name.padEnd(nameWidth)}  ${t.permissionLevel.padEnd(levelWidth)}  ${what}\n`,
        );
      }
    });
}
