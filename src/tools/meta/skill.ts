import * as z from "zod";
import { InputError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { userConfigDir } from "../../settings/load.js";
import { loadSkills, skillBaseDir, substituteArguments } from "../../skills/load.js";

export const skillTool = defineTool({
  name: ToolName.Skill,
  description: [
    "Runs a skill or slash command: loads its instructions (with the arguments filled in) so you can follow them.",
    "",
    "- Skills live in .claude/skills/<name>/SKILL.md, commands in .claude/commands/<name>.md, in the project and in ~/.claude; the project's win.",
    "- skill: its name (a command in a subfolder is folder:name; a leading / is ignored); args: its arguments as one string.",
    "- An unknown name gets the list of available skills.",
  ].join("\n"),
  // Loading reads instruction files; a rule `Skill(name)` can deny or allow one skill.
  permissionLevel: PermissionLevel.ReadOnly,
  inputSchema: z.strictObject({
    skill: z.string().min(1).describe('The skill\'s name, e.g. "review" or "pdf".'),
    args: z.string().optional().describe("Arguments for the skill, as one string."),
  }),
  permissionSubject: (input) => ({ kind: "specifier", value: input.skill.replace(/^\//, "") }),
  async execute(input, ctx) {
    const name = input.skill.replace(/^\//, "");
    const { skills, problems } = loadSkills(ctx.workingDir, userConfigDir());
    const skill = skills.get(name);
    if (!skill) {
      const available = [...skills.values()].map((s) =>
        s.description ? `${s.name} (${s.description})` : s.name,
      );
      const broken = problems.length > 0 ? ` Some files could not be loaded: ${problems.join(" ")}` : "";
      throw new InputError(
        `No skill named "${name}". ${available.length > 0 ? `Available: ${available.join(", ")}.` : "No skills or commands are installed (.claude/skills/<name>/SKILL.md or .claude/commands/<name>.md)."}${broken}`,
      );
    }
    const body = substituteArguments(skill.body, input.args ?? "");
    const header =
      skill.kind === "skill"
        ? `Skill "${skill.name}" (${skill.scope}). Base directory for this skill: ${skillBaseDir(skill)}`
        : `Command "/${skill.name}" (${skill.scope}).`;
    const tools =
      skill.allowedTools.length > 0 ? `\nIt expects to use: ${skill.allowedTools.join(", ")}.` : "";
    return ToolResult.success(`${header}${tools}\n\n${body.trim()}`, {
      skill: {
        name: skill.name,
        description: skill.description,
        allowedTools: skill.allowedTools,
        path: skill.path,
        scope: skill.scope,
        kind: skill.kind,
      },
    });
  },
});
