import type { ToolContext } from "../core/context.js";
import {
  createHost,
  type Host,
  type HostParts,
  type PlanDecision,
  type QuestionAnswers,
  type UserQuestion,
} from "../core/host.js";
import type { PermissionHandler } from "../core/permission.js";
import { inboxSlot } from "../messages/inbox.js";
import { autoHandler } from "../permissions/handlers.js";
import { startBackgroundSubagent } from "../tasks/subagent-task.js";
import type { AgentRuntime } from "./runtime.js";

/** The name the main conversation answers to (SendMessage's `to`). */
export const MAIN_CONVERSATION = "main";

/** A person at a terminal: how the agent's host asks them things. */
export interface AgentTerminal {
  permissions: PermissionHandler;
  askQuestions(questions: readonly UserQuestion[], signal: AbortSignal): Promise<QuestionAnswers>;
  approvePlan(plan: string, signal: AbortSignal): Promise<PlanDecision>;
}

/**
 * The agent CLI's host: the model (Task, WebFetch's prompt), a person when there is a terminal (permissions,
 * questions, plan approval), messages between the main conversation and its sub-agents, and cron prompts
 * delivered into the conversation.
 */
export function agentHost(options: {
  runtime: AgentRuntime;
  /** The main conversation's context, once it exists (sub-agents are found through its session). */
  mainContext: () => ToolContext | undefined;
  terminal?: AgentTerminal;
}): Host {
  const { runtime, terminal } = options;
  // What reaches the main conversation between its model calls: messages, sub-agents' answers, cron prompts.
  const toMain = (from: string, message: string, summary?: string) =>
    options.mainContext()?.session.get(inboxSlot).deliver({ from, to: MAIN_CONVERSATION, message, summary });
  const parts: HostParts = {
    name: terminal ? "agent (terminal)" : "agent (print)",
    permissions: terminal?.permissions ?? autoHandler,
    interactive: terminal !== undefined,
    model: runtime,
    recipients: () => {
      const ctx = options.mainContext();
      return [MAIN_CONVERSATION, ...(ctx ? runtime.subagents(ctx) : [])];
    },
    deliverMessage: (message) => {
      if (message.to === MAIN_CONVERSATION) {
        toMain(message.from, message.message, message.summary);
        return true;
      }
      const ctx = options.mainContext();
      if (!ctx || !runtime.subagents(ctx).includes(message.to)) return false;
      // The sub-agent works on the message as a background task of the session, so TaskList shows it,
      // TaskStop (or the session's end, Ctrl-C) stops it; its answer comes back as a message.
      const request = {
        description: `${message.to} on a message from ${message.from}`,
        prompt: message.message,
        subagentType: message.to,
        name: message.to,
      };
      startBackgroundSubagent(ctx, request, async (signal, onProgress) => {
        const result = await runtime.continueSubagent(ctx, message.to, message.message, signal, onProgress);
        if (!result) throw new Error(`the sub-agent ${message.to} is gone`);
        if (!signal.aborted) toMain(message.to, result.text);
        return result;
      });
      return true;
    },
    runPrompt: async (prompt, origin) => {
      toMain(`${origin.kind} ${origin.id}`, prompt, "scheduled prompt");
    },
  };
  if (terminal) {
    parts.askQuestions = (questions, signal) => terminal.askQuestions(questions, signal);
    parts.approvePlan = (plan, signal) => terminal.approvePlan(plan, signal);
  }
  return createHost(parts, autoHandler);
}
