import type { Client } from "@modelcontextprotocol/client";
import { errorMessage } from "../core/errors.js";
import { TOOL_CALL_DEADLINE_MS } from "../core/limits.js";
import { log } from "../core/log.js";
import type {
  McpManager,
  McpResourceContents,
  McpResourceInfo,
  McpServerStatus,
} from "../core/mcp-manager.js";
import type { AnyTool } from "../core/tool.js";
import { hostProgram, locateExecutable } from "../process/shells.js";
import { hostSearchPath } from "../sandbox/host-programs.js";
import type { McpServerConfig } from "../settings/types.js";
import type { ResolvedServer } from "./config.js";
import type { McpContent } from "./content.js";
import { clientIdentity, SERVER_NAME } from "./identity.js";
import { type RemoteToolInfo, remoteTool } from "./remote-tool.js";
import { depthLimitReason, MCP_DEPTH_ENV, mcpDepth, selfInvocation, selfSkipReason } from "./self.js";

/** Longest a server may take to start and list its tools; `MCP_TIMEOUT` (ms) overrides it, as in Claude Code. */
export const MCP_CONNECT_TIMEOUT_MS = 30_000;

/** Consecutive restarts of a stdio server that keeps dying before it is marked failed. */
const MAX_RECONNECT_ATTEMPTS = 3;

/** Pause before restart N is N times this, so a crash loop does not spin. */
const RECONNECT_BACKOFF_MS = 500;

/** How much of a stdio server's stderr is kept, to explain why it failed. */
const STDERR_TAIL_CHARS = 2_000;

function connectTimeout(env: NodeJS.ProcessEnv): number {
  const configured = Number(env.MCP_TIMEOUT);
  return Number.isFinite(configured) && configured > 0 ? configured : MCP_CONNECT_TIMEOUT_MS;
}

/** Why connecting failed, in terms of the configuration the user can change. */
function describeConnectFailure(error: unknown, config: McpServerConfig, source: string): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const code = (error as { code?: string })?.code ?? cause?.code;
  if ("url" in config) {
    const reason = code ?? cause?.message ?? errorMessage(error);
    return `cannot reach ${config.url}: ${reason}. Check the server is running and "url" in ${source}.`;
  }
  if (code === "ENOENT") {
    return `command not found: ${config.command}. Check "command" in ${source} (is it installed and on PATH?).`;
  }
  if (code === "EACCES") return `${config.command} is not executable. Check "command" in ${source}.`;
  const message = errorMessage(error);
  return /connection closed/i.test(message)
    ? `the server process exited or closed its output before answering (${message})`
    : message;
}

/**
 * A server's program as the transport should start it: a bare name is looked up on the PATH without the
 * places a sandboxed command can write (sandbox/host-programs.ts), so a `node` or `npx` a command put in the
 * workspace's node_modules/.bin never starts as the server, outside the sandbox. A path is the user's choice.
 */
function hostCommand(command: string, pathEnv: string | undefined): string {
  if (process.platform === "win32" || command.includes("/")) return command;
  const found = hostProgram(command, pathEnv);
  if (found) return found;
  // Not installed at all: the spawn fails as before (ENOENT, and its message).
  if (!locateExecutable(command, pathEnv)) return command;
  throw new Error(
    `command not found: ${command} on PATH outside the places sandboxed commands can write (the workspaces, ` +
      `their additional directories, the sandbox's caches). To start a program from one of those, give its path in "command".`,
  );
}

function transportKind(config: McpServerConfig): "stdio" | "http" | "sse" {
  return config.type === "http" || config.type === "sse" ? config.type : "stdio";
}

