import type { Host, PlanDecision, QuestionAnswers, UserQuestion } from "../core/host.js";
import { createHost } from "../core/host.js";
import { autoHandler, createTerminalHandler } from "../permissions/handlers.js";

/** The value of the free-text choice every question offers besides its options. */
const OTHER = "\u0000other";

export interface TerminalStreams {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
}

/** One question as an arrow-key picker (several choices with space for multiSelect), plus a typed answer. */
async function ask(question: UserQuestion, io: TerminalStreams, signal: AbortSignal): Promise<string> {
  const { checkbox, input, select } = await import("@inquirer/prompts");
  const context = { input: io.input, output: io.output, signal };
  const choices = [
    ...question.options.map((o) => ({ name: o.label, value: o.label, description: o.description })),
    { name: "Other (type an answer)", value: OTHER, description: "Answer in your own words." },
  ];
  const message = `[${question.header}] ${question.question}`;
  const picked = question.multiSelect
    ? await checkbox({ message, choices, required: true }, context)
    : [await select({ message, choices }, context)];
  const typed = picked.includes(OTHER)
    ? await input({ message: "Your answer:", required: true }, context)
    : undefined;
  return [...picked.filter((p) => p !== OTHER), ...(typed ? [typed] : [])].join(", ");
}

async function askAll(
  questions: readonly UserQuestion[],
  io: TerminalStreams,
  signal: AbortSignal,
): Promise<QuestionAnswers> {
  const answers: Record<string, string> = {};
  try {
    for (const question of questions) answers[question.question] = await ask(question, io, signal);
  } catch (error) {
    // Ctrl-C, Escape or a cancelled call: nobody answered.
    if (
      signal.aborted ||
      (error as Error).name === "ExitPromptError" ||
      (error as Error).name === "AbortPromptError"
    ) {
      return undefined;
    }
    throw error;
  }
  return answers;
}

async function approve(plan: string, io: TerminalStreams, signal: AbortSignal): Promise<PlanDecision> {
  const { input, select } = await import("@inquirer/prompts");
  const context = { input: io.input, output: io.output, signal };
  const rule = "─".repeat(60);
  io.output.write(`\nThe agent's plan:\n${rule}\n${plan.trim()}\n${rule}\n`);
  try {
    const choice = await select(
      {
        message: "Approve this plan and leave plan mode?",
        choices: [
          { name: "Yes", value: "yes", description: "Return to the mode before plan mode." },
          { name: "Yes, and accept edits", value: "edits", description: "Continue in acceptEdits mode." },
          {
            name: "No, keep planning",
            value: "no",
            description: "Stay in plan mode and tell the agent why.",
          },
        ],
      },
      context,
    );
    if (choice === "yes") return { approved: true };
    if (choice === "edits") return { approved: true, mode: "acceptEdits" };
    const feedback = await input({ message: "What should change? (Enter to skip)" }, context);
    return { approved: false, feedback };
  } catch (error) {
    if (
      signal.aborted ||
      (error as Error).name === "ExitPromptError" ||
      (error as Error).name === "AbortPromptError"
    ) {
      return { approved: false, feedback: "The user dismissed the plan without answering." };
    }
    throw error;
  }
}

/**
 * The host `cc-tools run` serves a call with: a person at the terminal when stdin and stderr are both one,
 * outside CI, and the call's input is not read from stdin; otherwise none (the context's default, which
 * asks nobody: an ask becomes a denial that says why). `cc-tools list` shows what this host serves.
 */
export function runHost(inputFromStdin: boolean): Host | undefined {
  const interactive =
    !inputFromStdin && Boolean(process.stdin.isTTY && process.stderr.isTTY) && !process.env.CI;
  return interactive ? terminalHost({ input: process.stdin, output: process.stderr }) : undefined;
}

/**
 * The host of a person at a terminal: permission questions, AskUserQuestion as a picker, plan approval.
 * Questions are asked one at a time, never interleaved with each other.
 */
export function terminalHost(io: TerminalStreams): Host {
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(run: () => Promise<T>): Promise<T> => {
    const next = queue.then(run);
    queue = next.catch(() => undefined);
    return next;
  };
  return createHost(
    {
      name: "terminal",
      permissions: createTerminalHandler(io),
      interactive: true,
      askQuestions: (questions, signal) => serial(() => askAll(questions, io, signal)),
      approvePlan: (plan, signal) => serial(() => approve(plan, io, signal)),
    },
    autoHandler,
  );
}
