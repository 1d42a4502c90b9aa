import { ToolError } from "../core/errors.js";
import type { PlanDecision, QuestionAnswers, UserQuestion } from "../core/host.js";
import { currentCall, type Form, type FormAnswer, NobodyToAsk } from "./live-call.js";

/** Asks the person at the client through the call being served; nobody to ask is the call's error. */
async function askForm(form: Form, signal: AbortSignal): Promise<FormAnswer> {
  const call = currentCall.getStore();
  if (!call) throw new ToolError("There is no client request to ask on, so nobody could be asked.");
  try {
    return await call.ask(form, signal);
  } catch (error) {
    if (error instanceof NobodyToAsk) throw new ToolError(`Nobody could be asked: ${error.message}.`);
    throw error;
  }
}

/**
 * AskUserQuestion over MCP elicitation: one form, a choice per question (several for multiSelect) and an
 * optional free-text answer. Undefined when the user declines or cancels.
 */
export async function elicitQuestions(
  questions: readonly UserQuestion[],
  signal: AbortSignal,
): Promise<QuestionAnswers> {
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
  const result = await askForm(
    {
      mode: "form",
      message:
        questions.length === 1 ? questions[0]!.question : `The agent has ${questions.length} questions.`,
      requestedSchema: { type: "object", properties } as Form["requestedSchema"],
    },
    signal,
  );
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
  const result = await askForm(
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
    signal,
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
