import { AsyncLocalStorage } from "node:async_hooks";
import type { ServerContext } from "@modelcontextprotocol/server";
import { errorMessage } from "../core/errors.js";
import { autoHandler, howToAllow } from "../permissions/handlers.js";
import type { PermissionAnswer, PermissionHandler, PermissionRequest } from "../permissions/types.js";

/** How long a permission question may wait for the person at the client. */
export const ELICITATION_TIMEOUT_MS = 10 * 60_000;

const CHOICES = {
  allow_once: "allow this call",
  allow_session: "allow calls like it for this session",
  allow_always: "always allow (saves the rule to the project's local settings)",
  deny: "deny",
} as const;

type Choice = keyof typeof CHOICES;

/** The tools/call request being served, so a question can travel on that request's stream. */
export const currentRequest = new AsyncLocalStorage<ServerContext>();

/** Remembering an answer needs a rule that expresses it; without one, only "once" or "deny" make sense. */
function choicesFor(request: PermissionRequest): Choice[] {
  const all = Object.keys(CHOICES) as Choice[];
  return request.suggestedRules.length > 0 ? all : ["allow_once", "deny"];
}

function question(request: PermissionRequest): string {
  const input = JSON.stringify(request.input);
  const shown = input.length > 500 ? `${input.slice(0, 500)}…` : input;
  const options = choicesFor(request)
    .map((value) => `${value}: ${CHOICES[value]}`)
    .join("; ");
  return `cc-tools wants to run ${request.toolName} ${shown}\n${request.reason}. ${howToAllow(request)}\nChoose ${options}.`;
}

function answerFor(choice: unknown, request: PermissionRequest): PermissionAnswer {
  switch (choice as Choice) {
    case "allow_once":
      return { behavior: "allow", scope: "once" };
    case "allow_session":
      return { behavior: "allow", scope: "session" };
    case "allow_always":
      return { behavior: "allow", scope: "always" };
    default:
      return {
        behavior: "deny",
        message: `The user denied ${request.toolName} when asked through the MCP client.`,
      };
  }
}

/**
 * Asks the person at the MCP client through elicitation when the client supports it; otherwise (or on a
 * protocol revision without server-to-client requests) falls back to the non-interactive answer, which
 * names the rule or flag that would allow the call.
 */
export function elicitationHandler(clientSupportsElicitation: () => boolean): PermissionHandler {
  return {
    name: "mcp-elicitation",
    interactive: true,
    async ask(request, signal) {
      const call = currentRequest.getStore();
      if (!call || !clientSupportsElicitation()) return autoHandler.ask(request, signal);
      let result: Awaited<ReturnType<ServerContext["mcpReq"]["elicitInput"]>>;
      try {
        result = await call.mcpReq.elicitInput(
          {
            mode: "form",
            message: question(request),
            requestedSchema: {
              type: "object",
              properties: {
                decision: {
                  type: "string",
                  title: `Allow ${request.toolName}?`,
                  enum: choicesFor(request),
                  default: "allow_once",
                },
              },
              required: ["decision"],
            },
          },
          { signal, timeout: ELICITATION_TIMEOUT_MS },
        );
      } catch (error) {
        if (signal.aborted)
          return { behavior: "deny", message: "The call was cancelled while waiting for permission." };
        const fallback = await autoHandler.ask(request, signal);
        return fallback.behavior === "deny"
          ? {
              behavior: "deny",
              message:
                `Asking through the MCP client failed (${errorMessage(error)}). ${fallback.message ?? ""}`.trim(),
            }
          : fallback;
      }
      if (result.action !== "accept") {
        return {
          behavior: "deny",
          message: `The user ${result.action === "decline" ? "declined" : "dismissed"} the request to run ${request.toolName}. ${howToAllow(request)}`,
        };
      }
      return answerFor(result.content?.decision, request);
    },
  };
}
