import { resolve } from "node:path";
import { type Command, InvalidArgumentError } from "commander";
import { installCrashGuard } from "../../core/crash-guard.js";
import { type ModelAccess, withModel } from "../../core/host.js";
import type { McpServerStatus } from "../../core/mcp-manager.js";
import type { Session } from "../../core/session.js";
import type { ContextFactory, ToolSessionOptions } from "../../mcp/server.js";
import type { StdioConnection } from "../../mcp/stdio-connection.js";
import { enableIdleCollection, hostLoaded } from "../../process/memory.js";
import { usePrestartedShells } from "../../process/prestart.js";
import { deferPlaceholderRelease } from "../../sandbox/placeholder.js";
import { modelMayBeConfigured, stdioConnection } from "../early-opening.js";
import {
  addContextOptions,
  type ContextFlags,
  checkRuleFlags,
  checkWorkingDir,
  EXIT_TOOL_ERROR,
  EXIT_USAGE,
} from "../options.js";

interface ServeFlags extends ContextFlags {
  http?: boolean;
  port: number;
  host: string;
  token?: string;
}

/** The model runtime when the environment configures one (ANTHROPIC_API_KEY, or OPENAI_BASE_URL). */
async function configuredModel(setting: unknown): Promise<ModelAccess | undefined> {
  if (!modelMayBeConfigured()) return undefined;
  const { AgentRuntime, chooseModel, providerFromEnv } = await import("../../agent/runtime.js");
  const { userConfigDir } = await import("../../settings/load.js");
  const configured = providerFromEnv(process.env, undefined);
  if ("missing" in configured) return undefined;
  return new AgentRuntime({
    provider: configured.provider,
    model: chooseModel(undefined, process.env, setting),
    configDir: userConfigDir(),
  });
}

/** Port of `--http` when none is given. */
const DEFAULT_HTTP_PORT = 3333;

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new InvalidArgumentError("use a port from 0 to 65535");
  return port;
}

function usageError(command: string, message: string): void {
  process.stderr.write(`cc-tools ${command}: ${message}\n`);
  process.exitCode = EXIT_USAGE;
}

/**
 * `cc-tools mcp`. Over stdio the client's opening (initialize, tools/list) is answered from build-time data
 * while the SDK, the executor and the tools load; the heavy modules load only after that.
 */
async function serve(flags: ServeFlags, command: Command): Promise<void> {
  try {
    await startServing(flags, command);
  } finally {
    // Serving (or not: a usage error): loading's garbage goes when quiet.
    hostLoaded();
  }
}

