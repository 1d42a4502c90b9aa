import { constants } from "node:os";
import { type AgentTerminal, agentHost, MAIN_CONVERSATION } from "../agent/host.js";
import type { Agent, AgentEvent, AgentRunResult } from "../agent/loop.js";
import { costReport, totalCost } from "../agent/prices.js";
import { AgentRuntime, chooseModel, providerFromEnv } from "../agent/runtime.js";
import type { ToolContext } from "../core/context.js";
import { Session } from "../core/session.js";
import { runHooks } from "../hooks/run.js";
import { type Inbox, inboxSlot } from "../messages/inbox.js";
import { SettingsError, userConfigDir } from "../settings/load.js";
import type { AgentFlags } from "./commands/agent.js";
import { contextFromFlags } from "./common.js";

/** One `cc-tools agent` process: the model runtime, the main conversation and the context its tools run in. */
export interface AgentSession {
  runtime: AgentRuntime;
  agent: Agent;
  ctx: ToolContext;
  /** The main conversation's inbox: messages, sub-agents' answers and cron prompts wait here for a turn. */
  inbox: Inbox;
  model: string;
  /** Runs one prompt in print mode and writes the output; true when the agent finished normally. */
  print(prompt: string, format: AgentFlags["outputFormat"]): Promise<boolean>;
  /** Ends the session: SessionEnd hooks, background jobs and sub-agents stopped, MCP servers closed. */
  close(reason: "prompt_input_exit" | "other"): Promise<void>;
}

/** The `result` object of `--output-format json` (and the last line of stream-json), as Claude Code shapes it. */
function resultObject(result: AgentRunResult, ctx: ToolContext) {
  const error = result.stop !== "end_turn";
  return {
    type: "result",
    subtype:
      result.stop === "end_turn"
        ? "success"
        : result.stop === "max_turns"
          ? "error_max_turns"
          : "error_during_execution",
    is_error: error,
    result: result.text,
    num_turns: result.turns,
    duration_ms: result.durationMs,
    session_id: ctx.sessionId,
    total_cost_usd: Number(totalCost(ctx.costTracker).toFixed(6)),
    usage: {
      input_tokens: result.usage.inputTokens,
      output_tokens: result.usage.outputTokens,
      cache_read_input_tokens: result.usage.cacheReadTokens,
      cache_creation_input_tokens: result.usage.cacheWriteTokens,
    },
  };
}

export async function startAgentSession(
  flags: AgentFlags,
  terminal?: AgentTerminal,
): Promise<AgentSession | { usage: string }> {
  const configured = providerFromEnv(process.env, flags.provider);
  if ("missing" in configured) return { usage: `no model is configured. ${configured.missing}` };
  let ctx: ToolContext | undefined;
  let runtime: AgentRuntime;
  try {
    // Settings are read once for the model setting and once by the context; both are cheap.
    const { loadSettings } = await import("../settings/load.js");
    const { checkWorkingDir } = await import("./options.js");
    const settings = loadSettings(checkWorkingDir(flags.cwd));
    const model = chooseModel(flags.model, process.env, settings.raw.model);
    runtime = new AgentRuntime({
      provider: configured.provider,
      model,
      configDir: userConfigDir(),
      contextWindow: flags.contextWindow,
    });
    const host = agentHost({ runtime, mainContext: () => ctx, terminal });
    ctx = contextFromFlags(flags, { session: new Session(), host });
  } catch (error) {
    if (error instanceof SettingsError) return { usage: error.message };
    throw error;
  }
  const mainCtx = ctx;
  const start = await runHooks("SessionStart", { source: "startup" }, mainCtx, new AbortController().signal);
  const inbox = mainCtx.session.get(inboxSlot);
  const agent = await runtime.createAgent(mainCtx, { maxTurns: flags.maxTurns });
  // What SessionStart hooks said opens the conversation's context.
  if (start.feedback.length > 0) {
    inbox.deliver({ from: "SessionStart hook", to: MAIN_CONVERSATION, message: start.feedback.join("\n") });
  }

  const session: AgentSession = {
    runtime,
    agent,
    ctx: mainCtx,
    inbox,
    model: runtime.defaultModel,
    async print(prompt, format) {
      const controller = new AbortController();
      // The first SIGINT or SIGTERM cancels the run, which still reports and ends the session; a second one
      // exits at once. A listener stays for the whole run so the process-group cleanup does not re-raise the
      // signal (which would exit before the result is written).
      const onSignal = (signal: NodeJS.Signals) => {
        if (controller.signal.aborted) process.exit(128 + constants.signals[signal]);
        controller.abort("interrupted");
      };
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
      const line = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
      if (format === "stream-json") {
        line({
          type: "system",
          subtype: "init",
          session_id: mainCtx.sessionId,
          cwd: mainCtx.workingDir,
          model: runtime.defaultModel,
          tools: agent.toolNames(),
        });
      }
      const onEvent = (event: AgentEvent) => {
        if (format === "stream-json" && event.type === "message")
          line({ type: event.message.role, message: event.message, session_id: mainCtx.sessionId });
        if (event.type === "compacted") {
          if (format === "stream-json")
            line({
              type: "system",
              subtype: "compact_boundary",
              session_id: mainCtx.sessionId,
              compact_metadata: { trigger: "auto", pre_tokens: event.tokensBefore, how: event.how },
            });
          else
            process.stderr.write(
              `cc-tools agent: the conversation neared the context window; ${event.how === "elided" ? "old tool output was elided" : "the history was summarised"} (${event.tokensBefore} → ${event.tokensAfter} tokens)\n`,
            );
        }
        if (event.type === "retry")
          process.stderr.write(
            `cc-tools agent: the model API failed (${event.error}); retrying in ${Math.round(event.delayMs / 100) / 10} s\n`,
          );
      };
      let result: AgentRunResult;
      try {
        result = await agent.run(prompt, controller.signal, onEvent);
      } finally {
        process.removeListener("SIGINT", onSignal);
        process.removeListener("SIGTERM", onSignal);
      }
      if (format === "text") {
        if (result.stop === "end_turn") process.stdout.write(`${result.text}\n`);
        else process.stderr.write(`cc-tools agent: ${result.text}\n`);
        process.stderr.write(`${costReport(mainCtx.costTracker)}\n`);
      } else {
        line(resultObject(result, mainCtx));
      }
      await session.close("other");
      return result.stop === "end_turn";
    },
    async close(reason) {
      await runHooks("SessionEnd", { reason }, mainCtx, new AbortController().signal);
      await mainCtx.session.dispose();
      await mainCtx.mcpManager?.close();
    },
  };
  return session;
}
