import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { lazyModule } from "../core/lazy-module.js";

/** Only a skill with frontmatter needs it. */
const yaml = lazyModule<typeof import("yaml")>("yaml");

/** A skill (`.claude/skills/<name>/SKILL.md`) or a slash command (`.claude/commands/<name>.md`). */
export interface Skill {
  name: string;
  description: string;
  /** `allowed-tools` from the frontmatter: the tools the skill expects to use. */
  allowedTools: string[];
  path: string;
  scope: "project" | "user";
  kind: "skill" | "command";
  /** The Markdown after the frontmatter. */
  body: string;
}

const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Splits a Markdown file into its YAML frontmatter and body; a malformed frontmatter is an error naming the file. */
export function parseSkillFile(text: string, path: string): { meta: Record<string, unknown>; body: string } {
  const match = FRONTMATTER.exec(text);
  if (!match) return { meta: {}, body: text };
  let meta: unknown;
  try {
    meta = yaml().parse(match[1]!);
  } catch (error) {
    throw new Error(`${path}: the frontmatter is not valid YAML (${(error as Error).message}).`);
  }
  if (meta !== null && (typeof meta !== "object" || Array.isArray(meta))) {
    throw new Error(`${path}: the frontmatter must be a YAML mapping (name: …, description: …).`);
  }
  return { meta: (meta ?? {}) as Record<string, unknown>, body: text.slice(match[0].length) };
}

function toolList(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === "string") return value.split(/[,\s]+/).filter(Boolean);
  return [];
}

/** The first paragraph line of a body, for skills without a description. */
function firstLine(body: string): string {
  return (
    body
      .split("\n")
      .find((l) => l.trim() && !l.startsWith("#"))
      ?.trim() ?? ""
  );
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function load(path: string, name: string, scope: Skill["scope"], kind: Skill["kind"]): Skill {
  const { meta, body } = parseSkillFile(readFileSync(path, "utf8"), path);
  return {
    name: typeof meta.name === "string" && kind === "skill" ? meta.name : name,
    description: typeof meta.description === "string" ? meta.description : firstLine(body),
    allowedTools: toolList(meta["allowed-tools"]),
    path,
    scope,
    kind,
    body,
  };
}

/** Markdown files under `dir`, recursively; `a/b.md` is the command `a:b`, as in Claude Code. */
function commandFiles(dir: string): Array<{ name: string; path: string }> {
  const out: Array<{ name: string; path: string }> = [];
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) {
        out.push({ name: relative(dir, path).slice(0, -3).split(sep).join(":"), path });
      }
    }
  };
  if (isDir(dir)) walk(dir);
  return out;
}

/** Problems met while loading (a malformed file); the other skills still load. */
export interface SkillCatalog {
  skills: Map<string, Skill>;
  problems: string[];
}

/**
 * Every skill and command a project sees: the project's `.claude/` first, then the user's (`~/.claude` or
 * CLAUDE_CONFIG_DIR), so a project's skill hides the user's of the same name.
 */
export function loadSkills(projectDir: string, userDir: string): SkillCatalog {
  const skills = new Map<string, Skill>();
  const problems: string[] = [];
  const roots: Array<[string, Skill["scope"]]> = [
    [join(projectDir, ".claude"), "project"],
    [join(userDir), "user"],
  ];
  const add = (make: () => Skill) => {
    try {
      const skill = make();
      if (!skills.has(skill.name)) skills.set(skill.name, skill);
    } catch (error) {
      problems.push((error as Error).message);
    }
  };
  for (const [root, scope] of roots) {
    const skillsDir = join(root, "skills");
    if (isDir(skillsDir)) {
      for (const entry of readdirSync(skillsDir, { withFileTypes: true })) {
        const file = join(skillsDir, entry.name, "SKILL.md");
        if (entry.isDirectory() && statSync(file, { throwIfNoEntry: false })?.isFile()) {
          add(() => load(file, entry.name, scope, "skill"));
        }
      }
    }
    for (const { name, path } of commandFiles(join(root, "commands")))
      add(() => load(path, name, scope, "command"));
  }
  return { skills, problems };
}

/** Splits arguments as a shell would for `$1…`: whitespace separates, quotes group. */
export function splitArguments(args: string): string[] {
  const out: string[] = [];
  const pattern = /"((?:\\.|[^"\\])*)"|'([^']*)'|(\S+)/g;
  for (const m of args.matchAll(pattern)) out.push(m[1]?.replace(/\\(.)/g, "$1") ?? m[2] ?? m[3]!);
  return out;
}

/**
 * Fills in `$ARGUMENTS` (all of them) and `$1`, `$2`… (one each; missing ones become empty). A body that
 * uses neither gets the arguments appended, so they are never dropped.
 */
export function substituteArguments(body: string, args: string): string {
  const positional = splitArguments(args);
  let used = false;
  const filled = body.replace(/\$(ARGUMENTS\b|\d+)/g, (_, key: string) => {
    used = true;
    return key === "ARGUMENTS" ? args : (positional[Number(key) - 1] ?? "");
  });
  return used || args.trim() === "" ? filled : `${filled.trimEnd()}\n\nARGUMENTS: ${args}`;
}

export function skillBaseDir(skill: Skill): string {
  return dirname(skill.path);
}
