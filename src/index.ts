/**
 * cc-tools as a library: the built-in tools, the one executor every call goes through, permissions and
 * settings. Hosts (the CLI, the MCP server, your agent) all use this same surface.
 */
export { createToolContext, hostFromHandler, type ToolContextOptions } from "./context.js";
export {
  type ForkOptions,
  forkContext,
  type Progress,
  type ToolCallContext,
  type ToolContext,
} from "./core/context.js";
export { CostTracker, type Usage } from "./core/cost.js";
export { InputError, ToolError } from "./core/errors.js";
export {
  createHost,
  type Host,
  HostCapability,
  type HostMessage,
  type HostParts,
  type ModelAccess,
  type PlanDecision,
  type PromptOrigin,
  type QuestionAnswers,
  type UserQuestion,
} from "./core/host.js";
export type { McpManager, McpResourceInfo, McpServerStatus } from "./core/mcp-manager.js";
export type {
  PermissionAnswer,
  PermissionDecision,
  PermissionHandler,
  PermissionRequest,
  PermissionRuleEntry,
} from "./core/permission.js";
export { PERMISSION_MODES, PermissionLevel, type PermissionMode } from "./core/permission-level.js";
export { type ContentBlock, type ImageBlock, type TextBlock, ToolResult } from "./core/result.js";
export { Session, type SessionOptions, type SessionSlot } from "./core/session.js";
export {
  type AnyTool,
  defineTool,
  type PermissionSubject,
  type Tool,
  type ToolDefinition,
  type ToolSpec,
} from "./core/tool.js";
export { DuplicateToolError, ToolSet, type UnavailableTool } from "./core/toolset.js";
export { runToolBatch, type ToolCall } from "./executor/batch.js";
export { type RunOptions, runTool } from "./executor/run.js";
export { Inbox, inboxSlot, renderMessages } from "./messages/inbox.js";
export {
  allowAllHandler,
  autoHandler,
  createTerminalHandler,
  denyAllHandler,
} from "./permissions/handlers.js";
export { usePrestartedShells } from "./process/prestart.js";
export {
  allTools,
  builtinTools,
  findTool,
  toAnthropicTools,
  toMcpTools,
  toOpenAITools,
  toolsFor,
  unavailableTools,
} from "./registry.js";
export { type Clock, type CronJob, CronScheduler, cronSlot, MAX_CRON_JOBS } from "./schedule/scheduler.js";
export { loadSettings, SettingsError } from "./settings/load.js";
export type { Settings, SettingsFile } from "./settings/types.js";
export { type Todo, TodoList, type TodoStatus, todoSlot } from "./tasks/todos.js";
export {
  type PromptAnswer,
  type PromptModel,
  type PromptRequest,
  setPromptModel,
} from "./web/apply-prompt.js";