/** One configured server: its client while connected, its tools, and why it failed when it did. */
class Connection {
  status: McpServerStatus["status"] = "connecting";
  error: string | undefined;
  /** Why the server is not used at all (it is cc-tools itself, or the depth limit); set once, for good. */
  skipped: string | undefined;
  tools: AnyTool[] = [];
  private client: Client | undefined;
  private opening: Promise<void> | undefined;
  private stderrTail = "";
  private restarts = 0;
  private closed = false;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    readonly source: string,
    private readonly cwd: string,
    private readonly timeoutMs: number,
    private readonly depth: number,
    private readonly changed: () => void,
  ) {
    const self = selfInvocation(config, cwd);
    const why = depthLimitReason(depth) ?? (self ? selfSkipReason(self) : undefined);
    if (why) this.skip(why);
  }

  private skip(reason: string): void {
    this.skipped = reason;
    this.status = "skipped";
    this.error = undefined;
  }

  get transport() {
    return transportKind(this.config);
  }

  open(): Promise<void> {
    if (this.skipped) return Promise.resolve();
    this.opening ??= this.start().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  /** The live client, waiting for a restart in progress; throws saying why there is none. */
  async ready(): Promise<Client> {
    if (this.opening) await this.opening;
    if (this.client && this.status === "connected") return this.client;
    if (this.skipped) throw new Error(`MCP server ${this.name} is not used: ${this.skipped}.`);
    throw new Error(
      `MCP server ${this.name} is not connected (${this.status})${this.error ? `: ${this.error}` : ""}. Run 'cc-tools mcp-servers' to check its configuration.`,
    );
  }

  private async start(): Promise<void> {
    this.status = "connecting";
    let client: Client | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      const { Client: ClientClass } = await import("@modelcontextprotocol/client");
      client = new ClientClass(clientIdentity(), {
        capabilities: {},
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (this.closed) return;
              if (error) log.warn(`MCP server ${this.name}: refreshing its tools failed`, error);
              else if (tools) this.setTools(tools as RemoteToolInfo[]);
            },
          },
        },
      });
      const transport = await this.createTransport();
      const opened = client;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(`it did not answer within ${this.timeoutMs} ms (set MCP_TIMEOUT to wait longer)`),
            ),
          this.timeoutMs,
        );
      });
      await Promise.race([
        (async () => {
          await opened.connect(transport, { timeout: this.timeoutMs });
          // A wrapper script, a renamed copy or a URL that leads back: it says who it is on initialize.
          if (opened.getServerVersion()?.name === SERVER_NAME) return;
          const { tools } = await opened.listTools(undefined, { timeout: this.timeoutMs });
          this.setTools(tools as RemoteToolInfo[], false);
        })(),
        timeout,
      ]);
      if (this.closed) throw new Error("the manager was closed while connecting");
      if (opened.getServerVersion()?.name === SERVER_NAME) {
        const where = "url" in this.config ? this.config.url : this.config.command;
        this.skip(selfSkipReason(`it answered initialize as cc-tools (${where})`));
        await opened.close().catch(() => {});
        return;
      }
      client.onclose = () => this.lost(opened);
      this.client = client;
      this.status = "connected";
      this.error = undefined;
      this.changed();
    } catch (error) {
      await client?.close().catch(() => {});
      this.client = undefined;
      this.status = this.closed ? "closed" : "failed";
      const stderr = this.stderrTail.trim();
      const reason = this.closed
        ? errorMessage(error)
        : describeConnectFailure(error, this.config, this.source);
      this.error = `${reason}${stderr ? `\nstderr: ${stderr}` : ""}`;
      if (this.tools.length > 0) {
        this.tools = [];
        this.changed();
      }
    } finally {
      clearTimeout(timer);
    }
  }

  private async createTransport() {
    const config = this.config;
    if ("url" in config) {
      const { SSEClientTransport, StreamableHTTPClientTransport } = await import(
        "@modelcontextprotocol/client"
      );
      const options = { requestInit: { headers: config.headers ?? {} } };
      return config.type === "sse"
        ? new SSEClientTransport(new URL(config.url), options)
        : new StreamableHTTPClientTransport(new URL(config.url), options);
    }
    const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
    // The marker comes last: a configured env cannot reset the depth that stops chains.
    const env = Object.fromEntries(
      Object.entries({ ...process.env, ...config.env, [MCP_DEPTH_ENV]: String(this.depth + 1) }).filter(
        (e): e is [string, string] => e[1] !== undefined,
      ),
    );
    const command = hostCommand(config.command, env.PATH);
    const transport = new StdioClientTransport({
      command,
      args: config.args ?? [],
      // A program looked up by name (npx, a `#!/usr/bin/env node` script) looks up its own the same way.
      env: command === config.command ? env : { ...env, PATH: hostSearchPath(env.PATH) },
      cwd: config.cwd ?? this.cwd,
      stderr: "pipe",
    });
    this.stderrTail = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
    });
    return transport;
  }

  /** A connected server went away: restart stdio servers (they die with their process), report the rest. */
  private lost(client: Client): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    if (this.transport !== "stdio" || this.restarts >= MAX_RECONNECT_ATTEMPTS) {
      this.status = "failed";
      this.error = `the connection closed${this.restarts > 0 ? ` after ${this.restarts} restarts` : ""}${this.stderrTail.trim() ? `\nstderr: ${this.stderrTail.trim()}` : ""}`;
      this.tools = [];
      this.changed();
      return;
    }
    this.restarts++;
    log.warn(
      `MCP server ${this.name} exited; restarting it (attempt ${this.restarts} of ${MAX_RECONNECT_ATTEMPTS})`,
    );
    this.status = "connecting";
    const delay = RECONNECT_BACKOFF_MS * this.restarts;
    this.opening = new Promise<void>((resolve) => setTimeout(resolve, delay).unref())
      .then(() => this.start())
      .finally(() => {
        this.opening = undefined;
      });
  }

  private setTools(tools: RemoteToolInfo[], notify = true): void {
    this.tools = tools.map((info) =>
      remoteTool(this.name, info, {
        callTool: async (tool, args, { signal, onProgress }) => {
          const client = await this.ready();
          return (await client.callTool(
            { name: tool, arguments: args },
            { signal, onprogress: onProgress, resetTimeoutOnProgress: true, timeout: TOOL_CALL_DEADLINE_MS },
          )) as { content?: McpContent[]; structuredContent?: unknown; isError?: boolean };
        },
      }),
    );
    if (notify) this.changed();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (!this.skipped) this.status = "closed";
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => {});
  }
}

