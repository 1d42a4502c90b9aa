import { join } from "node:path";
import * as z from "zod";
import { InputError } from "../../core/errors.js";
import { HostCapability, type SubagentRequest, type SubagentResult } from "../../core/host.js";
import { MODE_REACH, PermissionLevel, type PermissionMode } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { startBackgroundSubagent } from "../../tasks/subagent-task.js";
import { addWorktree, repositoryRoot, WORKTREES_DIR } from "../worktree/git.js";

const inputSchema = z.strictObject({
  description: z.string().describe("A short (3-5 word) description of the task"),
  prompt: z.string().describe("The task for the agent to perform"),
  subagent_type: z
    .string()
    .optional()
    .describe(
      "The type of agent: general-purpose (default), Explore, Plan, or a custom agent from .claude/agents",
    ),
  model: z
    .enum(["sonnet", "opus", "haiku", "fable"])
    .optional()
    .describe("The model for this agent; the agent type's or the session's otherwise"),
  run_in_background: z
    .boolean()
    .optional()
    .describe(`Run the agent in the background; read its progress and answer with ${ToolName.TaskOutput}`),
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/)
    .optional()
    .describe(`A name for the agent, so ${ToolName.SendMessage} can address it`),
  team_name: z
    .string()
    .optional()
    .describe("A label recorded with the agent, grouping agents that work together"),
  mode: z
    .enum(["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"])
    .optional()
    .describe("The agent's permission mode; never more permissive than yours"),
  isolation: z
    .enum(["worktree", "remote"])
    .optional()
    .describe("worktree: the agent works in its own git worktree, so its edits do not touch your files"),
});

function subagentMode(requested: string | undefined, parent: PermissionMode): PermissionMode | undefined {
  if (!requested || requested === "auto") return undefined;
  const mode = requested as PermissionMode;
  if (MODE_REACH[mode] > MODE_REACH[parent]) {
    throw new InputError(
      `A sub-agent cannot run in ${mode} mode while you run in ${parent} mode: it may not be allowed more than you. Leave mode out, or choose ${parent} or a stricter one.`,
    );
  }
  return mode;
}

/** A new git worktree (and branch) for an isolated sub-agent, under the repository's .claude/worktrees. */
async function isolatedWorktree(workingDir: string, name: string): Promise<string> {
  let root: string;
  try {
    root = await repositoryRoot(workingDir);
  } catch {
    throw new InputError(
      `isolation "worktree" needs a git repository, and ${workingDir} is not in one. Leave isolation out.`,
    );
  }
  const path = join(root, WORKTREES_DIR, name);
  await addWorktree(root, path, `agent/${name}`);
  return path;
}

function usageLine(result: SubagentResult): string {
  return [
    `agentId: ${result.agentId} (to give this agent more work, use ${ToolName.SendMessage} with to: "${result.agentId}")`,
    `<usage>total_tokens: ${result.inputTokens + result.outputTokens}`,
    `tool_uses: ${result.toolUses}`,
    `duration_ms: ${result.durationMs}</usage>`,
  ].join("\n");
}

export const taskTool = defineTool({
  name: ToolName.Task,
  aliases: ["Agent"],
  description: `Starts a sub-agent: a fresh conversation with its own context that works on one task with tools and reports back.

- Use it for broad searches and multi-step work whose details you do not need to keep in your own context: say exactly what to find or do and what to report.
- subagent_type picks the agent: general-purpose (every tool but ${ToolName.Task}), Explore (read-only, for finding and reading code), Plan (read-only, writes a plan), or a custom agent defined in .claude/agents/*.md.
- The result is the agent's final answer and its id; ${ToolName.SendMessage} to that id continues the same agent later.
- run_in_background returns at once with a task id: read the agent's progress and answer with ${ToolName.TaskOutput}, stop it with ${ToolName.TaskStop}.
- The agent's tool calls go through the same permission rules, hooks and sandbox as yours, and it never runs in a more permissive mode than you.`,
  permissionLevel: PermissionLevel.None,
  requires: [HostCapability.Model],
  inputSchema,
  isConcurrencySafe: () => true,
  async execute(input, ctx) {
    const model = ctx.host.model!;
    const mode = subagentMode(input.mode, ctx.permissionMode);
    if (input.isolation === "remote") {
      throw new InputError(
        `isolation "remote" is not available here: agents run on this machine. Use "worktree" or leave it out.`,
      );
    }
    const name = input.name ?? `agent-${Date.now().toString(36)}`;
    const workingDir =
      input.isolation === "worktree" ? await isolatedWorktree(ctx.workingDir, name) : undefined;
    const request: SubagentRequest = {
      description: input.description,
      prompt: input.prompt,
      subagentType: input.subagent_type ?? "general-purpose",
      model: input.model,
      ...(input.name || workingDir ? { name } : {}),
      ...(mode ? { mode } : {}),
      ...(workingDir ? { workingDir } : {}),
    };
    const meta = { subagentType: request.subagentType, teamName: input.team_name, worktree: workingDir };
    if (input.run_in_background) {
      const task = startBackgroundSubagent(ctx, request, (signal, onProgress) =>
        model.runSubagent(request, ctx, signal, onProgress),
      );
      return ToolResult.success(
        `Started the ${request.subagentType} agent "${input.description}" in the background as task ${task.id}. Read its progress and final answer with ${ToolName.TaskOutput} (task_id "${task.id}"); stop it with ${ToolName.TaskStop}.`,
        { ...meta, taskId: task.id },
      );
    }
    const result = await model.runSubagent(request, ctx, ctx.signal, (line) =>
      ctx.reportProgress({ progress: 0, message: line }),
    );
    if (result.isError && !result.agentId) return ToolResult.error(result.text, meta);
    const blocks = [
      { type: "text" as const, text: result.text || "(the agent gave no final answer)" },
      { type: "text" as const, text: usageLine(result) },
    ];
    return result.isError
      ? { content: blocks, isError: true, metadata: { ...meta, agentId: result.agentId } }
      : ToolResult.success(blocks, { ...meta, agentId: result.agentId });
  },
});
