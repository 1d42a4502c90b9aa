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
      "list the built-in tools: name, permission level, what each does; a tool `cc-tools run` cannot serve here says why",
    )
    .option("--json", "print JSON (name, level, aliases, description, available, unavailableReason)")
    .action(async (options: { json?: boolean }) => {
      const [{ builtinTools }, { runHost }, { createHost }, { autoHandler }] = await Promise.all([
        import("../../registry.js"),
        import("../terminal-host.js"),
        import("../../core/host.js"),
        import("../../permissions/handlers.js"),
      ]);
      const tools = builtinTools();
      // The host `cc-tools run` would have here: at a terminal a person to ask, otherwise nobody (the
      // context's default host); never another conversation or a prompt runner. A tool may also be missing
      // what it needs on this machine (PowerShell without pwsh).
      const host = runHost(false) ?? createHost({}, autoHandler);
      const reasons = new Map(tools.availableFor(host).unavailable.map((u) => [u.tool.name, u.reason]));
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
      for (const t of tools.tools) {
        const reason = reasons.get(t.name);
        const what = reason ? `(unavailable here) ${reason}` : summary(t.description);
        process.stdout.write(
          `${t.name.padEnd(nameWidth)}  ${t.permissionLevel.padEnd(levelWidth)}  ${what}\n`,
        );
      }
    });
}
