import * as z from "zod";
import { InputError, ToolError } from "../../core/errors.js";
import { HostCapability } from "../../core/host.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";

/** Claude Code's bounds: one to four questions, two to four options each, short headers. */
const MAX_QUESTIONS = 4;
const MIN_OPTIONS = 2;
const MAX_OPTIONS = 4;
const MAX_HEADER_CHARS = 12;

const option = z.strictObject({
  label: z.string().min(1).describe("The choice as shown, 1-5 words."),
  description: z.string().describe("What choosing it means."),
  preview: z.string().optional().describe("Optional longer text shown when the option is focused."),
});

const question = z.strictObject({
  question: z.string().min(1).describe("The full question, ending with a question mark."),
  header: z
    .string()
    .min(1)
    .max(MAX_HEADER_CHARS)
    .describe(`A short label (at most ${MAX_HEADER_CHARS} characters).`),
  options: z
    .array(option)
    .min(MIN_OPTIONS)
    .max(MAX_OPTIONS)
    .describe(`${MIN_OPTIONS} to ${MAX_OPTIONS} choices.`),
  multiSelect: z.boolean().describe("True when several options may be chosen."),
});

export const askUserQuestionTool = defineTool({
  name: ToolName.AskUserQuestion,
  description: [
    "Asks the user one to four multiple-choice questions and waits for the answers: to settle a preference, an ambiguous requirement or a choice between approaches.",
    "",
    `- Each question has ${MIN_OPTIONS}-${MAX_OPTIONS} options; the user may also type their own answer.`,
    "- multiSelect lets them pick several. Put a recommended option first and say so in its label.",
    "- Only offered where someone can answer.",
  ].join("\n"),
  permissionLevel: PermissionLevel.None,
  requires: [HostCapability.Questions],
  inputSchema: z.strictObject({
    questions: z.array(question).min(1).max(MAX_QUESTIONS).describe(`1 to ${MAX_QUESTIONS} questions.`),
  }),
  async execute(input, ctx) {
    const texts = input.questions.map((q) => q.question);
    const repeated = texts.find((t, i) => texts.indexOf(t) !== i);
    if (repeated)
      throw new InputError(`The question "${repeated}" is asked twice; each question must be different.`);
    for (const q of input.questions) {
      const labels = q.options.map((o) => o.label);
      const twice = labels.find((l, i) => labels.indexOf(l) !== i);
      if (twice)
        throw new InputError(`"${q.question}" offers the option "${twice}" twice; labels must differ.`);
    }
    const answers = await ctx.host.askQuestions!(input.questions, ctx.signal);
    if (!answers || Object.keys(answers).length === 0) {
      throw new ToolError(
        "The user did not answer (they dismissed the questions). Continue with your best judgement and say what you assumed, or ask again differently.",
        { metadata: { answers: undefined } },
      );
    }
    const pairs = input.questions
      .filter((q) => answers[q.question] !== undefined)
      .map((q) => `"${q.question}"="${answers[q.question]}"`);
    return ToolResult.success(
      `The user answered your questions: ${pairs.join(", ")}. Continue with these answers in mind.`,
      { answers },
    );
  },
});