async function startServing(flags: ServeFlags, command: Command): Promise<void> {
  installCrashGuard("cc-tools mcp");
  // A long-running server: collect a large call's garbage when quiet.
  enableIdleCollection();
  usePrestartedShells();
  // Its answer is written before the next turn: a sandboxed command's placeholders can go after it.
  deferPlaceholderRelease();
  const stray = (["port", "host"] as const).filter((name) => command.getOptionValueSource(name) === "cli");
  if (!flags.http && stray.length > 0) {
    return usageError(
      "mcp",
      `${stray.map((name) => `--${name}`).join(" and ")} only ${stray.length > 1 ? "apply" : "applies"} to --http; add --http to serve over HTTP, or drop ${stray.length > 1 ? "them" : "it"} for stdio.`,
    );
  }
  const token = flags.token ?? process.env.CC_TOOLS_TOKEN;
  const workingDir = resolve(flags.cwd ?? process.cwd());
  const { loadSettings, SettingsError } = await import("../../settings/load.js");
  let settings: ReturnType<typeof loadSettings>;
  try {
    settings = loadSettings(checkWorkingDir(workingDir));
    checkRuleFlags(flags);
  } catch (error) {
    if (error instanceof SettingsError) return usageError("mcp", error.message);
    throw error;
  }

  // With no --permission-mode, a call the client sends counts as approved inside the workspace (one consent).
  const approvesCalls = flags.permissionMode === undefined;
  const mode = flags.permissionMode ?? settings.defaultMode ?? "default";
  const consents = approvesCalls && (mode === "default" || mode === "acceptEdits");
  const policy = `permission mode ${mode}${consents ? " (calls the client approves may edit and run commands inside the workspace)" : ""}`;

  let connection: StdioConnection | undefined;
  if (!flags.http) {
    // Someone started it by hand: say what this is, so a silent wait does not look like a hang.
    if (process.stderr.isTTY) {
      process.stderr.write(
        `cc-tools MCP server on stdio: Claude Code's tools for ${workingDir}, ${policy}. Waiting for an MCP client on stdin (Ctrl-C to stop).\n`,
      );
    }
    // Usually the entry has started it already, and it may have answered the opening meanwhile.
    connection = await stdioConnection();
    // The client may leave having only asked what the opening answered: then nothing more loads.
    if (!(await connection.needsServer)) return;
  }

  const { contextFromFlags, mcpManagerFor, openSession, saveSession } = await import("../common.js");
  let manager: ReturnType<typeof mcpManagerFor>;
  try {
    manager = mcpManagerFor(workingDir, settings);
  } catch (error) {
    if (error instanceof SettingsError) {
      // The connection is open and would keep the process reading stdin.
      await connection?.close();
      process.stdin.destroy();
      return usageError("mcp", error.message);
    }
    throw error;
  }
  // With a model configured, every client gets sub-agents (Task) and WebFetch's prompt.
  const model = await configuredModel(settings.raw.model);
  const makeContext: ContextFactory = (session, host) =>
    contextFromFlags(flags, {
      session,
      host: model ? withModel(host, model) : host,
      mcpManager: manager,
      mcpClient: { approvesCalls },
    });
  // A named session is restored when a connection opens and saved after every call, so a client that
  // reconnects (or a restarted server) finds its work items, todos and mode. One connection holds the name
  // at a time; another connecting meanwhile gets a fresh session rather than overwriting the saved one.
  let nameHeld = false;
  const sessionOptions = (): ToolSessionOptions => {
    const name = flags.session;
    if (!name || nameHeld) return {};
    nameHeld = true;
    // Saves run one after another, so an older snapshot never lands after a newer one.
    let saving: Promise<void> = Promise.resolve();
    const save = (session: Session) => {
      saving = saving.catch(() => undefined).then(() => saveSession(name, workingDir, session));
      return saving;
    };
    return {
      session: openSession(name, workingDir),
      afterCall: save,
      beforeDispose: async (session) => {
        await save(session);
        nameHeld = false;
      },
    };
  };
  // Other servers' tools join the list when they connect (clients hear tools/list_changed).
  if (manager) setImmediate(() => void manager.connect());

  if (connection) {
    const { serveToolsOverStdio } = await import("../../mcp/serve-stdio.js");
    await serveToolsOverStdio(makeContext, manager, connection, sessionOptions);
    return;
  }
  const { isLoopback, serveToolsOverHttp } = await import("../../mcp/serve-http.js");
  if (!isLoopback(flags.host) && !token) {
    return usageError(
      "mcp",
      `serving on ${flags.host} (not loopback) needs a bearer token: pass --token or set CC_TOOLS_TOKEN.`,
    );
  }
  let served: Awaited<ReturnType<typeof serveToolsOverHttp>>;
  try {
    served = await serveToolsOverHttp(makeContext, manager, {
      host: flags.host,
      port: flags.port,
      token,
      sessionOptions,
    });
  } catch (error) {
    process.stderr.write(
      `cc-tools mcp: cannot listen on ${flags.host}:${flags.port}: ${(error as Error).message}\n`,
    );
    process.exitCode = EXIT_TOOL_ERROR;
    return;
  }
  process.stderr.write(
    `cc-tools MCP server listening on ${served.url}${token ? " (bearer token required)" : ""}: Claude Code's tools for ${workingDir}, ${policy}.\n`,
  );
  const stop = async () => {
    await served.close();
    await manager?.close();
    process.exit(0);
  };
  process.once("SIGINT", () => void stop());
  process.once("SIGTERM", () => void stop());
}

function printStatuses(statuses: McpServerStatus[]): void {
  if (statuses.length === 0) {
    process.stdout.write(
      'No MCP servers configured. Add them to .mcp.json ({"mcpServers": {...}}) or settings mcpServers.\n',
    );
    return;
  }
  const nameWidth = Math.max(...statuses.map((s) => s.name.length));
  for (const s of statuses) {
    const tools = s.status === "connected" ? `${s.toolCount} tool${s.toolCount === 1 ? "" : "s"}` : "";
    process.stdout.write(
      `${s.name.padEnd(nameWidth)}  ${s.transport.padEnd(5)}  ${s.status.padEnd(9)}  ${tools}\n`,
    );
    const note = s.error ?? s.reason;
    if (note)
      process.stdout.write(
        `${" ".repeat(nameWidth + 2)}${note.replaceAll("\n", `\n${" ".repeat(nameWidth + 2)}`)}\n`,
      );
  }
}

