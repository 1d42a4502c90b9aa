import { join } from "node:path";
import { readJsonFile, SettingsError } from "../settings/load.js";
import type { McpServerConfig, Settings } from "../settings/types.js";

/** A configured server after `${VAR}` expansion, or the reason it cannot be used. */
export type ResolvedServer =
  | { name: string; ok: true; config: McpServerConfig; source: string }
  | {
      name: string;
      ok: false;
      error: string;
      source: string;
      transport: "stdio" | "http" | "sse";
      /** Why it does not start when that is not a mistake: waiting for approval, or turned off. */
      status?: "pending" | "disabled";
    };

/** What `cc-tools mcp-servers` and a refused call tell the user about a project server awaiting approval. */
export function approvalHint(name: string): string {
  return (
    `project server "${name}" from .mcp.json starts only once approved: add "${name}" to ` +
    `"enabledMcpjsonServers" in .claude/settings.local.json or ~/.claude/settings.json ` +
    `(or set "enableAllProjectMcpServers": true there; "disabledMcpjsonServers" turns one off)`
  );
}

/** Server names become part of tool names (`mcp__<server>__<tool>`), so they must stay in that alphabet. */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Expands `${VAR}` and `${VAR:-default}`; throws naming every variable that is unset and has no default. */
export function expandVariables(text: string, env: Record<string, string | undefined>): string {
  const missing: string[] = [];
  const out = text.replace(VARIABLE, (_, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== "") return value;
    if (fallback !== undefined) return fallback;
    missing.push(name);
    return "";
  });
  if (missing.length > 0) {
    throw new Error(
      `environment variable${missing.length > 1 ? "s" : ""} ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} not set; set ${missing.length > 1 ? "them" : "it"} or write \${NAME:-default}`,
    );
  }
  return out;
}

function expandRecord(record: Record<string, string> | undefined, env: Record<string, string | undefined>) {
  if (!record) return undefined;
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, expandVariables(String(v), env)]));
}

function transportOf(raw: Record<string, unknown>): "stdio" | "http" | "sse" {
  return raw.type === "http" || raw.type === "sse" ? raw.type : "stdio";
}

/** Checks one entry's shape and expands its variables; throws with a message that says what to fix. */
function resolveOne(raw: unknown, env: Record<string, string | undefined>): McpServerConfig {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new Error("the entry must be an object");
  const entry = raw as Record<string, unknown>;
  const transport = transportOf(entry);
  if (entry.type !== undefined && entry.type !== "stdio" && transport === "stdio") {
    throw new Error(`unknown "type" ${JSON.stringify(entry.type)}; use "stdio", "http" or "sse"`);
  }
  if (transport === "stdio") {
    if (typeof entry.command !== "string" || entry.command === "")
      throw new Error('a stdio server needs a "command"');
    if (
      entry.args !== undefined &&
      (!Array.isArray(entry.args) || entry.args.some((a) => typeof a !== "string"))
    ) {
      throw new Error('"args" must be a list of strings');
    }
    return {
      type: "stdio",
      command: expandVariables(entry.command, env),
      args: ((entry.args as string[] | undefined) ?? []).map((a) => expandVariables(a, env)),
      env: expandRecord(entry.env as Record<string, string> | undefined, env),
      cwd: typeof entry.cwd === "string" ? expandVariables(entry.cwd, env) : undefined,
    };
  }
  if (typeof entry.url !== "string" || entry.url === "")
    throw new Error(`an ${transport} server needs a "url"`);
  const url = expandVariables(entry.url, env);
  try {
    new URL(url);
  } catch {
    throw new Error(`"url" ${JSON.stringify(url)} is not a valid URL`);
  }
  return {
    type: transport,
    url,
    headers: expandRecord(entry.headers as Record<string, string> | undefined, env),
  };
}

/**
 * Every MCP server a workspace configures: `.mcp.json` in the project, then settings `mcpServers` (which win
 * on a name clash, as the more specific, user-edited source). Bad entries come back as failures to report,
 * never as exceptions, so one typo does not hide the other servers.
 */
export function resolveServers(config: Settings, env: NodeJS.ProcessEnv = process.env): ResolvedServer[] {
  const merged = new Map<string, { raw: unknown; source: string }>();
  const projectFile = join(config.projectDir, ".mcp.json");
  const failures: ResolvedServer[] = [];
  try {
    const data = readJsonFile(projectFile) as { mcpServers?: unknown } | undefined;
    const servers = data?.mcpServers;
    if (
      servers !== undefined &&
      (servers === null || typeof servers !== "object" || Array.isArray(servers))
    ) {
      throw new SettingsError(
        `${projectFile}: "mcpServers" must be an object of server name to configuration.`,
      );
    }
    for (const [name, raw] of Object.entries((servers ?? {}) as Record<string, unknown>)) {
      merged.set(name, { raw, source: projectFile });
    }
  } catch (error) {
    failures.push({
      name: ".mcp.json",
      ok: false,
      error: (error as Error).message,
      source: projectFile,
      transport: "stdio",
    });
  }
  for (const [name, raw] of Object.entries(config.mcpServers))
    merged.set(name, { raw, source: "settings mcpServers" });

  const variables = { ...env, ...config.env };
  const approval = config.mcpjsonApproval;
  const resolved = [...merged].map(([name, { raw, source }]): ResolvedServer => {
    const transport = raw && typeof raw === "object" ? transportOf(raw as Record<string, unknown>) : "stdio";
    // A cloned repository's .mcp.json must not start programs before the user says so (as Claude Code).
    if (source === projectFile) {
      if (approval.disabled.includes(name)) {
        return {
          name,
          ok: false,
          source,
          transport,
          status: "disabled",
          error: `turned off by disabledMcpjsonServers`,
        };
      }
      if (!approval.enableAll && !approval.enabled.includes(name)) {
        return { name, ok: false, source, transport, status: "pending", error: approvalHint(name) };
      }
    }
    if (!SERVER_NAME.test(name)) {
      return {
        name,
        ok: false,
        source,
        transport,
        error: `server name "${name}" may only use letters, digits, "_" and "-"`,
      };
    }
    try {
      return { name, ok: true, config: resolveOne(raw, variables), source };
    } catch (error) {
      return {
        name,
        ok: false,
        source,
        transport,
        error: `${source}: server "${name}": ${(error as Error).message}`,
      };
    }
  });
  return [...failures, ...resolved];
}
