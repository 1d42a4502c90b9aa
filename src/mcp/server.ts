import { inputRequired, type ListToolsResult, Server } from "@modelcontextprotocol/server";
import type { ToolContext } from "../core/context.js";
import { createHost, type Host, HostCapability } from "../core/host.js";
import { MAX_ARGUMENT_CHARS } from "../core/limits.js";
import { log } from "../core/log.js";
import type { McpManager } from "../core/mcp-manager.js";
import { ToolResult } from "../core/result.js";
import { Session } from "../core/session.js";
import { ToolName } from "../core/tool-names.js";
import { ArrivalOrder } from "../executor/arrival-order.js";
import { runTool } from "../executor/run.js";
import { inboxSlot, renderMessages } from "../messages/inbox.js";
import { autoHandler } from "../permissions/handlers.js";
import { callEnded, callStarted } from "../process/memory.js";
import { toMcpTools, toolsFor } from "../registry.js";
import { todoSlot } from "../tasks/todos.js";
import { toMcpResult } from "./content.js";
import type { DirectSession, PlainCall } from "./direct-calls.js";
import { elicitationHandler } from "./elicit.js";
import { elicitPlanApproval, elicitQuestions } from "./elicit-questions.js";
import { serverIdentity } from "./identity.js";
import { type CallRound, currentCall, LiveCall, WaitingCalls } from "./live-call.js";
import { type PostOffice, recipientName } from "./post-office.js";
import { progressChannel } from "./progress.js";

export { MAX_ARGUMENT_CHARS };

/** Builds the context one connection's calls run in: its own session, served by `host`. */
export type ContextFactory = (session: Session, host: Host) => ToolContext;

/**
 * One client connection: an SDK server instance and the tool session behind it. On stdio, plain calls of
 * a 2025-revision client are served without the SDK's dispatch (DirectSession, src/mcp/direct-calls.ts).
 */
export interface ToolSession extends DirectSession {
  readonly server: Server;
  readonly ctx: ToolContext;
  /** Aborts one running tools/call (its processes are killed); false when no such call is running. */
  cancel(requestId: string | number, reason: string): boolean;
  /** Ends the session: running calls are aborted and background jobs killed. */
  dispose(): Promise<void>;
}

export interface ToolSessionOptions {
  /** Quiet time before a call with a progress token gets a heartbeat; HEARTBEAT_INTERVAL_MS by default. */
  heartbeatMs?: number;
  /** How long a 2026-07-28 call waits for its client's answer; ELICITATION_TIMEOUT_MS by default. */
  answerTimeoutMs?: number;
  /** The sessions of this server that can message each other; without one, SendMessage is not offered. */
  postOffice?: PostOffice;
  /** The session to serve (a named one restored from disk); a fresh one by default. */
  session?: Session;
  /**
   * Called after every tools/call, to save a named session's state (work items, todos, mode); the result is
   * sent once it resolved, so what the client was told is on disk.
   */
  afterCall?: (session: Session) => Promise<void>;
  /** Called when the connection ends, before the session is disposed (a last save, releasing its name). */
  beforeDispose?: (session: Session) => Promise<void>;
}

/** Where a TodoWrite result carries the whole list for the client's UI (`_meta`, never shown to the model). */
export const TODOS_META_KEY = "cc-tools/todos";

/**
 * What an MCP connection can do for tools: permission asks, AskUserQuestion and plan approval through
 * elicitation (only when the client supports it), messages to the server's other sessions.
 */
export function mcpHost(
  clientAsks: () => boolean,
  postOffice?: PostOffice,
  ownName: () => string = () => "mcp",
): Host {
  const asksPeople = new Set<HostCapability>([HostCapability.Questions, HostCapability.PlanApproval]);
  return createHost(
    {
      name: "mcp",
      permissions: elicitationHandler(),
      interactive: clientAsks,
      askQuestions: elicitQuestions,
      approvePlan: elicitPlanApproval,
      ...(postOffice
        ? {
            deliverMessage: (message) => postOffice.deliver({ ...message, from: ownName() }),
            recipients: () => postOffice.recipients().filter((name) => name !== ownName()),
          }
        : {}),
      supports: (capability) => !asksPeople.has(capability) || clientAsks(),
    },
    autoHandler,
  );
}

