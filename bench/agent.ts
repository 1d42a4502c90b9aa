/**
 * The agent loop's own overhead per turn: a conversation of tool-calling turns against the loopback
 * stand-in of the Anthropic API (test/agent/standin.ts), minus the time spent in the model call (the
 * provider's `send`, stand-in included) and in the tools (tool_start → tool_end). What is left is the
 * loop's bookkeeping: hooks, the request it builds, compaction checks, appending messages.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { anthropicProvider } from "../src/agent/anthropic.js";
import type { ModelProvider } from "../src/agent/provider.js";
import { AgentRuntime, DEFAULT_MODEL } from "../src/agent/runtime.js";
import { createToolContext } from "../src/context.js";
import { createHost } from "../src/core/host.js";
import { autoHandler } from "../src/permissions/handlers.js";
import { startStandIn, text, toolCall } from "../test/agent/standin.js";
import type { Bench } from "./lib.js";

const TURNS = 40;

const bench: Bench = async (report, options) => {
  const turns = options.quick ? 15 : TURNS;
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "cc-tools-bench-agent-")));
  writeFileSync(join(dir, "notes.txt"), "hello\n");
  const steps = [
    ...Array.from({ length: turns - 1 }, (_, i) => toolCall("Read", { file_path: "notes.txt" }, `t${i}`)),
    text("done"),
  ];
  const stand = await startStandIn(steps);
  try {
    const real = anthropicProvider({ apiKey: "bench", baseURL: stand.url, idleMs: 10_000 });
    let modelMs = 0;
    const provider: ModelProvider = {
      name: real.name,
      async send(request, signal, onEvent) {
        const start = performance.now();
        try {
          return await real.send(request, signal, onEvent);
        } finally {
          modelMs += performance.now() - start;
        }
      },
    };
    const runtime = new AgentRuntime({ provider, model: DEFAULT_MODEL, configDir: join(dir, "config") });
    const ctx = createToolContext({
      workingDir: dir,
      permissionMode: "bypassPermissions",
      host: createHost({ model: runtime }, autoHandler),
    });
    const agent = await runtime.createAgent(ctx);
    let toolMs = 0;
    const toolStarts = new Map<string, number>();
    const start = performance.now();
    const result = await agent.run("Read notes.txt many times", new AbortController().signal, (event) => {
      if (event.type === "tool_start") toolStarts.set(event.id, performance.now());
      if (event.type === "tool_end") toolMs += performance.now() - toolStarts.get(event.id)!;
    });
    const totalMs = performance.now() - start;
    if (result.stop !== "end_turn" || result.turns !== turns)
      throw new Error(`bench: the agent run ended with ${result.stop} after ${result.turns} turns`);
    const perTurn = (x: number) => x / turns;
    report({
      name: `agent loop overhead per turn (${turns} turns)`,
      baseline: "model call (stand-in)",
      oursMs: perTurn(totalMs - modelMs - toolMs),
      baselineMs: perTurn(modelMs),
      targetMs: 5,
      note: `tools ${perTurn(toolMs).toFixed(1)} ms/turn`,
    });
    await ctx.session.dispose();
  } finally {
    await stand.close();
    rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