/**
 * The client side: connects the workspace's MCP servers and exposes their tools as `mcp__<server>__<tool>`.
 * Nothing is imported or spawned until connect() (or a resource call) asks for it, so a session that never
 * uses MCP pays nothing.
 */
export class McpClientManager implements McpManager {
  private readonly connections: Connection[] = [];
  private readonly invalid: McpServerStatus[] = [];
  private readonly listeners = new Set<() => void>();
  private connecting: Promise<void> | undefined;

  constructor(servers: readonly ResolvedServer[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
    const env = options.env ?? process.env;
    const timeoutMs = connectTimeout(env);
    const depth = mcpDepth(env);
    for (const server of servers) {
      if (!server.ok) {
        this.invalid.push({
          name: server.name,
          status: server.status ?? "failed",
          transport: server.transport,
          error: server.error,
          toolCount: 0,
          source: server.source,
        });
        continue;
      }
      this.connections.push(
        new Connection(server.name, server.config, server.source, options.cwd, timeoutMs, depth, () =>
          this.emit(),
        ),
      );
    }
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }

  tools(): AnyTool[] {
    return this.connections.flatMap((c) => c.tools);
  }

  servers(): McpServerStatus[] {
    return [
      ...this.invalid,
      ...this.connections.map((c) => ({
        name: c.name,
        status: c.status,
        transport: c.transport,
        error: c.error,
        ...(c.skipped ? { reason: c.skipped } : {}),
        toolCount: c.tools.length,
        source: c.source,
      })),
    ];
  }

  connect(): Promise<void> {
    this.connecting ??= Promise.all(this.connections.map((c) => c.open())).then(() => undefined);
    return this.connecting;
  }

  onToolsChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private describeServers(): string {
    const names = this.servers().map((s) => `${s.name} (${s.status})`);
    return names.length > 0
      ? `Configured MCP servers: ${names.join(", ")}.`
      : "No MCP servers are configured; add them to .mcp.json or settings mcpServers.";
  }

  private async connection(name: string): Promise<Connection> {
    await this.connect();
    const found = this.connections.find((c) => c.name === name);
    if (!found) {
      const invalid = this.invalid.find((s) => s.name === name);
      if (invalid) throw new Error(`MCP server ${name} cannot be used: ${invalid.error}`);
      throw new Error(`There is no MCP server named "${name}". ${this.describeServers()}`);
    }
    return found;
  }

  async listResources(server?: string, signal?: AbortSignal): Promise<McpResourceInfo[]> {
    await this.connect();
    const targets = server
      ? [await this.connection(server)]
      : this.connections.filter((c) => c.status === "connected");
    const lists = await Promise.all(
      targets.map(async (c) => {
        const client = await c.ready();
        if (!client.getServerCapabilities()?.resources) {
          if (server) throw new Error(`MCP server ${server} does not offer resources.`);
          return [];
        }
        const { resources } = await client.listResources(undefined, { signal });
        return resources.map((r) => ({
          server: c.name,
          uri: r.uri,
          name: r.name,
          ...(r.mimeType ? { mimeType: r.mimeType } : {}),
          ...(r.description ? { description: r.description } : {}),
        }));
      }),
    );
    return lists.flat();
  }

  async readResource(server: string, uri: string, signal?: AbortSignal): Promise<McpResourceContents[]> {
    const client = await (await this.connection(server)).ready();
    const { contents } = await client.readResource({ uri }, { signal });
    return contents as McpResourceContents[];
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await Promise.all(this.connections.map((c) => c.close()));
  }
}
