import { isIP } from "node:net";
import { splitPowerShell } from "./powershell-split.js";
import { commandText, splitBash } from "./shell-split.js";
import type { RuleBehavior } from "./types.js";

/**
 * Claude Code's permission-rule syntax, parsed once into a form the evaluator can match:
 * `Tool`, `Tool(specifier)`, `Bash(prefix:*)`, `Bash(git * --dry-run)`, `Read(./secrets/**)`,
 * `Edit(//abs/**)`, `WebFetch(domain:*.example.com)`, `mcp__server`, `mcp__server__*`, `mcp__server__tool`.
 */
export type ParsedRule =
  /** `Tool` or `Tool(*)`: every call of that tool (for Read/Edit/Write: every reading/writing tool). */
  | { kind: "tool"; tool: string }
  /** `mcp__server` or `mcp__server__*`: every tool of one MCP server. */
  | { kind: "mcpServer"; server: string }
  | { kind: "command"; tool: string; shell: Shell; pattern: CommandPattern }
  | { kind: "path"; tool: string; spec: string }
  | { kind: "domain"; tool: string; host: string }
  /** Any other `Tool(spec)`: a `*` glob over the call's specifier or URL, or a path pattern for a file tool. */
  | { kind: "specifier"; tool: string; spec: string; pattern: RegExp };

export type Shell = "bash" | "powershell";

/** How a command rule's text matches one normalised simple command. */
export interface CommandPattern {
  /** `prefix` for `npm test:*`, `wildcard` for text with `*`, else `exact`. */
  type: "exact" | "prefix" | "wildcard";
  /** The normalised rule text (without `:*`). */
  text: string;
  matches(command: string): boolean;
}

/** Tools whose rules name files: Read rules cover every reading tool, Edit and Write every writing tool. */
export const READ_RULE_TOOLS = new Set(["Read"]);
export const WRITE_RULE_TOOLS = new Set(["Edit", "Write"]);
const SHELL_TOOLS: Record<string, Shell> = { Bash: "bash", PowerShell: "powershell" };

