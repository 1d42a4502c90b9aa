import * as z from "zod";
import { InputError } from "../../core/errors.js";
import { HostCapability } from "../../core/host.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";

/** Claude Code's bound on a message's one-line summary. */
const MAX_SUMMARY_CHARS = 200;

export const sendMessageTool = defineTool({
  name: ToolName.SendMessage,
  description: [
    "Sends a message to another conversation of this host: a sub-agent (by its id), another session of the same MCP server, or the main conversation.",
    "",
    "- to: the recipient's name; an unknown name gets the list of those that can be reached.",
    "- The recipient sees the message at its next turn (an MCP session: with its next tool result).",
    "- summary: one line for listings and notifications.",
  ].join("\n"),
  permissionLevel: PermissionLevel.None,
  requires: [HostCapability.Messages],
  inputSchema: z.strictObject({
    to: z.string().min(1).describe("Who receives the message."),
    summary: z.string().max(MAX_SUMMARY_CHARS).optional().describe("A one-line summary."),
    message: z.string().min(1).describe("The message."),
  }),
  async execute(input, ctx) {
    const from = ctx.agentType ?? ctx.sessionId;
    const delivered = ctx.host.deliverMessage!({
      from,
      to: input.to,
      message: input.message,
      summary: input.summary,
    });
    if (!delivered) {
      const known = (ctx.host.recipients?.() ?? []).filter((name) => name !== from);
      throw new InputError(
        `No recipient named "${input.to}". ${known.length > 0 ? `Reachable now: ${known.join(", ")}.` : "Nobody else can be reached right now."}`,
      );
    }
    return ToolResult.success(`Message sent to ${input.to}; they see it at their next turn.`, {
      to: input.to,
      summary: input.summary,
    });
  },
});
