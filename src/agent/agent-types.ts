import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { PermissionLevel } from "../core/permission-level.js";
import { closestNames } from "../core/similarity.js";
import { ToolName } from "../core/tool-names.js";
import type { ToolSet } from "../core/toolset.js";

/** A kind of sub-agent: which tools it gets, and what it is told. */
export interface AgentType {
  name: string;
  description: string;
  /** The tools of a sub-agent of this type, chosen from its parent's. */
  tools(parent: ToolSet): ToolSet;
  /** A model alias or id; the host's default when absent. */
  model?: string;
  /** Its system prompt's instructions (a custom agent's body). */
  instructions?: string;
  /** Where it was defined: "built-in" or the file's path. */
  source: string;
}

const readOnly = (set: ToolSet) =>
  set.filter(
    (t) =>
      (t.permissionLevel === PermissionLevel.ReadOnly || t.permissionLevel === PermissionLevel.None) &&
      t.name !== ToolName.Task &&
      t.name !== ToolName.EnterPlanMode &&
      t.name !== ToolName.ExitPlanMode,
  );

export const BUILTIN_AGENT_TYPES: readonly AgentType[] = [
  {
    name: "general-purpose",
    description: "Researches, writes and runs code on its own for a multi-step task; every tool but Task.",
    tools: (set) => set.without([ToolName.Task]),
    source: "built-in",
  },
  {
    name: "Explore",
    description: "Finds and reads code fast to answer a question about the codebase; read-only tools.",
    tools: readOnly,
    source: "built-in",
  },
  {
    name: "Plan",
    description: "Investigates and writes an implementation plan; read-only tools plus the plan-mode tools.",
    tools: (set) => {
      const plan = set.only([ToolName.EnterPlanMode, ToolName.ExitPlanMode]);
      return readOnly(set).with(plan.tools);
    },
    source: "built-in",
  },
];

/** `---`-delimited YAML frontmatter and the body after it. */
function splitFrontmatter(text: string): { yaml: string; body: string } | undefined {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  return match ? { yaml: match[1]!, body: match[2]!.trim() } : undefined;
}

function listOf(value: unknown): string[] | undefined {
  if (Array.isArray(value))
    return value
      .map(String)
      .map((s) => s.trim())
      .filter(Boolean);
  if (typeof value === "string")
    return value
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  return undefined;
}

/** What loading agent definitions found wrong: files skipped, and names in kept ones that mean nothing. */
interface AgentTypeProblems {
  /** Files that define no agent, each with why. */
  skipped: string[];
  /** Definitions kept despite something in them, each with what. */
  warnings: string[];
}

const BUILTIN_TOOL_NAMES: readonly string[] = Object.values(ToolName);

/**
 * Warns about names in a definition's `tools:` that no tool has, with the nearest built-in names: such a
 * name is a typo, and without the warning the agent just runs without that tool. MCP tools (mcp__…) are
 * known only when the sub-agent starts, so they are not judged here.
 */
function checkToolNames(path: string, names: readonly string[], warnings: string[]): void {
  for (const name of names) {
    if (name.startsWith("mcp__") || BUILTIN_TOOL_NAMES.includes(name)) continue;
    const near = closestNames(name, BUILTIN_TOOL_NAMES);
    warnings.push(
      `${path}: tools names "${name}", which is no tool${near.length > 0 ? ` (did you mean ${near.join(", ")}?)` : ""}; the agent runs without it`,
    );
  }
}

/** Custom agents from `<dir>/*.md`; a file without usable frontmatter is reported and skipped. */
async function agentsIn(
  dir: string,
  { skipped: problems, warnings }: AgentTypeProblems,
): Promise<AgentType[]> {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".md"));
  } catch {
    return [];
  }
  const { parse } = await import("yaml");
  const out: AgentType[] = [];
  for (const name of names.sort()) {
    const path = join(dir, name);
    const split = splitFrontmatter(readFileSync(path, "utf8"));
    if (!split) {
      problems.push(`${path}: no frontmatter (--- name, description ---)`);
      continue;
    }
    let data: Record<string, unknown>;
    try {
      data = (parse(split.yaml) ?? {}) as Record<string, unknown>;
    } catch (error) {
      problems.push(`${path}: frontmatter is not valid YAML (${(error as Error).message})`);
      continue;
    }
    const toolNames = listOf(data.tools);
    if (toolNames) checkToolNames(path, toolNames, warnings);
    out.push({
      name: typeof data.name === "string" ? data.name : basename(name, ".md"),
      description: typeof data.description === "string" ? data.description : "(no description)",
      tools: (set) => (toolNames ? set.only(toolNames) : set.without([ToolName.Task])),
      model: typeof data.model === "string" && data.model !== "inherit" ? data.model : undefined,
      instructions: split.body || undefined,
      source: path,
    });
  }
  return out;
}

/**
 * Every agent type a workspace has: custom ones from `.claude/agents/*.md` (the project's first, then the
 * user's), then the built-ins; a custom agent with a built-in's name replaces it.
 */
export async function loadAgentTypes(
  workingDir: string,
  configDir: string,
): Promise<{ types: AgentType[] } & AgentTypeProblems> {
  const problems: AgentTypeProblems = { skipped: [], warnings: [] };
  const custom = [
    ...(await agentsIn(join(workingDir, ".claude", "agents"), problems)),
    ...(await agentsIn(join(configDir, "agents"), problems)),
  ];
  const types: AgentType[] = [];
  const seen = new Set<string>();
  for (const type of [...custom, ...BUILTIN_AGENT_TYPES]) {
    if (seen.has(type.name)) continue;
    seen.add(type.name);
    types.push(type);
  }
  return { types, ...problems };
}
