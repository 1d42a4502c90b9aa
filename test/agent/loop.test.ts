import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { anthropicProvider } from "../../src/agent/anthropic.js";
import type { AgentEvent } from "../../src/agent/loop.js";
import { openAIProvider } from "../../src/agent/openai.js";
import { costOf, totalCost } from "../../src/agent/prices.js";
import type { ModelProvider } from "../../src/agent/provider.js";
import { AgentRuntime } from "../../src/agent/runtime.js";
import type { ToolContext } from "../../src/core/context.js";
import { createHost } from "../../src/core/host.js";
import type { PermissionMode } from "../../src/core/permission-level.js";
import { autoHandler } from "../../src/permissions/handlers.js";
import { tempDir, testContext } from "../helpers/context.js";
import { eventually, survivors, uniqueSeconds } from "../process/ps.js";
import { type StandIn, type Step, startStandIn, text, toolCall } from "./standin.js";

const stands: StandIn[] = [];
afterEach(async () => {
  while (stands.length > 0) await stands.pop()!.close();
});

type Flavour = "anthropic" | "openai";

async function setup(
  steps: Step[],
  options: { flavour?: Flavour; mode?: PermissionMode; contextWindow?: number } = {},
) {
  const stand = await startStandIn(steps);
  stands.push(stand);
  const provider: ModelProvider =
    options.flavour === "openai"
      ? openAIProvider({ apiKey: "local", baseURL: `${stand.url}/v1`, idleMs: 2_000 })
      : anthropicProvider({ apiKey: "test-key", baseURL: stand.url, idleMs: 2_000 });
  const runtime = new AgentRuntime({
    provider,
    model: "claude-sonnet-4-5",
    configDir: tempDir("cc-tools-config-"),
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
    contextWindow: options.contextWindow,
  });
  const ctx = testContext({
    permissionMode: options.mode ?? "bypassPermissions",
    host: createHost({ model: runtime }, autoHandler),
  });
  const agent = await runtime.createAgent(ctx);
  return { stand, runtime, ctx, agent };
}

/** The tool_result blocks of the last user message a request carried. */
// biome-ignore lint/suspicious/noExplicitAny: request JSON.
function toolResults(request: any): any[] {
  const last = request.messages.at(-1);
  return last.content.filter((c: { type: string }) => c.type === "tool_result");
}

describe.each<Flavour>(["anthropic", "openai"])("the agent loop (%s)", (flavour) => {
  it("runs tools across turns, feeds their results back, and ends with the final text", async () => {
    const { agent, ctx, stand } = await setup(
      [
        toolCall("Write", { file_path: "notes.txt", content: "hello\n" }, "t1"),
        toolCall("Read", { file_path: "notes.txt" }, "t2"),
        text("The file says hello."),
      ],
      { flavour },
    );
    const events: AgentEvent[] = [];
    const result = await agent.run("Write and read notes.txt", new AbortController().signal, (e) =>
      events.push(e),
    );
    expect(result.stop).toBe("end_turn");
    expect(result.text).toBe("The file says hello.");
    expect(result.turns).toBe(3);
    expect(readFileSync(join(ctx.workingDir, "notes.txt"), "utf8")).toBe("hello\n");
    expect(stand.requests).toHaveLength(3);
    if (flavour === "anthropic") {
      expect(toolResults(stand.requests[2])[0].content[0].text).toContain("hello");
      expect(stand.requests[0].tools.at(-1).cache_control).toEqual({ type: "ephemeral" });
      expect(stand.requests[0].system).toContain(ctx.workingDir);
    } else {
      const toolMessage = stand.requests[2].messages.findLast((m: { role: string }) => m.role === "tool");
      expect(toolMessage.content).toContain("hello");
    }
    expect(events.filter((e) => e.type === "tool_end")).toHaveLength(2);
  });

  it("runs a turn's read-only calls together and answers them in one message, in call order", async () => {
    const { agent, ctx, stand } = await setup(
      [
        {
          content: [
            { type: "tool_use", id: "a", name: "Read", input: { file_path: "a.txt" } },
            { type: "tool_use", id: "b", name: "Read", input: { file_path: "b.txt" } },
          ],
        },
        text("done"),
      ],
      { flavour },
    );
    writeFileSync(join(ctx.workingDir, "a.txt"), "alpha\n");
    writeFileSync(join(ctx.workingDir, "b.txt"), "beta\n");
    await agent.run("read both", new AbortController().signal);
    if (flavour === "anthropic") {
      const results = toolResults(stand.requests[1]);
      expect(results.map((r) => r.tool_use_id)).toEqual(["a", "b"]);
      expect(results[1].content[0].text).toContain("beta");
    } else {
      const tools = stand.requests[1].messages.filter((m: { role: string }) => m.role === "tool");
      expect(tools.map((m: { tool_call_id: string }) => m.tool_call_id)).toEqual(["a", "b"]);
    }
  });

  it("retries after a 529 (and a 429 with retry-after) and goes on", async () => {
    const { agent, stand } = await setup(
      [
        { status: 529, message: "Overloaded" },
        { status: 429, headers: { "retry-after": "0" } },
        text("made it"),
      ],
      { flavour },
    );
    const retries: AgentEvent[] = [];
    const result = await agent.run(
      "hi",
      new AbortController().signal,
      (e) => e.type === "retry" && retries.push(e),
    );
    expect(result.text).toBe("made it");
    expect(retries).toHaveLength(2);
    expect(stand.requests).toHaveLength(3);
  });
});

