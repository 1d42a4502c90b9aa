/**
 * A minimal newline-delimited JSON-RPC client over a child's stdio, so the numbers are the servers' time,
 * not an SDK client's parsing and validation (which would weigh the same on both sides and blur the ratio).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

export const CLI = fileURLToPath(new URL("../../dist/bin/cc-tools.js", import.meta.url));
export const FILESYSTEM = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url),
);

interface Answer {
  id?: number;
  result?: { isError?: boolean; content?: Array<{ text?: string }> };
  error?: { message: string };
}

/** The MCP revision whose clients open with server/discover and send an envelope with every request. */
export const MODERN_REVISION = "2026-07-28";

export class RawClient {
  private nextId = 1;
  /** The `_meta` envelope every request carries on the 2026-07-28 revision (see `discover`). */
  private envelope: Record<string, unknown> | undefined;
  private buffer = "";
  private waiting = new Map<number, (message: Answer) => void>();

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      this.buffer += chunk;
      let newline = this.buffer.indexOf("\n");
      while (newline !== -1) {
        const message = JSON.parse(this.buffer.slice(0, newline)) as Answer;
        this.buffer = this.buffer.slice(newline + 1);
        if (message.id !== undefined) this.waiting.get(message.id)?.(message);
        newline = this.buffer.indexOf("\n");
      }
    });
  }

  static spawn(args: string[], env?: NodeJS.ProcessEnv): RawClient {
    return new RawClient(
      spawn(process.execPath, args, {
        stdio: ["pipe", "pipe", "ignore"],
        ...(env ? { env: { ...process.env, ...env } } : {}),
      }) as never,
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  request(method: string, params: unknown = {}): Promise<Answer> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, (answer) => {
        this.waiting.delete(id);
        resolve(answer);
      });
      const sent = this.envelope ? { ...(params as object), _meta: this.envelope } : params;
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params: sent })}\n`);
    });
  }

  /** A tools/call that must succeed: a failed call would time an error path, not the tool. */
  async call(name: string, args: Record<string, unknown>): Promise<string> {
    const answer = await this.request("tools/call", { name, arguments: args });
    const text = answer.result?.content?.map((c) => c.text ?? "").join("") ?? "";
    if (answer.error || answer.result?.isError)
      throw new Error(`bench: ${name} failed: ${answer.error?.message ?? text.slice(0, 300)}`);
    return text;
  }

  async open(): Promise<void> {
    await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "bench", version: "1" },
    });
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  }

  /** Opens as a 2026-07-28 client does: server/discover, and from then on an envelope with each request. */
  async discover(): Promise<void> {
    this.envelope = {
      "io.modelcontextprotocol/protocolVersion": MODERN_REVISION,
      "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    await this.request("server/discover");
  }

  close(): Promise<void> {
    if (this.child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once("exit", () => resolve());
      this.child.stdin.end();
      setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    });
  }
}

/** Spawn → initialize (or, for a 2026-07-28 client, server/discover) → tools/list answered. */
export async function startServer(
  args: string[],
  env?: NodeJS.ProcessEnv,
  revision: "2025" | "2026-07-28" = "2025",
): Promise<{ client: RawClient; ms: number }> {
  const start = performance.now();
  const client = RawClient.spawn(args, env);
  if (revision === "2025") await client.open();
  else await client.discover();
  await client.request("tools/list");
  return { client, ms: performance.now() - start };
}

/** Resident memory of one process in MB, 0 once it is gone. */
function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** The process and all its descendants, from /proc/<pid>/task/<tid>/children. */
function tree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${out[i]}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        const children = readFileSync(`/proc/${out[i]}/task/${tid}/children`, "utf8").trim();
        if (children) for (const c of children.split(" ")) out.push(Number(c));
      } catch {
        // The task ended while we looked.
      }
    }
  }
  return out;
}

/** What a process runs: its executable and command line ("" once it is gone). */
function image(pid: number): string {
  try {
    return `${readlinkSync(`/proc/${pid}/exe`)}\0${readFileSync(`/proc/${pid}/cmdline`, "utf8")}`;
  } catch {
    return "";
  }
}

/**
 * Resident memory of a process tree in MB. A descendant that still runs the root's own program is the
 * root between fork() and exec() of a spawn (Node's spawn forks): it maps the root's pages copy-on-write,
 * so its RSS repeats the root's and adds nothing to what the tree holds. It is not counted; once it has
 * exec'd, it is.
 */
export function treeRssMb(pid: number): number {
  return treeRss(pid).mb;
}

/** treeRssMb, with what it is made of: "name MB" for each process counted. */
function treeRss(pid: number): { mb: number; parts: string[] } {
  const [root, ...descendants] = tree(pid);
  const own = image(root!);
  const counted = [root!, ...descendants.filter((p) => image(p) !== own)];
  const sizes = counted.map((p) => ({ p, mb: rssMb(p) }));
  return {
    mb: sizes.reduce((sum, { mb }) => sum + mb, 0),
    parts: sizes.map(({ p, mb }) => `${processName(p)} ${mb.toFixed(1)}`),
  };
}

function processName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
}

/**
 * Samples the RSS of a few process trees every 10 ms until stopped; `stop` returns each tree's peak in MB,
 * and `parts` what each peak was made of (to tell a server's own growth from a child's).
 */
export function sampleRss(pids: number[]): { stop: () => number[]; parts: () => string[][] } {
  const peaks = pids.map((pid) => treeRss(pid));
  const sample = () => {
    pids.forEach((pid, i) => {
      const now = treeRss(pid);
      if (now.mb > peaks[i]!.mb) peaks[i] = now;
    });
  };
  const timer = setInterval(sample, 10);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return peaks.map(({ mb }) => mb);
    },
    parts: () => peaks.map(({ parts }) => parts),
  };
}
