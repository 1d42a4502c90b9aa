import type { ServerContext } from "@modelcontextprotocol/server";
import type { PlanDecision, QuestionAnswers, UserQuestion } from "../core/host.js";
import { currentRequest, ELICITATION_TIMEOUT_MS } from "./elicit.js";

type RequestedSchema = Parameters<ServerContext["mcpReq"]["elicitInput"]>[0] & { mode: "form" };

/** The request being served, or undefined when there is none to ask on (then nobody answers). */
function request(): ServerContext | undefined {
  return currentRequest.getStore();
}

/**
 * AskUserQuestion over MCP elicitation: one form, a choice per question (several for multiSelect) and an
 * optional free-text answer. Undefined when the user declines or cancels.
 */
export async function elicitQuestions(
  questions: readonly UserQuestion[],
  signal: AbortSignal,
): Promise<QuestionAnswers> {
  const call = request();
  if (!call) return undefined;
  const properties: Record<string, unknown> = {};
  questions.forEach((q, i) => {
    const choices = q.options.map((o) => ({
      const: o.label,
      title: o.description ? `${o.label}: ${o.description}` : o.label,
    }));
    properties[`q${i + 1}`] = q.multiSelect
      ? { type: "array", title: q.header, description: q.question, items: { anyOf: choices } }
      : { type: "string", title: q.header, description: q.question, oneOf: choices };
    properties[`q${i + 1}_other`] = {
      type: "string",
      title: `${q.header}: other`,
      description: "Or answer in your own words (used instead of the choice).",
    };
  });
  const params: RequestedSchema = {
    mode: "form",
    message: questions.length === 1 ? questions[0]!.question : `The agent has ${questions.length} questions.`,
    requestedSchema: { type: "object", properties } as RequestedSchema["requestedSchema"],
  };
  const result = await call.mcpReq.elicitInput(params, { signal, timeout: ELICITATION_TIMEOUT_MS });
  if (result.action !== "accept" || !result.content) return undefined;
  const answers: Record<string, string> = {};
  questions.forEach((q, i) => {
    const other = result.content?.[`q${i + 1}_other`];
    const choice = result.content?.[`q${i + 1}`];
    const text =
      typeof other === "string" && other.trim()
        ? other.trim()
        : Array.isArray(choice)
          ? choice.join(", ")
          : typeof choice === "string"
            ? choice
            : "";
    if (text) answers[q.question] = text;
  });
  return Object.keys(answers).length > 0 ? answers : undefined;
}

/** ExitPlanMode's approval over MCP elicitation: approve or not, with feedback. */
export async function elicitPlanApproval(plan: string, signal: AbortSignal): Promise<PlanDecision> {
  const call = request();
  if (!call) return { approved: false, feedback: "There was no client request to ask on." };
  const result = await call.mcpReq.elicitInput(
    {
      mode: "form",
      message: `The agent's plan:\n\n${plan}\n\nApprove it and leave plan mode?`,
      requestedSchema: {
        type: "object",
        properties: {
          approve: { type: "boolean", title: "Approve the plan", default: true },
          feedback: {
            type: "string",
            title: "Feedback",
            description: "What should change (when not approving).",
          },
        },
        required: ["approve"],
      },
    },
    { signal, timeout: ELICITATION_TIMEOUT_MS },
  );
  if (result.action !== "accept") {
    return {
      approved: false,
      feedback: `The user ${result.action === "decline" ? "declined" : "dismissed"} the plan.`,
    };
  }
  const feedback = typeof result.content?.feedback === "string" ? result.content.feedback : undefined;
  return result.content?.approve === true ? { approved: true } : { approved: false, feedback };
}
