import type { ToolContext } from "./core/context.js";
import type { AnyTool, ToolDefinition } from "./core/tool.js";
import { fileTools } from "./tools/file/index.js";
import { mcpTools } from "./tools/mcp/index.js";
import { searchTools } from "./tools/search/index.js";
import { shellTools } from "./tools/shell/index.js";
import { tasksTools } from "./tools/tasks/index.js";
import { webTools } from "./tools/web/index.js";

let builtins: readonly AnyTool[] | undefined;
let byName: Map<string, AnyTool> | undefined;

/** Every built-in tool, in a stable order. */
export function allTools(): readonly AnyTool[] {
  builtins ??= [...fileTools, ...shellTools, ...tasksTools, ...searchTools, ...webTools, ...mcpTools];
  return builtins;
}

function index(): Map<string, AnyTool> {
  if (!byName) {
    byName = new Map();
    for (const tool of allTools()) {
      byName.set(tool.name, tool);
      for (const alias of tool.aliases) byName.set(alias, tool);
    }
  }
  return byName;
}

type ToolSource = Partial<Pick<ToolContext, "mcpManager" | "extraTools">>;

/**
 * Finds a tool by its exact (case-sensitive) name or alias. With a context, the context's own tools and
 * the session's MCP tools (`mcp__server__tool`) are found too.
 */
export function findTool(name: string, ctx?: ToolSource): AnyTool | undefined {
  const builtin = index().get(name);
  if (builtin) return builtin;
  const extra = ctx?.extraTools?.find((t) => t.name === name || t.aliases.includes(name));
  if (extra) return extra;
  return ctx?.mcpManager?.tools().find((t) => t.name === name);
}

/** Built-in tools plus the context's own tools and the session's MCP tools. */
export function toolsFor(ctx?: ToolSource): AnyTool[] {
  return [...allTools(), ...(ctx?.extraTools ?? []), ...(ctx?.mcpManager?.tools() ?? [])];
}

/** Names close to `name`, for "did you mean" in unknown-tool errors. */
export function closestToolNames(name: string, candidates: readonly string[], max = 3): string[] {
  const lower = name.toLowerCase();
  return candidates
    .map((c) => ({ c, d: c.toLowerCase() === lower ? 0 : editDistance(lower, c.toLowerCase()) }))
    .filter(({ c, d }) => d <= Math.max(2, Math.floor(c.length / 3)) || c.toLowerCase().includes(lower))
    .sort((a, b) => a.d - b.d)
    .slice(0, max)
    .map(({ c }) => c);
}

export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

/** Anthropic Messages API `tools`: the last definition carries the prompt-cache breakpoint. */
export function toAnthropicTools(
  tools: readonly AnyTool[] = allTools(),
): Array<ToolDefinition & { cache_control?: { type: "ephemeral" } }> {
  return tools.map((t, i) =>
    i === tools.length - 1
      ? { ...t.toDefinition(), cache_control: { type: "ephemeral" as const } }
      : t.toDefinition(),
  );
}

/** OpenAI Chat Completions `tools`. */
export function toOpenAITools(tools: readonly AnyTool[] = allTools()) {
  return tools.map((t) => {
    const d = t.toDefinition();
    return {
      type: "function" as const,
      function: { name: d.name, description: d.description, parameters: d.input_schema },
    };
  });
}

/** MCP `tools/list` entries. */
export function toMcpTools(tools: readonly AnyTool[] = allTools()) {
  return tools.map((t) => {
    const d = t.toDefinition();
    // Hints let clients treat reads differently (auto-approve them, say); they describe, they do not enforce.
    const readOnly = t.permissionLevel === "none" || t.permissionLevel === "readOnly";
    return {
      name: d.name,
      description: d.description,
      inputSchema: d.input_schema,
      annotations: { readOnlyHint: readOnly, destructiveHint: !readOnly },
    };
  });
}