describe("the agent loop", () => {
  it("lets the model recover from a permission denial: the refusal comes back as an error result", async () => {
    const { agent, ctx, stand } = await setup(
      [
        toolCall("Write", { file_path: "important.txt", content: "gone" }, "t1"),
        text("I could not change it; please allow the edit."),
      ],
      { mode: "default" },
    );
    writeFileSync(join(ctx.workingDir, "important.txt"), "keep");
    const result = await agent.run("overwrite important.txt", new AbortController().signal);
    const [refusal] = toolResults(stand.requests[1]);
    expect(refusal.is_error).toBe(true);
    expect(refusal.content[0].text).toMatch(/denied/);
    expect(readFileSync(join(ctx.workingDir, "important.txt"), "utf8")).toBe("keep");
    expect(result.text).toMatch(/could not change/);
  });

  it("an interrupted run stops its running tools and leaves no process behind", async () => {
    const secs = uniqueSeconds();
    const { agent } = await setup([toolCall("Bash", { command: `sleep ${secs}` }), text("never")]);
    const controller = new AbortController();
    const running = agent.run("wait", controller.signal);
    expect(await eventually(() => survivors(`sleep ${secs}`).length > 0)).toBe(true);
    controller.abort();
    const result = await running;
    expect(result.stop).toBe("cancelled");
    expect(await eventually(() => survivors(`sleep ${secs}`).length === 0)).toBe(true);
  });

  it("retries a stalled stream", async () => {
    const { agent, stand } = await setup([{ stall: true }, text("after the stall")]);
    const result = await agent.run("hi", new AbortController().signal);
    expect(result.text).toBe("after the stall");
    expect(stand.requests).toHaveLength(2);
  });

  it("gives up with a clear error on a non-retryable failure", async () => {
    const { agent, stand } = await setup([{ status: 401, message: "invalid x-api-key" }]);
    const result = await agent.run("hi", new AbortController().signal);
    expect(result.stop).toBe("error");
    expect(result.text).toMatch(/invalid x-api-key/);
    expect(stand.requests).toHaveLength(1);
  });

  it("asks the model to go on when a reply is cut at max_tokens", async () => {
    const { agent, stand } = await setup([
      { content: [{ type: "text", text: "part one" }], stop_reason: "max_tokens" },
      text(" part two"),
    ]);
    const result = await agent.run("write a lot", new AbortController().signal);
    expect(result.text).toBe(" part two");
    expect(JSON.stringify(stand.requests[1].messages.at(-1))).toMatch(/cut off/);
  });

  it("stops at the turn limit and says so", async () => {
    const { runtime, ctx } = await setup([toolCall("Glob", { pattern: "*" })]);
    const agent = await runtime.createAgent(ctx, { maxTurns: 2 });
    const result = await agent.run("loop forever", new AbortController().signal);
    expect(result.stop).toBe("max_turns");
    expect(result.text).toMatch(/stopped after 2 turns/);
  });

  it("near the context window elides old tool results first, keeping the recent ones whole", async () => {
    const files = [1, 2, 3, 4, 5, 6, 7].map((n) => `f${n}.txt`);
    const { agent, ctx, stand } = await setup(
      [...files.map((f) => toolCall("Read", { file_path: f })), text("read them all")],
      {
        contextWindow: 5_000,
      },
    );
    for (const f of files) writeFileSync(join(ctx.workingDir, f), `${"y".repeat(2_400)}\n`);
    const events: AgentEvent[] = [];
    const result = await agent.run("read the files", new AbortController().signal, (e) => events.push(e));
    expect(result.text).toBe("read them all");
    expect(events.filter((e) => e.type === "compacted").map((e) => (e as { how: string }).how)).toEqual([
      "elided",
    ]);
    const last = JSON.stringify(stand.requests.at(-1).messages);
    expect(last).toContain("old tool output elided");
    // The latest results are still there in full.
    expect(toolResults(stand.requests.at(-1))[0].content[0].text).toContain("y".repeat(1_500));
  });

  it("summarises the history when eliding is not enough, and goes on from the summary", async () => {
    const { agent, ctx, stand } = await setup(
      [
        toolCall("Read", { file_path: "big.txt" }),
        (request) =>
          JSON.stringify(request.messages).includes("Summarise this conversation")
            ? text("SUMMARY: read one big file")
            : text("unexpected"),
        text("final after summary"),
      ],
      { contextWindow: 2_000 },
    );
    writeFileSync(join(ctx.workingDir, "big.txt"), `${"x".repeat(8_000)}\n`);
    const events: AgentEvent[] = [];
    const result = await agent.run("read the big file", new AbortController().signal, (e) => events.push(e));
    expect(events.filter((e) => e.type === "compacted").map((e) => (e as { how: string }).how)).toEqual([
      "summarized",
    ]);
    expect(result.text).toBe("final after summary");
    const afterSummary = stand.requests.at(-1);
    expect(afterSummary.messages).toHaveLength(1);
    expect(JSON.stringify(afterSummary.messages)).toContain("SUMMARY: read one big file");
    expect(JSON.stringify(afterSummary.messages)).not.toContain("x".repeat(100));
  });

  it("counts tokens and cost per model, sub-agents included", async () => {
    const { agent, ctx } = await setup([
      {
        content: [{ type: "text", text: "ok" }],
        usage: { input_tokens: 1000, output_tokens: 500, cache_read_input_tokens: 2000 },
      },
    ]);
    const result = await agent.run("hi", new AbortController().signal);
    expect(result.usage).toMatchObject({ inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000 });
    const usage = ctx.costTracker.byModel().get("claude-sonnet-4-5")!;
    expect(usage.inputTokens).toBe(1000);
    const expected = (1000 * 3 + 500 * 15 + 2000 * 0.3) / 1e6;
    expect(costOf("claude-sonnet-4-5", usage)).toBeCloseTo(expected, 10);
    expect(totalCost(ctx.costTracker)).toBeCloseTo(expected, 10);
  });
});

