import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { allTools, findTool, toAnthropicTools, toMcpTools, toOpenAITools } from "../src/registry.js";

interface CompatSchema {
  properties?: Record<string, unknown>;
  required?: string[];
}

const compat = JSON.parse(
  readFileSync(new URL("./fixtures/compat/claude-code-tool-inputs.json", import.meta.url), "utf8"),
) as { tools: Record<string, { inputSchema: CompatSchema }> };

describe("registry", () => {
  it("has unique names and aliases", () => {
    const names = allTools().flatMap((t) => [t.name, ...t.aliases]);
    expect(new Set(names).size).toBe(names.length);
  });

  it("finds tools by exact name and by alias, case-sensitively", () => {
    for (const tool of allTools()) {
      expect(findTool(tool.name)).toBe(tool);
      for (const alias of tool.aliases) expect(findTool(alias)).toBe(tool);
      if (tool.name.toLowerCase() !== tool.name) expect(findTool(tool.name.toLowerCase())).toBeUndefined();
    }
  });

  it("computes each definition once", () => {
    for (const tool of allTools()) expect(tool.toDefinition()).toBe(tool.toDefinition());
  });

  it("gives every tool a real description and an object schema that rejects unknown parameters", () => {
    for (const tool of allTools()) {
      const d = tool.toDefinition();
      expect(d.description.length, tool.name).toBeGreaterThan(40);
      expect(d.input_schema.type, tool.name).toBe("object");
      expect(d.input_schema.additionalProperties, tool.name).toBe(false);
      expect(d.input_schema.$schema, tool.name).toBeUndefined();
    }
  });

  it("takes exactly Claude Code's parameter names where Claude Code has the tool", () => {
    for (const tool of allTools()) {
      const theirs = [tool.name, ...tool.aliases].map((n) => compat.tools[n]).find(Boolean)?.inputSchema;
      if (!theirs) continue;
      // Stripping descriptions from the compat file also dropped parameters named "description"
      // (Bash's, Task's), so that one name may be ours alone; every other name must match exactly.
      const ours = tool.toDefinition().input_schema as CompatSchema;
      const names = new Set(Object.keys(ours.properties ?? {}));
      const theirNames = new Set(Object.keys(theirs.properties ?? {}));
      if ((theirs.required ?? []).includes("description")) theirNames.add("description");
      if (!theirNames.has("description")) names.delete("description");
      expect(names, tool.name).toEqual(theirNames);
      // We may require less than Claude Code (defaults), never more.
      for (const r of ours.required ?? []) expect(theirs.required ?? [], `${tool.name}.${r}`).toContain(r);
    }
  });

  it("snapshots every model-facing definition", () => {
    expect(allTools().map((t) => t.toDefinition())).toMatchSnapshot();
  });

  it("puts the prompt-cache breakpoint on the last Anthropic definition only", () => {
    const tools = toAnthropicTools();
    expect(tools.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
    expect(tools.slice(0, -1).every((t) => t.cache_control === undefined)).toBe(true);
  });

  it("converts to OpenAI and MCP forms", () => {
    const [first] = allTools();
    if (!first) return;
    expect(toOpenAITools()[0]).toEqual({
      type: "function",
      function: {
        name: first.name,
        description: first.description,
        parameters: first.toDefinition().input_schema,
      },
    });
    expect(toMcpTools()[0]).toEqual({
      name: first.name,
      description: first.description,
      inputSchema: first.toDefinition().input_schema,
      annotations: { readOnlyHint: true, destructiveHint: false },
    });
    const bash = toMcpTools().find((t) => t.name === "Bash");
    expect(bash?.annotations).toEqual({ readOnlyHint: false, destructiveHint: true });
  });
});
