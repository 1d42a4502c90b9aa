import { stat } from "node:fs/promises";
import { extname } from "node:path";
import * as z from "zod";
import { InputError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { isAllowedDir } from "../../process/cwd.js";

/** Most files one Brief may attach. */
export const MAX_BRIEF_ATTACHMENTS = 20;

const IMAGE_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};

export const briefTool = defineTool({
  name: ToolName.Brief,
  description: [
    "Sends the user a short message about your work: a progress update, a result, a question that can wait, with files attached.",
    "",
    "- status: normal for a reply the user is waiting for; proactive for an update they did not ask for.",
    "- attachments: paths of files in the workspace (screenshots, reports, diffs) to show with the message; each must exist.",
    "- The host shows the message in its UI; the result confirms what was sent.",
  ].join("\n"),
  // It only reports to the user; attachments are checked to exist inside the workspace, never read.
  permissionLevel: PermissionLevel.None,
  inputSchema: z.strictObject({
    message: z.string().min(1).describe("The message, in Markdown."),
    attachments: z
      .array(z.string())
      .max(MAX_BRIEF_ATTACHMENTS)
      .optional()
      .describe("Paths of files to attach (relative to the working directory, or absolute)."),
    status: z
      .enum(["normal", "proactive"])
      .default("normal")
      .describe("normal: answers the user; proactive: an update they did not ask for."),
  }),
  async execute(input, ctx) {
    const attachments = [];
    const problems: string[] = [];
    for (const given of input.attachments ?? []) {
      const path = ctx.resolvePath(given);
      if (!isAllowedDir(ctx, path)) {
        problems.push(`${given} is outside the workspace`);
        continue;
      }
      const info = await stat(path).catch(() => undefined);
      if (!info) problems.push(`${given} does not exist`);
      else if (!info.isFile()) problems.push(`${given} is not a regular file`);
      else {
        const mimeType = IMAGE_TYPES[extname(path).toLowerCase()];
        attachments.push({ path, size: info.size, isImage: mimeType !== undefined, mimeType });
      }
    }
    if (problems.length > 0) {
      throw new InputError(
        `Nothing was sent: ${problems.join("; ")}. Attach files of the workspace that exist (check the path with ${ToolName.Glob}).`,
      );
    }
    const files =
      attachments.length > 0
        ? ` with ${attachments.length} attachment${attachments.length === 1 ? "" : "s"} (${attachments.map((a) => a.path).join(", ")})`
        : "";
    return ToolResult.success(`Message sent to the user${files}.`, {
      brief: { message: input.message, status: input.status, attachments, sentAt: new Date().toISOString() },
    });
  },
});