describe("Task sub-agents", () => {
  /** Routes requests: the sub-agent's conversation starts with its prompt; everything else is the main agent's. */
  function routed(main: Step[], sub: Step[]): Step[] {
    let m = 0;
    let s = 0;
    const serve = (list: Step[], i: number, request: unknown) => {
      const step = list[Math.min(i, list.length - 1)]!;
      return typeof step === "function" ? step(request) : step;
    };
    return [
      (request) => {
        const first = JSON.stringify(request.messages[0]);
        return first.includes("SUBTASK") ? serve(sub, s++, request) : serve(main, m++, request);
      },
    ];
  }

  it("runs a sub-agent in the foreground: its own conversation and tools, its final text and id as the result", async () => {
    const { agent, ctx, stand } = await setup(
      routed(
        [
          toolCall(
            "Task",
            { description: "find files", prompt: "SUBTASK: list the files", subagent_type: "Explore" },
            "t1",
          ),
          text("main done"),
        ],
        [toolCall("Glob", { pattern: "*.md" }), text("There is one file: readme.md")],
      ),
    );
    writeFileSync(join(ctx.workingDir, "readme.md"), "# hi\n");
    const result = await agent.run("delegate", new AbortController().signal);
    expect(result.text).toBe("main done");
    const subRequests = stand.requests.filter((r) => JSON.stringify(r.messages[0]).includes("SUBTASK"));
    expect(subRequests.length).toBe(2);
    // Explore is read-only: no Write, Edit or Bash among its tools, and no Task.
    const subTools = subRequests[0].tools.map((t: { name: string }) => t.name);
    expect(subTools).toContain("Glob");
    expect(subTools).not.toContain("Write");
    expect(subTools).not.toContain("Task");
    const [taskResult] = toolResults(stand.requests.at(-1));
    expect(taskResult.content[0].text).toBe("There is one file: readme.md");
    expect(taskResult.content[1].text).toMatch(/agentId: agent-[0-9a-f]{8}/);
    expect(taskResult.content[1].text).toMatch(
      /<usage>total_tokens: \d+\ntool_uses: 1\nduration_ms: \d+<\/usage>/,
    );
  });

  it("runs a sub-agent in the background as a task that TaskOutput reads", async () => {
    const { agent, stand } = await setup(
      routed(
        [
          toolCall(
            "Task",
            { description: "bg job", prompt: "SUBTASK: say hi", run_in_background: true },
            "t1",
          ),
          (request) => {
            const id = /task (agent_\d+)/.exec(JSON.stringify(request.messages))?.[1];
            return toolCall("TaskOutput", { task_id: id, block: true, timeout: 10_000 }, "t2");
          },
          text("main done"),
        ],
        [text("hi from the background")],
      ),
    );
    const result = await agent.run("delegate in background", new AbortController().signal);
    expect(result.text).toBe("main done");
    const [output] = toolResults(stand.requests.at(-1));
    expect(output.content[0].text).toContain("hi from the background");
    expect(output.content[0].text).toContain("<status>completed</status>");
  });

  it("refuses an unknown agent type, listing the known ones, and a mode more permissive than the parent's", async () => {
    const { agent, stand } = await setup(
      [
        {
          content: [
            {
              type: "tool_use",
              id: "a",
              name: "Task",
              input: { description: "x", prompt: "SUBTASK", subagent_type: "Wizard" },
            },
            {
              type: "tool_use",
              id: "b",
              name: "Task",
              input: { description: "x", prompt: "SUBTASK", mode: "bypassPermissions" },
            },
          ],
        },
        text("ok"),
      ],
      { mode: "default" },
    );
    await agent.run("go", new AbortController().signal);
    const [unknown, escalate] = toolResults(stand.requests[1]);
    expect(unknown.content[0].text).toMatch(
      /No agent type named "Wizard". Available: .*general-purpose.*Explore.*Plan/,
    );
    expect(escalate.content[0].text).toMatch(
      /cannot run in bypassPermissions mode while you run in default mode/,
    );
  });
});

describe("Task availability", () => {
  it("is offered only where the host has a model", () => {
    const plain: ToolContext = testContext();
    expect(plain.tools.availableFor(plain.host).unavailable.map((u) => u.tool.name)).toContain("Task");
  });
});
