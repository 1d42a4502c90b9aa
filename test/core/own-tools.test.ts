import { describe, expect, it } from "vitest";
import * as z from "zod";
import * as z3 from "zod/v3";
import { createToolContext } from "../../src/context.js";
import { ToolResult } from "../../src/core/result.js";
import { defineTool } from "../../src/core/tool.js";
import { allTools, toAnthropicTools, toMcpTools, toOpenAITools, toolsFor } from "../../src/registry.js";
import { tempDir } from "../helpers/context.js";

function ownTool(name: string, aliases: string[] = []) {
  return defineTool({
    name,
    aliases,
    description: `${name}: the embedder's own tool.`,
    permissionLevel: "readOnly",
    inputSchema: z.strictObject({ q: z.string() }),
    async execute(input) {
      return ToolResult.success(input.q);
    },
  });
}

describe("the embedder's own tools", () => {
  it("toAnthropicTools(ctx) and its siblings include them, once, after the built-ins", () => {
    const ctx = createToolContext({ workingDir: tempDir(), tools: [ownTool("LookupTicket")] });
    const anthropic = toAnthropicTools(ctx);
    // The built-ins this host can serve (Task needs a model, PowerShell needs pwsh), then the own tool.
    expect(anthropic.map((t) => t.name)).toEqual([...toolsFor(ctx).map((t) => t.name)]);
    expect(anthropic.at(-1)!.name).toBe("LookupTicket");
    expect(anthropic.map((t) => t.name)).toContain("Read");
    expect(anthropic.at(-1)!.cache_control).toEqual({ type: "ephemeral" });
    expect(anthropic.filter((t) => t.cache_control)).toHaveLength(1);
    expect(toOpenAITools(ctx).at(-1)!.function.name).toBe("LookupTicket");
    expect(toMcpTools(ctx).at(-1)!.name).toBe("LookupTicket");
    // Without a context, the built-ins alone, as before.
    expect(toAnthropicTools().map((t) => t.name)).toEqual(allTools().map((t) => t.name));
  });

  it("a tool named like a built-in, or like another own tool, is an error at createToolContext", () => {
    const workingDir = tempDir();
    expect(() => createToolContext({ workingDir, tools: [ownTool("Read")] })).toThrow(
      /your tool "Read" uses the name "Read" of the built-in tool Read, which would shadow it/,
    );
    expect(() => createToolContext({ workingDir, tools: [ownTool("Stop", ["KillShell"])] })).toThrow(
      /"KillShell" of the built-in tool TaskStop/,
    );
    expect(() => createToolContext({ workingDir, tools: [ownTool("A"), ownTool("B", ["A"])] })).toThrow(
      /two of your tools are named "A"/,
    );
  });

  it("a zod 3 schema gets a message that says zod 4 is needed and how to get it", () => {
    const spec = {
      name: "Old",
      description: "old",
      permissionLevel: "readOnly" as const,
      inputSchema: z3.object({ q: z3.string() }) as unknown as z.ZodType,
      execute: async () => ToolResult.success(""),
    };
    expect(() => defineTool(spec)).toThrow(
      /Tool "Old": inputSchema is not a zod 4 schema \(it looks like zod 3\)/,
    );
    expect(() => defineTool(spec)).toThrow(/install zod@\^4/);
    // A tool object made without defineTool is checked where it is handed over.
    const handMade = { ...ownTool("HandMade"), inputSchema: spec.inputSchema };
    expect(() => createToolContext({ workingDir: tempDir(), tools: [handMade] })).toThrow(
      /not a zod 4 schema/,
    );
  });
});
