import type { ToolContext } from "./core/context.js";
import { closestNames } from "./core/similarity.js";
import type { AnyTool, ToolDefinition } from "./core/tool.js";
import { ToolSet, type UnavailableTool } from "./core/toolset.js";
import { agentTools } from "./tools/agent/index.js";
import { fileTools } from "./tools/file/index.js";
import { mcpTools } from "./tools/mcp/index.js";
import { metaTools } from "./tools/meta/index.js";
import { planTools } from "./tools/plan/index.js";
import { scheduleTools } from "./tools/schedule/index.js";
import { searchTools } from "./tools/search/index.js";
import { shellTools } from "./tools/shell/index.js";
import { tasksTools } from "./tools/tasks/index.js";
import { webTools } from "./tools/web/index.js";
import { workTools } from "./tools/work/index.js";
import { worktreeTools } from "./tools/worktree/index.js";

let builtins: ToolSet | undefined;

/** Every built-in tool as one set, in a stable order. */
export function builtinTools(): ToolSet {
  builtins ??= ToolSet.of([
    ...fileTools,
    ...shellTools,
    ...tasksTools,
    ...searchTools,
    ...webTools,
    ...mcpTools,
    ...agentTools,
    ...workTools,
    ...planTools,
    ...worktreeTools,
    ...scheduleTools,
    ...metaTools,
  ]);
  return builtins;
}

/** Every built-in tool, in a stable order. */
export function allTools(): readonly AnyTool[] {
  return builtinTools().tools;
}

type ToolSource = Pick<ToolContext, "tools" | "mcpManager">;

/**
 * Finds a tool by its exact (case-sensitive) name or alias: in the context's set (built-ins for its agent
 * plus the embedder's own) and the session's MCP tools (`mcp__server__tool`), or among the built-ins.
 */
export function findTool(name: string, ctx?: ToolSource): AnyTool | undefined {
  if (!ctx) return builtinTools().get(name);
  return ctx.tools.get(name) ?? ctx.mcpManager?.tools().find((t) => t.name === name);
}

/** The same tool, marked deferred: its definition is left for ToolSearch to bring in. */
const deferredCopies = new WeakMap<AnyTool, AnyTool>();
function deferred(tool: AnyTool): AnyTool {
  if (tool.deferred) return tool;
  let copy = deferredCopies.get(tool);
  if (!copy) {
    copy = { ...tool, deferred: true };
    deferredCopies.set(tool, copy);
  }
  return copy;
}

/**
 * The tools a context offers its model: those its host can serve, then the session's MCP tools (those past
 * `deferMcpToolsAfter` deferred, so only ToolSearch brings their schemas in).
 */
export function toolsFor(
  ctx: Pick<ToolContext, "tools" | "mcpManager" | "host"> & { deferMcpToolsAfter?: number },
): AnyTool[] {
  const { available } = ctx.tools.availableFor(ctx.host);
  const mcp = ctx.mcpManager?.tools() ?? [];
  const limit = ctx.deferMcpToolsAfter;
  const shown = limit === undefined ? mcp : mcp.map((t, i) => (i < limit ? t : deferred(t)));
  return [...available.tools, ...shown];
}

/** The context's tools its host cannot serve, each with the reason (for `cc-tools list`). */
export function unavailableTools(ctx: Pick<ToolContext, "tools" | "host">): UnavailableTool[] {
  return ctx.tools.availableFor(ctx.host).unavailable;
}

/** Names close to `name`, for "did you mean" in unknown-tool errors. */
export function closestToolNames(name: string, candidates: readonly string[], max = 3): string[] {
  return closestNames(name, candidates, max);
}

type ToolsInput = ToolSet | readonly AnyTool[] | Pick<ToolContext, "tools" | "mcpManager" | "host">;

/** The tools a provider format covers: a set, a list, or what a context offers (its own tools included). */
function toolList(source: ToolsInput): readonly AnyTool[] {
  if (source instanceof ToolSet) return source.tools;
  if (Array.isArray(source)) return source;
  return toolsFor(source as Pick<ToolContext, "tools" | "mcpManager" | "host">);
}

/** Definitions are computed once per set; lists and contexts (whose MCP tools change) are computed per call. */
function derive<T>(source: ToolsInput, key: string, compute: (tools: readonly AnyTool[]) => T): T {
  return source instanceof ToolSet ? source.memo(key, compute) : compute(toolList(source));
}

/**
 * Anthropic Messages API `tools`: deferred tools are left for ToolSearch to bring in (those in `loaded` it
 * already brought); the last definition carries the prompt-cache breakpoint.
 */
export function toAnthropicTools(
  source: ToolsInput = builtinTools(),
  options: { loaded?: ReadonlySet<string> } = {},
): Array<ToolDefinition & { cache_control?: { type: "ephemeral" } }> {
  const compute = (all: readonly AnyTool[]) => {
    const tools = all.filter((t) => !t.deferred || options.loaded?.has(t.name));
    return tools.map((t, i) =>
      i === tools.length - 1
        ? { ...t.toDefinition(), cache_control: { type: "ephemeral" as const } }
        : t.toDefinition(),
    );
  };
  return options.loaded?.size ? compute(toolList(source)) : derive(source, "anthropic", compute);
}

/** OpenAI Chat Completions `tools` (deferred tools left out, as for Anthropic). */
export function toOpenAITools(source: ToolsInput = builtinTools()) {
  return derive(source, "openai", (all) =>
    all
      .filter((t) => !t.deferred)
      .map((t) => {
        const d = t.toDefinition();
        return {
          type: "function" as const,
          function: { name: d.name, description: d.description, parameters: d.input_schema },
        };
      }),
  );
}

/** MCP `tools/list` entries. */
export function toMcpTools(source: ToolsInput = builtinTools()) {
  return derive(source, "mcp", (tools) =>
    tools.map((t) => {
      const d = t.toDefinition();
      // Hints let clients treat reads differently (auto-approve them, say); they describe, they do not enforce.
      const readOnly = t.readOnly ?? (t.permissionLevel === "none" || t.permissionLevel === "readOnly");
      return {
        name: d.name,
        description: d.description,
        inputSchema: d.input_schema,
        annotations: { readOnlyHint: readOnly, destructiveHint: !readOnly },
      };
    }),
  );
}
