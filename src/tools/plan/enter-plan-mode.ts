import * as z from "zod";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { planStateSlot } from "./state.js";

export const enterPlanModeTool = defineTool({
  name: ToolName.EnterPlanMode,
  description: [
    "Switches this session to plan mode: from now on only read-only tools run, so you can explore and design before changing anything.",
    "",
    `- Every call that could change something is denied until the plan is approved with ${ToolName.ExitPlanMode}.`,
    "- Use it for non-trivial changes where the approach should be agreed first.",
  ].join("\n"),
  // It only ever narrows what the session may do.
  permissionLevel: PermissionLevel.None,
  // It changes what the calls after it may do, so it never runs alongside them.
  isConcurrencySafe: () => false,
  inputSchema: z.strictObject({}),
  async execute(_input, ctx) {
    if (ctx.permissionMode === "plan") {
      return ToolResult.success(
        `The session is already in plan mode. Explore with read-only tools, then present the plan with ${ToolName.ExitPlanMode}.`,
        { mode: "plan", changed: false },
      );
    }
    const previous = ctx.permissionMode;
    ctx.session.get(planStateSlot).previousMode = previous;
    ctx.setPermissionMode("plan");
    return ToolResult.success(
      `Entered plan mode (was ${previous}). Only read-only tools run now: explore the code, design the change, then call ${ToolName.ExitPlanMode} with the plan; once it is approved, the session returns to ${previous} mode.`,
      { mode: "plan", previousMode: previous, changed: true },
    );
  },
});
