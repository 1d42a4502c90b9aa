import MiniSearch from "minisearch";
import * as z from "zod";
import type { ToolContext } from "../../core/context.js";
import { InputError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { type AnyTool, defineTool, type ToolDefinition } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";

/** Most definitions one search returns: each is a whole schema in the conversation. */
export const MAX_TOOL_SEARCH_RESULTS = 20;
const DEFAULT_RESULTS = 5;
const SELECT_PREFIX = "select:";

/** How much a match counts by where it is: a word of the name says most about what a tool does. */
const FIELD_BOOST = { name: 4, description: 1, parameters: 1.5 };

/** Splits `mcp__github__create_issue` and `NotebookEdit` into words. */
function nameWords(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_\-.]+/g, " ")
    .toLowerCase();
}

/** A zod object's keys are read off its shape: deriving 1,000 JSON Schemas just for their keys is slow. */
function parameterNames(tool: AnyTool): string {
  const shape = (tool.inputSchema as { shape?: Record<string, unknown> }).shape;
  const properties =
    shape ?? ((tool.toDefinition().input_schema.properties ?? {}) as Record<string, unknown>);
  return Object.keys(properties).map(nameWords).join(" ");
}

/** The tools a search covers: what this host can serve, the embedder's own and the session's MCP tools. */
function searchable(ctx: ToolContext): AnyTool[] {
  return [...ctx.tools.availableFor(ctx.host).available.tools, ...(ctx.mcpManager?.tools() ?? [])];
}

/** A number per tool object, so a pool is known by the very tools in it, not by names two sessions may share. */
const toolIds = new WeakMap<AnyTool, number>();
let nextToolId = 0;
const toolId = (tool: AnyTool) => {
  let id = toolIds.get(tool);
  if (id === undefined) toolIds.set(tool, (id = nextToolId++));
  return id;
};

/** The index of the last pool searched; rebuilt only when the pool changes (an MCP server connected). */
let cached: { key: string; index: MiniSearch; byName: Map<string, AnyTool> } | undefined;

function indexFor(tools: readonly AnyTool[]) {
  const key = tools.map(toolId).join(",");
  if (cached?.key === key) return cached;
  cached = { key, index: rebuild(tools), byName: new Map(tools.map((t) => [t.name, t])) };
  return cached;
}

/** BM25+ over three fields (MiniSearch's scoring), with prefix and light fuzzy matching of query words. */
function rebuild(tools: readonly AnyTool[]): MiniSearch {
  const index = new MiniSearch({
    idField: "id",
    fields: ["name", "description", "parameters"],
    searchOptions: { boost: FIELD_BOOST, prefix: true, fuzzy: 0.15, combineWith: "OR" },
  });
  index.addAll(
    tools.map((t) => ({
      id: t.name,
      name: `${nameWords(t.name)} ${t.name.toLowerCase()}`,
      description: t.description,
      parameters: parameterNames(t),
    })),
  );
  return index;
}

/** Ranks `tools` for `query`: names first, then descriptions and parameter names (BM25+). */
export function rankTools(tools: readonly AnyTool[], query: string, max: number): AnyTool[] {
  const { index, byName } = indexFor(tools);
  return index
    .search(query)
    .slice(0, max)
    .map((hit) => byName.get(hit.id as string)!);
}

function render(definitions: ToolDefinition[]): string {
  return definitions.map((d) => `<function>${JSON.stringify(d)}</function>`).join("\n");
}

export const toolSearchTool = defineTool({
  name: ToolName.ToolSearch,
  description: [
    "Finds tools by what they do and loads their full definitions, so you can call tools that were not listed up front (deferred tools, many MCP tools).",
    "",
    '- query: words describing the task ("create github issue", "screenshot browser"); tools are ranked by name, description and parameter names.',
    `- \`${SELECT_PREFIX}A,B\` loads exactly the tools named.`,
    "- The result holds each match's definition (name, description, input schema); call them by that name afterwards.",
  ].join("\n"),
  permissionLevel: PermissionLevel.None,
  inputSchema: z.strictObject({
    query: z.string().min(1).describe(`Words to search for, or "${SELECT_PREFIX}Name1,Name2".`),
    max_results: z
      .number()
      .int()
      .min(1)
      .max(MAX_TOOL_SEARCH_RESULTS)
      .default(DEFAULT_RESULTS)
      .describe("Most tools to return."),
  }),
  async execute(input, ctx) {
    const pool = searchable(ctx);
    const query = input.query.trim();
    let found: AnyTool[];
    if (query.startsWith(SELECT_PREFIX)) {
      const names = query
        .slice(SELECT_PREFIX.length)
        .split(",")
        .map((n) => n.trim())
        .filter(Boolean);
      const byName = new Map(pool.map((t) => [t.name, t]));
      const missing = names.filter((n) => !byName.has(n));
      if (missing.length > 0) {
        throw new InputError(
          `No tool named ${missing.map((n) => `"${n}"`).join(", ")} here. Search by words instead (query without "${SELECT_PREFIX}"), or pick from: ${pool.map((t) => t.name).join(", ")}.`,
        );
      }
      found = names.map((n) => byName.get(n)!);
    } else {
      found = rankTools(pool, query, input.max_results);
    }
    if (found.length === 0) {
      return ToolResult.success(
        `No tool matches "${query}". Try other words, or fewer of them; ${pool.length} tools are searchable.`,
        { tools: [] },
      );
    }
    const definitions = found.map((t) => t.toDefinition());
    return ToolResult.success(
      `${found.length} tool${found.length === 1 ? "" : "s"} loaded: ${found.map((t) => t.name).join(", ")}.\n<functions>\n${render(definitions)}\n</functions>`,
      // loadedTools: the agent loop sends these tools' definitions from the next request on.
      {
        tools: definitions,
        loadedTools: found.map((t) => t.name),
        deferred: found.filter((t) => t.deferred).map((t) => t.name),
      },
    );
  },
});
