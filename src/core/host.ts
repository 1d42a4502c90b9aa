import type { ToolContext } from "./context.js";
import type { Usage } from "./cost.js";
import type { PermissionAnswer, PermissionHandler, PermissionRequest } from "./permission.js";
import type { PermissionMode } from "./permission-level.js";

/**
 * What a host (the CLI, the MCP server, the agent loop, an embedding application) can do for its tools
 * beyond running them. Tools that need one of these declare it (`requires`), and a tool set offers a tool
 * only where its host provides what it needs, so a model never sees a tool that can only fail.
 */
export const HostCapability = {
  /** A person answers permission questions (the terminal, MCP elicitation). */
  PermissionPrompt: "permissionPrompt",
  /** A person answers multiple-choice questions (AskUserQuestion). */
  Questions: "questions",
  /** A person approves a plan (ExitPlanMode). */
  PlanApproval: "planApproval",
  /** Messages reach other conversations of the same host (SendMessage). */
  Messages: "messages",
  /** Prompts can be run later as turns of a conversation (cron jobs). */
  Prompts: "prompts",
  /** A model is configured (Task sub-agents, WebFetch's prompt). */
  Model: "model",
} as const;

export type HostCapability = (typeof HostCapability)[keyof typeof HostCapability];

/** One AskUserQuestion question, as Claude Code's tool takes it. */
export interface UserQuestion {
  question: string;
  header: string;
  options: Array<{ label: string; description: string }>;
  multiSelect: boolean;
}

/** Answers keyed by question text (several labels of a multi-select joined with ", "); undefined when nobody answered. */
export type QuestionAnswers = Record<string, string> | undefined;

export type PlanDecision =
  | {
      approved: true /** The mode to continue in; the one before plan mode by default. */;
      mode?: PermissionMode;
    }
  | { approved: false; feedback?: string };

/** A message between conversations of one host. */
export interface HostMessage {
  from: string;
  to: string;
  message: string;
  summary?: string;
}

/** Where a prompt run by the host came from. */
export interface PromptOrigin {
  kind: "cron" | "message";
  /** The cron job's or the sender's id. */
  id: string;
}

/** What Task asks of a host with a model: a sub-agent run (a new one, or one continued by id). */
export interface SubagentRequest {
  description: string;
  prompt: string;
  /** `general-purpose`, `Explore`, `Plan`, or a custom agent's name. */
  subagentType: string;
  /** A model alias (sonnet, opus, haiku) or id; the agent type's or the host's default otherwise. */
  model?: string;
  /** The id the sub-agent answers to (SendMessage's `to`); a fresh one when absent. */
  name?: string;
  /** A working directory of its own (an isolated git worktree), when not the parent's. */
  workingDir?: string;
  /** The permission mode the sub-agent starts in; the parent's by default. */
  mode?: string;
}

export interface SubagentResult {
  agentId: string;
  /** The sub-agent's final answer. */
  text: string;
  isError: boolean;
  inputTokens: number;
  outputTokens: number;
  toolUses: number;
  durationMs: number;
}

/** A configured model, for tools that need one answer from it or a whole sub-agent run. */
export interface ModelAccess {
  /** The model a call uses when it names none. */
  readonly defaultModel: string;
  /** A small, fast model's answer to one prompt (WebFetch applies its `prompt` with it). */
  complete(
    request: { system?: string; prompt: string; model?: string; maxTokens?: number },
    signal: AbortSignal,
  ): Promise<{ text: string; model: string; usage: Usage }>;
  /**
   * Runs a sub-agent to its final answer under `parent` (its hooks, rules and sandbox apply); `onProgress`
   * hears a line per step. An unknown agent type is an error result that lists the known ones.
   */
  runSubagent(
    request: SubagentRequest,
    parent: ToolContext,
    signal: AbortSignal,
    onProgress?: (line: string) => void,
  ): Promise<SubagentResult>;
}

export interface Host {
  readonly name: string;
  /** Whether the host can do this now; an MCP client's support for elicitation is known only once it connected. */
  supports(capability: HostCapability): boolean;
  /** Always answers: a host with nobody to ask denies, saying how the call could be allowed. */
  askPermission(request: PermissionRequest, signal: AbortSignal): Promise<PermissionAnswer>;
  askQuestions?(questions: readonly UserQuestion[], signal: AbortSignal): Promise<QuestionAnswers>;
  approvePlan?(plan: string, signal: AbortSignal): Promise<PlanDecision>;
  /** Delivers a message; false when the host knows no such recipient. */
  deliverMessage?(message: HostMessage): boolean;
  /** Names of the recipients deliverMessage reaches. */
  recipients?(): string[];
  runPrompt?(prompt: string, origin: PromptOrigin): Promise<void>;
  readonly model?: ModelAccess;
}

export interface HostParts {
  name?: string;
  /** Asks about permissions; a host without one has nobody to ask. */
  permissions?: PermissionHandler;
  /** True when `permissions` reaches a person (the terminal, elicitation), false for a policy (allow-all). */
  interactive?: boolean | (() => boolean);
  askQuestions?: Host["askQuestions"];
  approvePlan?: Host["approvePlan"];
  deliverMessage?: Host["deliverMessage"];
  recipients?: Host["recipients"];
  runPrompt?: Host["runPrompt"];
  model?: ModelAccess;
  /** Narrows what the parts alone would offer (an MCP client that turns out not to support elicitation). */
  supports?: (capability: HostCapability) => boolean;
}

/**
 * Builds a host from the operations it has: a capability is offered when its operation is there (and the
 * `supports` override, if any, agrees). `fallback` answers permission questions when there is no handler.
 */
export function createHost(parts: HostParts, fallback: PermissionHandler): Host {
  const handler = parts.permissions ?? fallback;
  const interactive = () =>
    parts.permissions !== undefined &&
    (typeof parts.interactive === "function" ? parts.interactive() : (parts.interactive ?? false));
  const present: Record<HostCapability, () => boolean> = {
    permissionPrompt: interactive,
    questions: () => parts.askQuestions !== undefined,
    planApproval: () => parts.approvePlan !== undefined,
    messages: () => parts.deliverMessage !== undefined,
    prompts: () => parts.runPrompt !== undefined,
    model: () => parts.model !== undefined,
  };
  return {
    name: parts.name ?? handler.name,
    supports: (capability) => present[capability]() && (parts.supports?.(capability) ?? true),
    askPermission: (request, signal) => handler.ask(request, signal),
    askQuestions: parts.askQuestions,
    approvePlan: parts.approvePlan,
    deliverMessage: parts.deliverMessage,
    recipients: parts.recipients,
    runPrompt: parts.runPrompt,
    model: parts.model,
  };
}

/** `host` with a model: a host that serves tools (the MCP server) gains Task and WebFetch's prompt. */
export function withModel(host: Host, model: ModelAccess): Host {
  return {
    ...host,
    model,
    supports: (capability) => capability === HostCapability.Model || host.supports(capability),
  };
}