const RULE_SHAPE = /^([^()]+?)(?:\((.*)\))?$/s;
const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_.-]*$/;
const MCP_NAME = /^mcp__([A-Za-z0-9_.-]+?)(?:__(.+))?$/;
const HOST = /^(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/;
/** Characters after a prefix that start a new word, so `git:*` covers `git status` but not `gitk`. */
const WORD_CHAR = /[A-Za-z0-9_-]/;

export type RuleParse = { ok: true; rule: ParsedRule } | { ok: false; error: string };

/** Converts `*` globs to a regular expression; everything else is literal. */
export function globToRegExp(glob: string, flags = "s"): RegExp {
  const body = glob
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`, flags);
}

function parenthesesBalanced(text: string): boolean {
  let depth = 0;
  for (const c of text) {
    if (c === "(") depth++;
    else if (c === ")" && --depth < 0) return false;
  }
  return depth === 0;
}

/** Normalises the text of a command rule the same way commands are, so quoting differences do not matter. */
function normaliseCommandText(text: string, shell: Shell): { text: string } | { error: string } {
  const split =
    shell === "bash" ? splitBash(text, { patterns: true }) : splitPowerShell(text, { patterns: true });
  if (!split.ok) return { error: `its command cannot be read (${split.reason})` };
  if (split.commands.length !== 1 || split.commands[0]!.writes.length > 0) {
    return {
      error:
        "it holds more than one command or a redirection; a rule matches one simple command, so write one rule per command",
    };
  }
  return { text: commandText(split.commands[0]!) };
}

function commandPattern(spec: string, shell: Shell): CommandPattern | { error: string } {
  const prefix = spec.endsWith(":*");
  const body = prefix ? spec.slice(0, -2) : spec;
  if (body.includes(":*")) return { error: '":*" may only appear at the end' };
  if (body.trim() === "") return { error: "the command before :* is empty" };
  const normalised = normaliseCommandText(body, shell);
  if ("error" in normalised) return normalised;
  const { text } = normalised;
  const fold = shell === "powershell" ? (s: string) => s.toLowerCase() : (s: string) => s;
  const want = fold(text);
  if (prefix) {
    // A prefix that ends inside the command name must be the whole name: `Bash(ls:*)` names the
    // program `ls`, not `ls.evil` or `ls/../evil`. After the name, any non-word character ends it.
    const withinName = !/\s/.test(want);
    const needsBoundary = WORD_CHAR.test(want.at(-1)!);
    const ends = (next: string) => (withinName ? next === " " : !needsBoundary || !WORD_CHAR.test(next));
    return {
      type: "prefix",
      text,
      matches: (command) => {
        const got = fold(command);
        if (got === want) return true;
        return got.startsWith(want) && ends(got[want.length]!);
      },
    };
  }
  if (text.includes("*")) {
    // A trailing ` *` also matches the bare command: `Bash(ls *)` covers `ls` and `ls -la`, not `lsof`.
    const trailing = text.endsWith(" *");
    const core = globToRegExp(trailing ? text.slice(0, -2) : text, shell === "powershell" ? "is" : "s");
    const regex = trailing ? new RegExp(`${core.source.slice(0, -1)}(?: .*)?$`, core.flags) : core;
    return { type: "wildcard", text, matches: (command) => regex.test(command) };
  }
  return { type: "exact", text, matches: (command) => fold(command) === want };
}

function parseSpecifier(tool: string, spec: string): ParsedRule | string {
  if (spec === "*") return { kind: "tool", tool };
  const shell = SHELL_TOOLS[tool];
  if (shell) {
    const pattern = commandPattern(spec, shell);
    return "error" in pattern ? pattern.error : { kind: "command", tool, shell, pattern };
  }
  if (tool === "WebFetch") {
    if (!spec.startsWith("domain:")) return 'WebFetch rules name a host: "WebFetch(domain:example.com)"';
    const host = spec.slice("domain:".length).toLowerCase();
    if (host !== "*" && !HOST.test(host))
      return `"${host}" is not a host name (write "example.com", "*.example.com" for its subdomains, or "*" for every host)`;
    return { kind: "domain", tool, host };
  }
  if (READ_RULE_TOOLS.has(tool) || WRITE_RULE_TOOLS.has(tool)) {
    if (spec.startsWith("!")) return "negated path patterns are not supported; use a deny rule instead";
    return { kind: "path", tool, spec };
  }
  if (spec.includes(":*") && !spec.endsWith(":*")) return '":*" may only appear at the end';
  return { kind: "specifier", tool, spec, pattern: globToRegExp(spec) };
}

/** Parses a rule as written in settings or on the command line. */
export function parseRule(text: string): RuleParse {
  const fail = (why: string): RuleParse => ({
    ok: false,
    error: `Invalid permission rule "${text}": ${why}.`,
  });
  const trimmed = text.trim();
  if (trimmed === "") return fail("it is empty");
  if (!parenthesesBalanced(trimmed)) return fail("its parentheses are unbalanced");
  const shape = RULE_SHAPE.exec(trimmed);
  if (!shape) return fail('expected "Tool" or "Tool(specifier)"');
  const [, tool = "", spec] = shape;
  const mcp = MCP_NAME.exec(tool);
  if (mcp) {
    if (spec !== undefined) return fail("MCP rules take no specifier; name the tool: mcp__server__tool");
    if (mcp[2] === undefined || mcp[2] === "*")
      return { ok: true, rule: { kind: "mcpServer", server: mcp[1]! } };
    if (mcp[2].includes("*")) return fail('only a whole "mcp__server__*" wildcard is supported');
    return { ok: true, rule: { kind: "tool", tool } };
  }
  if (!TOOL_NAME.test(tool)) return fail(`"${tool}" is not a tool name`);
  if (spec === undefined) return { ok: true, rule: { kind: "tool", tool } };
  if (spec.trim() === "") return fail(`the specifier is empty; write "${tool}" to match every call`);
  const parsed = parseSpecifier(tool, spec);
  return typeof parsed === "string" ? fail(parsed) : { ok: true, rule: parsed };
}

/** An error message naming the rule and what is wrong with it, or undefined when it is valid. */
export function validateRule(rule: string): string | undefined {
  const parsed = parseRule(rule);
  return parsed.ok ? undefined : parsed.error;
}

/** Whether a rule naming `ruleTool` applies to a file access by `toolName`. */
export function coversPathAccess(
  ruleTool: string,
  behavior: RuleBehavior,
  toolName: string,
  access: "read" | "write",
): boolean {
  if (ruleTool === toolName) return true;
  if (access === "read") {
    // Permission to change a file includes reading it.
    return READ_RULE_TOOLS.has(ruleTool) || (WRITE_RULE_TOOLS.has(ruleTool) && behavior === "allow");
  }
  // A file that may not be read may not be edited either: editing shows its content.
  return WRITE_RULE_TOOLS.has(ruleTool) || (READ_RULE_TOOLS.has(ruleTool) && behavior === "deny");
}

/** True when a host matches `example.com` exactly, `*.example.com` as a strict subdomain, or `*`. */
export function hostMatches(pattern: string, host: string): boolean {
  if (pattern === "*") return true;
  const h = host.toLowerCase().replace(/\.$/, "");
  // An address has no subdomains: `*.0.0.1` must not cover 127.0.0.1.
  if (pattern.startsWith("*.")) return isIP(h) === 0 && h.endsWith(pattern.slice(1));
  return h === pattern;
}

/** The MCP server a tool name belongs to (`mcp__github__create_issue` → `github`). */
export function mcpServerOf(toolName: string): string | undefined {
  return MCP_NAME.exec(toolName)?.[1];
}
