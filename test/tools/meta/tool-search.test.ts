import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { McpManager } from "../../../src/core/mcp-manager.js";
import { ToolResult } from "../../../src/core/result.js";
import { type AnyTool, defineTool, type ToolDefinition } from "../../../src/core/tool.js";
import { runTool } from "../../../src/executor/run.js";
import { toAnthropicTools, toolsFor } from "../../../src/registry.js";
import { testContext } from "../../helpers/context.js";

type Ctx = ReturnType<typeof testContext>;

async function call(ctx: Ctx, input: Record<string, unknown>) {
  const result = await runTool("ToolSearch", input, ctx);
  return { result, text: ToolResult.text(result), tools: (result.metadata?.tools ?? []) as ToolDefinition[] };
}

function own(
  name: string,
  description: string,
  params: Record<string, z.ZodType> = {},
  deferred = false,
): AnyTool {
  return defineTool({
    name,
    description,
    permissionLevel: "readOnly",
    inputSchema: z.strictObject(params),
    deferred,
    execute: async () => ToolResult.success("ok"),
  });
}

describe("ToolSearch", () => {
  it("ranks tools by name first, then description and parameter names", async () => {
    const ctx = testContext({
      tools: [
        own("CreateInvoice", "Bills a customer.", { customer_id: z.string() }),
        own("SendEmail", "Sends an email to a customer about their invoice.", { to: z.string() }),
        own("Weather", "Today's forecast.", { city: z.string() }),
      ],
    });
    const byName = await call(ctx, { query: "invoice", max_results: 2 });
    expect(byName.tools.map((t) => t.name)).toEqual(["CreateInvoice", "SendEmail"]);
    const byParam = await call(ctx, { query: "city", max_results: 1 });
    expect(byParam.tools.map((t) => t.name)).toEqual(["Weather"]);
    const builtin = await call(ctx, { query: "notebook cell", max_results: 1 });
    expect(builtin.tools.map((t) => t.name)).toEqual(["NotebookEdit"]);
    expect(builtin.text).toContain('<function>{"name":"NotebookEdit"');
  });

  it("select: returns exactly the tools named, with their full definitions, and names unknown ones", async () => {
    const ctx = testContext();
    const picked = await call(ctx, { query: "select:Grep,Read", max_results: 5 });
    expect(picked.tools.map((t) => t.name)).toEqual(["Grep", "Read"]);
    expect(picked.tools[0]!.input_schema).toEqual(ctx.tools.get("Grep")!.toDefinition().input_schema);
    const unknown = await call(ctx, { query: "select:Grep,Nope" });
    expect(unknown.result.isError).toBe(true);
    expect(unknown.text).toContain('No tool named "Nope"');
  });

  it("finds deferred tools, which toAnthropicTools leaves out; max_results defaults to 5", async () => {
    const ctx = testContext({
      tools: [own("DeployService", "Deploys a service to production.", { service: z.string() }, true)],
    });
    expect(toAnthropicTools(ctx).map((t) => t.name)).not.toContain("DeployService");
    expect(toolsFor(ctx).map((t) => t.name)).toContain("DeployService");
    const found = await call(ctx, { query: "deploy production" });
    expect(found.tools[0]!.name).toBe("DeployService");
    expect(found.result.metadata?.deferred).toEqual(["DeployService"]);
    const many = await call(ctx, { query: "file" });
    expect(many.tools.length).toBeLessThanOrEqual(5);
  });

  it("defers MCP tools past the host's count", async () => {
    const mcp = [own("mcp__s__a", "first"), own("mcp__s__b", "second")];
    const ctx = testContext({
      deferMcpToolsAfter: 1,
      mcpManager: {
        tools: () => mcp,
      } as unknown as McpManager,
    });
    const names = toAnthropicTools(ctx).map((t) => t.name);
    expect(names).toContain("mcp__s__a");
    expect(names).not.toContain("mcp__s__b");
    const found = await call(ctx, { query: "select:mcp__s__b" });
    expect(found.tools.map((t) => t.name)).toEqual(["mcp__s__b"]);
  });

  it("says when nothing matches, and rejects a bad max_results", async () => {
    const ctx = testContext();
    const none = await call(ctx, { query: "zzqqxx" });
    expect(none.result.isError).toBe(false);
    expect(none.text).toContain('No tool matches "zzqqxx"');
    const bad = await call(ctx, { query: "x", max_results: 0 });
    expect(bad.result.isError).toBe(true);
    expect(bad.text).toContain("max_results");
  });
});

describe("ToolSearch across sessions", () => {
  it("never answers with another session's tool that has the same name", async () => {
    const one = testContext({ tools: [own("Lookup", "Finds customers by email.")] });
    const two = testContext({ tools: [own("Lookup", "Finds flights by airport code.")] });
    expect((await call(one, { query: "select:Lookup" })).tools[0]!.description).toContain("customers");
    expect((await call(two, { query: "select:Lookup" })).tools[0]!.description).toContain("flights");
    expect((await call(one, { query: "customers", max_results: 1 })).tools[0]!.description).toContain(
      "customers",
    );
    expect((await call(two, { query: "airport", max_results: 1 })).tools[0]!.description).toContain(
      "flights",
    );
  });
});
