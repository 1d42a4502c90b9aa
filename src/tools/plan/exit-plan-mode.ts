import * as z from "zod";
import type { ToolContext } from "../../core/context.js";
import { InputError, ToolError } from "../../core/errors.js";
import { HostCapability, type PlanDecision } from "../../core/host.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { planStateSlot } from "./state.js";

/** An allow rule naming the tool approves plans without asking (a policy for hosts with nobody to ask). */
function approvedByRule(ctx: ToolContext): boolean {
  return ctx.rules().some((r) => r.behavior === "allow" && r.rule.trim() === ToolName.ExitPlanMode);
}

const NOBODY_TO_ASK =
  `nobody here can approve the plan, so the session stays in plan mode. To leave it, start again with --permission-mode default ` +
  `(or set permissions.defaultMode), or add "${ToolName.ExitPlanMode}" to permissions.allow (or pass --allow ${ToolName.ExitPlanMode}) to approve plans without asking`;

export const exitPlanModeTool = defineTool({
  name: ToolName.ExitPlanMode,
  description: [
    "Presents your plan for approval and, once approved, leaves plan mode: the session returns to the mode it had before, and changes can be made.",
    "",
    "- plan: the plan in Markdown, concise and complete enough to act on.",
    '- allowedPrompts: Bash actions the plan will need ("run the tests"), shown to whoever approves it.',
    "- If the plan is rejected you stay in plan mode; the result carries the feedback to revise it.",
  ].join("\n"),
  // It asks its own question (the plan), or follows an allow rule naming it; nothing else to decide.
  permissionLevel: PermissionLevel.None,
  // It changes what the calls after it may do, so it never runs alongside them.
  isConcurrencySafe: () => false,
  inputSchema: z.strictObject({
    plan: z.string().min(1).describe("The plan to approve, in Markdown."),
    allowedPrompts: z
      .array(
        z.strictObject({
          tool: z.literal("Bash"),
          prompt: z.string().describe('What the command does, e.g. "run the tests".'),
        }),
      )
      .optional()
      .describe("Shell actions the plan needs, shown to the approver."),
  }),
  async execute(input, ctx) {
    if (ctx.permissionMode !== "plan") {
      throw new InputError(
        `The session is not in plan mode (it is in ${ctx.permissionMode} mode); there is nothing to exit. Go ahead with the work.`,
      );
    }
    const state = ctx.session.get(planStateSlot);
    const shown =
      input.allowedPrompts && input.allowedPrompts.length > 0
        ? `${input.plan}\n\nThe plan will need to: ${input.allowedPrompts.map((p) => `${p.tool}: ${p.prompt}`).join("; ")}`
        : input.plan;
    let decision: PlanDecision;
    if (approvedByRule(ctx)) {
      decision = { approved: true };
    } else if (ctx.host.approvePlan && ctx.host.supports(HostCapability.PlanApproval)) {
      decision = await ctx.host.approvePlan(shown, ctx.signal);
    } else {
      throw new ToolError(`Plan not approved: ${NOBODY_TO_ASK}.`, { metadata: { approved: false } });
    }
    if (!decision.approved) {
      const feedback = decision.feedback?.trim();
      throw new ToolError(
        `The user did not approve the plan; the session stays in plan mode.${feedback ? ` Their feedback: ${/[.!?]$/.test(feedback) ? feedback : `${feedback}.`}` : ""} Revise the plan and call ${ToolName.ExitPlanMode} again.`,
        { metadata: { approved: false, feedback } },
      );
    }
    const mode = decision.mode ?? state.previousMode ?? "default";
    state.previousMode = undefined;
    ctx.setPermissionMode(mode);
    return ToolResult.success(
      `The plan was approved; the session is in ${mode} mode now. Start on the work, following the plan.`,
      { approved: true, mode, plan: input.plan },
    );
  },
});
