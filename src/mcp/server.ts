import { type ListToolsResult, Server } from "@modelcontextprotocol/server";
import type { ToolContext } from "../core/context.js";
import { MAX_ARGUMENT_CHARS } from "../core/limits.js";
import { log } from "../core/log.js";
import type { McpManager } from "../core/mcp-manager.js";
import { ToolResult } from "../core/result.js";
import { Session } from "../core/session.js";
import { ArrivalOrder } from "../executor/arrival-order.js";
import { runTool } from "../executor/run.js";
import type { PermissionHandler } from "../permissions/types.js";
import { toMcpTools, toolsFor } from "../registry.js";
import { toMcpResult } from "./content.js";
import { currentRequest, elicitationHandler } from "./elicit.js";
import { serverIdentity } from "./identity.js";
import { progressChannel } from "./progress.js";

export { MAX_ARGUMENT_CHARS };

/** Builds the context one connection's calls run in: its own session, asking through `handler`. */
export type ContextFactory = (session: Session, handler: PermissionHandler) => ToolContext;

/** One client connection: an SDK server instance and the tool session behind it. */
export interface ToolSession {
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
  const session = new Session();
  const { serverInfo, capabilities, instructions } = serverIdentity();
  const server = new Server(serverInfo, { capabilities, instructions });
  const ctx = makeContext(
    session,
    elicitationHandler(() => Boolean(server.getClientCapabilities()?.elicitation)),
  );
  const inFlight = new Map<string | number, AbortController>();
  // Pipelined calls run in arrival order where it matters (a Read before an Edit), reads in parallel.
  const order = new ArrivalOrder(ctx);

  // Our schemas are draft-07 objects; the SDK's type wants its own JSON value type.
  server.setRequestHandler("tools/list", () => ({
    tools: toMcpTools(toolsFor(ctx)) as ListToolsResult["tools"],
  }));

  server.setRequestHandler("tools/call", async (request, call) => {
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    const size = JSON.stringify(args).length;
    if (size > MAX_ARGUMENT_CHARS) {
      return toMcpResult(
        ToolResult.rejected(
          `The arguments of ${name} are ${size} characters of JSON, more than the ${MAX_ARGUMENT_CHARS} (${MAX_ARGUMENT_CHARS / 1024 / 1024} MiB) an MCP call may carry, so nothing was run. ` +
            "Split the work: Write a first part, then add the rest with Edit calls, or produce large files with a command (Bash).",
        ),
      );
    }
    const progress = progressChannel(
      call.mcpReq._meta?.progressToken,
      (n) => call.mcpReq.notify(n),
      options.heartbeatMs,
    );
    // Aborted by the client's cancellation, or by dispose() when the connection goes away mid-call.
    const controller = new AbortController();
    const onCancel = () => controller.abort(call.mcpReq.signal.reason ?? "cancelled by the client");
    if (call.mcpReq.signal.aborted) onCancel();
    call.mcpReq.signal.addEventListener("abort", onCancel, { once: true });
    inFlight.set(call.mcpReq.id, controller);
    try {
      const result = await order.run({ name, input: args }, controller.signal, async () => {
        // A tool of another MCP server may be called before that server finished connecting.
        if (name.startsWith("mcp__")) await manager?.connect();
        return currentRequest.run(call, () =>
          runTool(name, args, ctx, {
            signal: controller.signal,
            onProgress: progress.report,
            toolUseId: `mcp_${String(call.mcpReq.id)}`,
          }),
        );
      });
      return toMcpResult(result);
    } finally {
      progress.stop();
      inFlight.delete(call.mcpReq.id);
      call.mcpReq.signal.removeEventListener("abort", onCancel);
    }
  });

  const unsubscribe = manager?.onToolsChanged(() => {
    server.sendToolListChanged().catch((error) => log.debug("could not send tools/list_changed", error));
  });

  let disposed: Promise<void> | undefined;
  return {
    server,
    ctx,
    cancel(requestId, reason) {
      const controller = inFlight.get(requestId);
      controller?.abort(reason);
      return controller !== undefined;
    },
    dispose() {
      disposed ??= (async () => {
        unsubscribe?.();
        for (const controller of inFlight.values()) controller.abort("the client disconnected");
        await session.dispose();
      })();
      return disposed;
    },
  };
}