/** `cc-tools mcp-servers`: connects every configured server once and reports what happened. */
async function listServers(flags: { cwd?: string; json?: boolean }): Promise<void> {
  const workingDir = resolve(flags.cwd ?? process.cwd());
  const [{ loadSettings, SettingsError }, { mcpManagerFor }] = await Promise.all([
    import("../../settings/load.js"),
    import("../common.js"),
  ]);
  let manager: ReturnType<typeof mcpManagerFor>;
  try {
    manager = mcpManagerFor(workingDir, loadSettings(workingDir));
  } catch (error) {
    if (error instanceof SettingsError) return usageError("mcp-servers", error.message);
    throw error;
  }
  await manager?.connect();
  const statuses = manager?.servers() ?? [];
  const tools = manager?.tools().map((t) => t.name) ?? [];
  await manager?.close();
  if (flags.json) process.stdout.write(`${JSON.stringify({ servers: statuses, tools }, null, 2)}\n`);
  else printStatuses(statuses);
  const waiting = statuses.filter((s) => s.status === "pending");
  if (waiting.length > 0 && !flags.json) {
    process.stdout.write(
      `\n${waiting.length} project server${waiting.length === 1 ? "" : "s"} from .mcp.json ${waiting.length === 1 ? "is" : "are"} waiting for approval (${waiting.map((s) => s.name).join(", ")}).\n` +
        'Approve in .claude/settings.local.json (this project, this user) or ~/.claude/settings.json: {"enabledMcpjsonServers": ["name"]},\n' +
        'or {"enableAllProjectMcpServers": true}. {"disabledMcpjsonServers": ["name"]} turns one off. The shared .claude/settings.json cannot approve.\n',
    );
  }
  // Waiting, turned-off and skipped (cc-tools itself) servers are the configuration working as meant.
  const failed = statuses.some((s) => !["connected", "pending", "disabled", "skipped"].includes(s.status));
  process.exitCode = failed ? EXIT_TOOL_ERROR : 0;
}

export function registerMcp(program: Command): void {
  const command = program
    .command("mcp")
    .description("serve the tools to an MCP client: stdio by default, Streamable HTTP with --http")
    .option("--http", "serve Streamable HTTP at http://<host>:<port>/mcp instead of stdio")
    .option("--port <n>", `HTTP port (0 picks a free one)`, parsePort, DEFAULT_HTTP_PORT)
    .option("--host <host>", "HTTP address to bind; anything but loopback requires a token", "127.0.0.1")
    .option(
      "--token <token>",
      "bearer token HTTP clients must send (default: $CC_TOOLS_TOKEN, which unlike a flag does not show in ps)",
    )
    .addHelpText(
      "after",
      `
Examples:
  cc-tools mcp --cwd ~/project                       # stdio, for Claude Desktop, Claude Code, VS Code
  cc-tools mcp --http --port 3333                    # http://127.0.0.1:3333/mcp
  CC_TOOLS_TOKEN=secret cc-tools mcp --http --host 0.0.0.0

Permissions: the client asks its user before each call, so by default a call it sends may edit files
and run commands inside the workspace. Deny and ask rules, anything outside the workspace, settings,
.mcp.json and .git, and Dangerous tools still need cc-tools' own approval: asked through the client
(MCP elicitation) when it can show questions, else refused (allow with --allow RULE or settings).
--permission-mode MODE turns the client's approval off and decides by MODE alone (default: ask for
every edit and command). See docs/MCP.md.`,
    );
  addContextOptions(command, { session: true });
  command.action(serve);

  program
    .command("mcp-servers")
    .description("connect the MCP servers configured in .mcp.json and settings, and show each one's status")
    .option("--cwd <dir>", "workspace directory (default: the current directory)")
    .option("--json", "print JSON: every server's status and error, and the mcp__ tool names")
    .addHelpText(
      "after",
      "\nExit codes: 0 every server connected (or was skipped: cc-tools itself), 1 some failed, 2 bad configuration.",
    )
    .action(listServers);
}