/**
 * A server for one connection. Every tools/call goes through the one executor with this connection's
 * context, under the request's abort signal (so `notifications/cancelled` kills the call's processes).
 */
export function createToolSession(
  makeContext: ContextFactory,
  manager: McpManager | undefined,
  options: ToolSessionOptions = {},
): ToolSession {
  const session = options.session ?? new Session();
  const { serverInfo, capabilities, instructions } = serverIdentity();
  const server = new Server(serverInfo, { capabilities, instructions });
  const initializeElicits = () => Boolean(server.getClientCapabilities()?.elicitation);
  // Whether the person at this request's client can be asked: tools that ask are offered only then.
  const clientAsks = () => currentCall.getStore()?.elicits() ?? initializeElicits();
  let ordinal = 0;
  const ownName = () => recipientName(server.getClientVersion()?.name, ordinal);
  const mailbox = options.postOffice?.open((n) => recipientName(server.getClientVersion()?.name, n), session);
  ordinal = mailbox?.ordinal ?? 0;
  const host = mcpHost(clientAsks, options.postOffice, ownName);
  const ctx = makeContext(session, host);
  const inFlight = new Map<string | number, AbortController>();
  // Calls that ended a round with a question and wait for the client's answer (2026-07-28).
  const waiting = new WaitingCalls(options.answerTimeoutMs);
  // Pipelined calls run in arrival order where it matters (a Read before an Edit), reads in parallel.
  const order = new ArrivalOrder(ctx);

  // Our schemas are draft-07 objects; the SDK's type wants its own JSON value type.
  // Only tools that can work here are offered: no PowerShell where pwsh is not installed.
  server.setRequestHandler("tools/list", (_request, call) => ({
    tools: currentCall.run(new LiveCall(call, initializeElicits), () =>
      toMcpTools(toolsFor(ctx)),
    ) as ListToolsResult["tools"],
  }));

  /**
   * The call a tools/call round serves: a new one, or on 2026-07-28 the waiting call whose question the
   * round answers (its `requestState` names it); a string says why a retry resumes nothing.
   */
  function callFor(request: { name: string; arguments?: unknown }, call: CallRound): LiveCall | string {
    const called = { name: request.name, args: request.arguments ?? {} };
    const handle = call.mcpReq.requestState();
    if (typeof handle !== "string") return new LiveCall(call, initializeElicits, called);
    return waiting.resume(handle, called);
  }

  /** Runs a new call's tool through the one pipeline, in arrival order, its questions going through `live`. */
  function startRun(live: LiveCall, name: string, args: Record<string, unknown>, id: string | number) {
    live.start(
      order.run({ name, input: args }, live.controller.signal, async (place) => {
        live.enter(place);
        // A tool of another MCP server may be called before that server finished connecting.
        if (name.startsWith("mcp__")) await manager?.connect();
        return currentCall.run(live, () =>
          runTool(name, args, ctx, {
            signal: live.controller.signal,
            onProgress: live.reportProgress,
            toolUseId: `mcp_${String(id)}`,
          }),
        );
      }),
    );
  }

  server.setRequestHandler("tools/call", (request, call) => serveCall(request.params, call));

  /** Serves one round of a tools/call: the SDK's, or a direct one (src/mcp/direct-calls.ts). */
  async function serveCall(params: PlainCall, call: CallRound) {
    const { name } = params;
    const size = JSON.stringify(params.arguments ?? {}).length;
    if (size > MAX_ARGUMENT_CHARS) {
      return toMcpResult(
        ToolResult.rejected(
          `The arguments of ${name} are ${size} characters of JSON, more than the ${MAX_ARGUMENT_CHARS} (${MAX_ARGUMENT_CHARS / 1024 / 1024} MiB) an MCP call may carry, so nothing was run. ` +
            "Split the work: Write a first part, then add the rest with Edit calls, or produce large files with a command (Bash).",
        ),
      );
    }
    const live = callFor(params, call);
    if (typeof live === "string") return toMcpResult(ToolResult.rejected(live));
    const progress = progressChannel(
      call.mcpReq._meta?.progressToken,
      (n) => call.mcpReq.notify(n),
      options.heartbeatMs,
    );
    live.attach(call, progress);
    // Aborted by the client's cancellation of this round, by dispose() when the connection goes away, or
    // (while it waits for the client's retry) when its question expires.
    const { controller } = live;
    const onCancel = () => controller.abort(call.mcpReq.signal.reason ?? "cancelled by the client");
    if (call.mcpReq.signal.aborted) onCancel();
    call.mcpReq.signal.addEventListener("abort", onCancel, { once: true });
    inFlight.set(call.mcpReq.id, controller);
    callStarted();
    try {
      // A retry brings answers to the waiting run; a new call starts its run.
      if (live.run) live.takeAnswers(call.mcpReq.inputResponses);
      else startRun(live, name, params.arguments ?? {}, call.mcpReq.id);
      const outcome = await live.serveRound();
      if ("questions" in outcome) {
        // The run waits where it asked; the client asks its user and calls again with the answers.
        waiting.park(live);
        return inputRequired({ inputRequests: outcome.questions, requestState: live.handle });
      }
      return withSessionNews(name, outcome.result);
    } finally {
      await options.afterCall?.(session).catch((error) => log.error("could not save the session", error));
      progress.stop();
      inFlight.delete(call.mcpReq.id);
      call.mcpReq.signal.removeEventListener("abort", onCancel);
      // A large call's garbage is collected once the server is quiet (when the host enabled it).
      callEnded();
    }
  }

  /**
   * The round of a direct call, as the SDK would build it for a 2025-revision request: no envelope, no
   * answers of an earlier round; notifications and questions go through the SDK server.
   */
  function directRound(id: string | number, meta: PlainCall["_meta"], signal: AbortSignal): CallRound {
    return {
      mcpReq: {
        id,
        _meta: meta,
        signal,
        envelope: undefined,
        inputResponses: undefined,
        requestState: () => undefined,
        notify: (notification) => server.notification(notification, { relatedRequestId: id }),
        elicitInput: (form, options) => server.elicitInput(form, options),
      },
    };
  }

  /** Messages from other sessions ride on the next result; a TodoWrite result carries the list for the UI. */
  function withSessionNews(name: string, result: ToolResult) {
    const inbox = session.get(inboxSlot);
    const news = inbox.size > 0 ? renderMessages(inbox.take()) : undefined;
    const sent = toMcpResult(
      news ? { ...result, content: [...result.content, { type: "text", text: news }] } : result,
    );
    return name === ToolName.TodoWrite && !result.isError
      ? { ...sent, _meta: { [TODOS_META_KEY]: session.get(todoSlot).items } }
      : sent;
  }

  const unsubscribe = manager?.onToolsChanged(() => {
    server.sendToolListChanged().catch((error) => log.debug("could not send tools/list_changed", error));
  });

  let disposed: Promise<void> | undefined;
  return {
    server,
    ctx,
    servesDirect: () => server.getNegotiatedProtocolVersion() !== undefined,
    callDirect: (id, params, signal) => serveCall(params, directRound(id, params._meta, signal)),
    cancel(requestId, reason) {
      const controller = inFlight.get(requestId);
      controller?.abort(reason);
      return controller !== undefined;
    },
    dispose() {
      disposed ??= (async () => {
        unsubscribe?.();
        mailbox?.close();
        await options
          .beforeDispose?.(session)
          .catch((error) => log.error("could not save the session", error));
        for (const controller of inFlight.values()) controller.abort("the client disconnected");
        waiting.abortAll("the client disconnected");
        await session.dispose();
      })();
      return disposed;
    },
  };
}
