import type { Command } from "commander";
import { EXIT_USAGE } from "../options.js";

export function registerSchema(program: Command): void {
  program
    .command("schema")
    .description("print a tool's input JSON Schema (draft-07), as models and MCP clients see it")
    .argument("<tool>", "tool name, e.g. Read")
    .option("--definition", "print the whole definition (name, description, input_schema)")
    .action(async (name: string, options: { definition?: boolean }) => {
      const { allTools, closestToolNames, findTool } = await import("../../registry.js");
      const tool = findTool(name);
      if (!tool) {
        const close = closestToolNames(
          name,
          allTools().map((t) => t.name),
        );
        const hint = close.length > 0 ? ` Did you mean ${close.join(", ")}?` : "";
        process.stderr.write(
          `cc-tools: no tool named "${name}".${hint} Run 'cc-tools list' to see them all.\n`,
        );
        process.exitCode = EXIT_USAGE;
        return;
      }
      const definition = tool.toDefinition();
      process.stdout.write(
        `${JSON.stringify(options.definition ? definition : definition.input_schema, null, 2)}\n`,
      );
    });
}
