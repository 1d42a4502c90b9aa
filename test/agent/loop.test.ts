import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { anthropicProvider } from "../../src/agent/anthropic.js";
import type { AgentEvent } from "../../src/agent/loop.js";
import { openAIProvider } from "../../src/agent/openai.js";
import { costOf, totalCost } from "../../src/agent/prices.js";
import type { ModelProvider } from "../../src/agent/provider.js";
import { AgentRuntime, chooseModel, DEFAULT_MODEL } from "../../src/agent/runtime.js";
import type { ToolContext } from "../../src/core/context.js";
import { createHost } from "../../src/core/host.js";
import type { PermissionMode } from "../../src/core/permission-level.js";
import { ToolResult } from "../../src/core/result.js";
import type { Settings } from "../../src/core/settings.js";
import { type AnyTool, defineTool } from "../../src/core/tool.js";
import { autoHandler } from "../../src/permissions/handlers.js";
import { emptySettings } from "../../src/settings/types.js";
import { taskStoreSlot } from "../../src/tasks/store.js";
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
  options: {
    flavour?: Flavour;
    mode?: PermissionMode;
    contextWindow?: number;
    /** Settings for the workspace (rules, hooks), and files to put in it before the agent starts. */
    config?: (workingDir: string) => Settings;
    files?: Record<string, string>;
    retry?: { baseDelayMs: number; maxDelayMs: number };
    tools?: AnyTool[];
    /**
     * How long a model request may go without a byte before it counts as stalled and is retried (2 s, so
     * the stall tests run quickly); a stand-in step that waits for a process of its own needs longer.
     */
    idleMs?: number;
  } = {},
) {
  const stand = await startStandIn(steps);
  stands.push(stand);
  const provider: ModelProvider =
    options.flavour === "openai"
      ? openAIProvider({ apiKey: "local", baseURL: `${stand.url}/v1`, idleMs: options.idleMs ?? 2_000 })
      : anthropicProvider({ apiKey: "test-key", baseURL: stand.url, idleMs: options.idleMs ?? 2_000 });
  const runtime = new AgentRuntime({
    provider,
    model: "claude-sonnet-5-5",
    configDir: tempDir("cc-tools-config-"),
    retry: options.retry ?? { baseDelayMs: 10, maxDelayMs: 50 },
    contextWindow: options.contextWindow,
  });
  const workingDir = tempDir();
  for (const [path, content] of Object.entries(options.files ?? {})) {
    mkdirSync(dirname(join(workingDir, path)), { recursive: true });
    writeFileSync(join(workingDir, path), content);
  }
  const ctx = testContext({
    workingDir,
    permissionMode: options.mode ?? "bypassPermissions",
    host: createHost({ model: runtime }, autoHandler),
    ...(options.config ? { config: options.config(workingDir) } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
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

  it("retries a stream that ends before the reply is complete, and keeps nothing of the cut reply", async () => {
    const { agent, ctx, stand } = await setup(
      [
        { content: [toolCall("Write", { file_path: "cut.txt", content: "x" }).content[0]!], truncated: true },
        text("after the retry"),
      ],
      { flavour },
    );
    const events: AgentEvent[] = [];
    const result = await agent.run("hi", new AbortController().signal, (e) => events.push(e));
    expect(result.text).toBe("after the retry");
    expect(stand.requests).toHaveLength(2);
    expect(events.some((e) => e.type === "retry")).toBe(true);
    expect(existsSync(join(ctx.workingDir, "cut.txt"))).toBe(false);
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

  it("answers a tool call whose arguments are not valid JSON with an error that says so, and goes on", async () => {
    const { agent, ctx, stand } = await setup([
      {
        content: [
          {
            type: "tool_use",
            id: "t1",
            name: "Write",
            input: {},
            rawInput: '{"file_path": "a.txt", "content": "x',
          },
        ],
      },
      text("I will fix my call"),
    ]);
    const result = await agent.run("write", new AbortController().signal);
    expect(result.text).toBe("I will fix my call");
    const [error] = toolResults(stand.requests[1]);
    expect(error.is_error).toBe(true);
    expect(error.content[0].text).toMatch(
      /arguments of this Write call are not valid JSON \(.+\), so it did not run/,
    );
    expect(error.content[0].text).toContain('{"file_path": "a.txt", "content": "x');
    expect(existsSync(join(ctx.workingDir, "a.txt"))).toBe(false);
  });

  it("answers an unknown tool name with an error listing the tools", async () => {
    const { agent, stand } = await setup([toolCall("Frobnicate", { a: 1 }), text("sorry")]);
    await agent.run("go", new AbortController().signal);
    const [error] = toolResults(stand.requests[1]);
    expect(error.is_error).toBe(true);
    expect(error.content[0].text).toMatch(/No tool named "Frobnicate".*Read/);
  });

  it("keeps a huge tool result within the tool's budget, the whole output spilled to a file", async () => {
    const { agent, stand } = await setup([
      toolCall("Bash", { command: "head -c 3000000 /dev/zero | tr '\\0' a; echo; echo END-MARK" }),
      text("big"),
    ]);
    await agent.run("big output", new AbortController().signal);
    const [result] = toolResults(stand.requests[1]);
    const shown: string = result.content[0].text;
    expect(shown.length).toBeLessThan(100_000);
    expect(shown).toContain("END-MARK");
    const spill = /(\/\S+\.(?:txt|log|output))/.exec(shown)?.[1];
    expect(spill && readFileSync(spill, "utf8").length).toBeGreaterThan(3_000_000);
  });

  it("waits as long as retry-after (or retry-after-ms) says, up to the longest retry delay", async () => {
    const { agent } = await setup(
      [
        { status: 429, headers: { "retry-after": "1" } },
        { status: 529, headers: { "retry-after-ms": "300" } },
        { status: 429, headers: { "retry-after": "3600" } },
        text("made it"),
      ],
      { retry: { baseDelayMs: 10, maxDelayMs: 1_500 } },
    );
    const delays: number[] = [];
    const started = Date.now();
    const result = await agent.run("hi", new AbortController().signal, (e) => {
      if (e.type === "retry") delays.push(e.delayMs);
    });
    expect(result.text).toBe("made it");
    expect(delays).toEqual([1_000, 300, 1_500]);
    // A lower bound only: it really waited (a busy machine can only make it slower).
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_700);
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
    expect(result.text).toBe("part one part two");
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
    const usage = ctx.costTracker.byModel().get("claude-sonnet-5-5")!;
    expect(usage.inputTokens).toBe(1000);
    const expected = (1000 * 3 + 500 * 15 + 2000 * 0.3) / 1e6;
    expect(costOf("claude-sonnet-5-5", usage)).toBeCloseTo(expected, 10);
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
      { mode: "default", files: { ".claude/agents/wizard.md": "A wizard, but no frontmatter.\n" } },
    );
    await agent.run("go", new AbortController().signal);
    const [unknown, escalate] = toolResults(stand.requests[1]);
    expect(unknown.content[0].text).toMatch(
      /No agent type named "Wizard". Available: .*general-purpose.*Explore.*Plan\. Skipped definitions: .*wizard\.md: no frontmatter/,
    );
    expect(escalate.content[0].text).toMatch(
      /cannot run in bypassPermissions mode while you run in default mode/,
    );
  });

  it("holds a sub-agent to the parent's deny rules and hooks: PreToolUse and SubagentStop see its agent_type", async () => {
    const log = (name: string) =>
      `cat >> "$CLAUDE_PROJECT_DIR/${name}"; echo >> "$CLAUDE_PROJECT_DIR/${name}"`;
    const { agent, ctx, stand } = await setup(
      routed(
        [toolCall("Task", { description: "write", prompt: "SUBTASK: write x.txt" }, "t1"), text("main done")],
        [toolCall("Write", { file_path: "x.txt", content: "x" }), text("I could not write x.txt")],
      ),
      {
        config: (dir) => {
          const config = emptySettings(dir);
          config.rules = [{ rule: "Write", behavior: "deny", source: { scope: "project", root: dir } }];
          config.hooks.PreToolUse = [
            { matcher: "Write", hooks: [{ type: "command", command: log("pre.log") }] },
          ];
          config.hooks.SubagentStop = [{ hooks: [{ type: "command", command: log("stop.log") }] }];
          return config;
        },
      },
    );
    const result = await agent.run("delegate", new AbortController().signal);
    expect(result.text).toBe("main done");
    expect(existsSync(join(ctx.workingDir, "x.txt"))).toBe(false);
    const subRequests = stand.requests.filter((r) => JSON.stringify(r.messages[0]).includes("SUBTASK"));
    const [refusal] = toolResults(subRequests[1]);
    expect(refusal.is_error).toBe(true);
    expect(refusal.content[0].text).toMatch(/denied/i);
    const pre = JSON.parse(readFileSync(join(ctx.workingDir, "pre.log"), "utf8"));
    expect(pre).toMatchObject({
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      agent_type: "general-purpose",
    });
    const stop = JSON.parse(readFileSync(join(ctx.workingDir, "stop.log"), "utf8"));
    expect(stop).toMatchObject({
      hook_event_name: "SubagentStop",
      agent_type: "general-purpose",
      agent_id: expect.stringMatching(/^agent-[0-9a-f]{8}$/),
    });
  });

  it("runs a custom agent from .claude/agents with its tools, model and instructions, and sums its cost", async () => {
    const { agent, ctx, stand } = await setup(
      routed(
        [
          toolCall(
            "Task",
            { description: "review", prompt: "SUBTASK: review", subagent_type: "reviewer" },
            "t1",
          ),
          text("main done"),
        ],
        [
          {
            content: [{ type: "text", text: "looks fine" }],
            usage: { input_tokens: 2_000, output_tokens: 100 },
          },
        ],
      ),
      {
        files: {
          ".claude/agents/reviewer.md":
            "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\nmodel: haiku\n---\nYou review code. REVIEWER-PROMPT\n",
        },
      },
    );
    await agent.run("delegate", new AbortController().signal);
    const sub = stand.requests.find((r) => JSON.stringify(r.messages[0]).includes("SUBTASK"));
    expect(sub.tools.map((t: { name: string }) => t.name).sort()).toEqual(["Grep", "Read"]);
    expect(sub.model).toBe("claude-haiku-5-5");
    expect(sub.system).toContain("REVIEWER-PROMPT");
    // The main agent was told which agent types there are; the sub-agent, which has no Task, was not.
    const main = stand.requests[0];
    expect(main.system).toMatch(
      /Agent types for the Task tool \(subagent_type\):\n- reviewer: Reviews code\n- general-purpose: /,
    );
    expect(sub.system).not.toContain("Agent types for the Task tool");
    const byModel = ctx.costTracker.byModel();
    expect([...byModel.keys()].sort()).toEqual(["claude-haiku-5-5", "claude-sonnet-5-5"]);
    expect(byModel.get("claude-haiku-5-5")!.inputTokens).toBe(2_000);
    const sum = [...byModel].reduce((total, [model, usage]) => total + costOf(model, usage)!, 0);
    expect(totalCost(ctx.costTracker)).toBeCloseTo(sum, 10);
    expect(costOf("claude-haiku-5-5", byModel.get("claude-haiku-5-5")!)).toBeGreaterThan(0);
  });

  it("keeps a sub-agent's mode changes its own: the parent's mode stays as it was", async () => {
    const enterPlan = defineTool({
      name: "GoPlan",
      description: "Switches to plan mode.",
      permissionLevel: "none",
      inputSchema: z.strictObject({}),
      async execute(_input, ctx) {
        ctx.setPermissionMode("plan");
        return ToolResult.success(`now in ${ctx.permissionMode} mode`);
      },
    });
    const { agent, ctx, stand } = await setup(
      routed(
        [toolCall("Task", { description: "plan", prompt: "SUBTASK: plan" }, "t1"), text("main done")],
        [toolCall("GoPlan", {}), text("planned")],
      ),
      { mode: "acceptEdits", tools: [enterPlan] },
    );
    await agent.run("delegate", new AbortController().signal);
    const sub = stand.requests.filter((r) => JSON.stringify(r.messages[0]).includes("SUBTASK"));
    expect(toolResults(sub[1])[0].content[0].text).toBe("now in plan mode");
    expect(ctx.permissionMode).toBe("acceptEdits");
  });

  it("runs an isolated agent in its own worktree: kept when it changed something, removed when not", async () => {
    const { agent, ctx, stand } = await setup(
      routed(
        [
          {
            content: [
              {
                type: "tool_use",
                id: "a",
                name: "Task",
                input: { description: "w", prompt: "SUBTASK write", name: "writer", isolation: "worktree" },
              },
              {
                type: "tool_use",
                id: "b",
                name: "Task",
                input: { description: "l", prompt: "SUBTASK look", name: "looker", isolation: "worktree" },
              },
            ],
          },
          text("main done"),
        ],
        [
          (request) =>
            JSON.stringify(request.messages).includes("tool_result")
              ? text("finished")
              : JSON.stringify(request.messages[0]).includes("SUBTASK write")
                ? toolCall("Write", { file_path: "new.txt", content: "from the agent\n" })
                : toolCall("Glob", { pattern: "*" }),
        ],
      ),
    );
    const git = (...args: string[]) => execFileSync("git", args, { cwd: ctx.workingDir, encoding: "utf8" });
    writeFileSync(join(ctx.workingDir, "a.txt"), "a\n");
    git("init", "-q");
    git("add", ".");
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init");
    await agent.run("isolate", new AbortController().signal);
    const [writer, looker] = toolResults(stand.requests.at(-1));
    const kept = join(ctx.workingDir, ".claude", "worktrees", "writer");
    expect(writer.content[0].text).toBe(
      `finished\n\nThe agent's work is in the worktree ${kept} (branch agent/writer).`,
    );
    expect(readFileSync(join(kept, "new.txt"), "utf8")).toBe("from the agent\n");
    expect(existsSync(join(ctx.workingDir, "new.txt"))).toBe(false);
    expect(looker.content[0].text).toBe(
      "finished\n\nThe agent changed nothing, so its worktree was removed.",
    );
    expect(existsSync(join(ctx.workingDir, ".claude", "worktrees", "looker"))).toBe(false);
    expect(git("branch", "--list", "agent/*")).not.toContain("agent/looker");
    expect(git("branch", "--list", "agent/*")).toContain("agent/writer");
  });

  it("bounds nesting: a sub-agent that may start sub-agents is refused past the depth limit", async () => {
    const nest = (n: number) =>
      toolCall(
        "Task",
        { description: "nest", prompt: `SUBTASK level ${n}`, subagent_type: "nester" },
        `n${n}`,
      );
    const { agent, stand } = await setup(
      [
        (request) => {
          const first = JSON.stringify(request.messages[0]);
          const level = Number(/SUBTASK level (\d)/.exec(first)?.[1] ?? 0);
          const last = JSON.stringify(request.messages.at(-1));
          return last.includes("tool_result") ? text(`level ${level} done`) : nest(level + 1);
        },
      ],
      {
        files: {
          ".claude/agents/nester.md": "---\nname: nester\ndescription: nests\ntools: Task\n---\nNest.\n",
        },
      },
    );
    const result = await agent.run("nest", new AbortController().signal);
    expect(result.text).toBe("level 0 done");
    // Main (0) starts 1, 1 starts 2; 2's Task call is refused without a model call.
    const levels = new Set(
      stand.requests.map((r) => /SUBTASK level (\d)/.exec(JSON.stringify(r.messages[0]))?.[1] ?? "0"),
    );
    expect([...levels].sort()).toEqual(["0", "1", "2"]);
    const deepest = stand.requests
      .filter((r) => JSON.stringify(r.messages[0]).includes("SUBTASK level 2"))
      .at(-1);
    expect(toolResults(deepest)[0].content[0].text).toMatch(/nest 2 deep at most/);
  });

  it("stops a background sub-agent with TaskStop, and the processes of its tools with it", async () => {
    const seconds = uniqueSeconds();
    const { agent, ctx, stand } = await setup(
      routed(
        [
          toolCall(
            "Task",
            { description: "slow job", prompt: "SUBTASK: sleep", run_in_background: true },
            "t1",
          ),
          async (request) => {
            await eventually(() => survivors(`sleep ${seconds}`).length > 0, 10_000);
            const id = /task (agent_\d+)/.exec(JSON.stringify(request.messages))?.[1];
            return toolCall("TaskStop", { task_id: id }, "t2");
          },
          text("stopped it"),
        ],
        [toolCall("Bash", { command: `sleep ${seconds}` }), text("slept")],
      ),
      // The second step waits for the sub-agent's sleep before it answers: under load that is seconds.
      { idleMs: 30_000 },
    );
    const result = await agent.run("start and stop", new AbortController().signal);
    expect(result.text).toBe("stopped it");
    expect(toolResults(stand.requests.at(-1))[0].is_error).toBeUndefined();
    expect(await eventually(() => survivors(`sleep ${seconds}`).length === 0)).toBe(true);
    expect(
      ctx.session
        .get(taskStoreSlot)
        .list()
        .map((t) => t.status),
    ).toEqual(["killed"]);
  });
});

describe("Task availability", () => {
  it("is offered only where the host has a model", () => {
    const plain: ToolContext = testContext();
    expect(plain.tools.availableFor(plain.host).unavailable.map((u) => u.tool.name)).toContain("Task");
  });
});

describe("models on another provider", () => {
  it("stand for its own model where Claude's aliases or defaults would be sent (Task's model, WebFetch's prompt)", async () => {
    const { agent, runtime, stand } = await setup(
      [
        // Chat completions: the system message first, then the prompt; tool results are `tool` messages.
        (request) =>
          JSON.stringify(request.messages[1]).includes("SUBTASK")
            ? text("sub done")
            : request.messages.some((m: { role: string }) => m.role === "tool")
              ? text("main done")
              : toolCall("Task", { description: "d", prompt: "SUBTASK", model: "haiku" }),
      ],
      { flavour: "openai" },
    );
    await agent.run("go", new AbortController().signal);
    await runtime.complete({ prompt: "one-shot" }, new AbortController().signal);
    expect(new Set(stand.requests.map((r) => r.model))).toEqual(new Set(["claude-sonnet-5-5"]));
    expect(stand.requests).toHaveLength(4);
  });
});

describe("the main model", () => {
  it("is --model, else ANTHROPIC_MODEL, else the model setting, else a current Sonnet (the MCP server's too)", () => {
    expect(chooseModel("opus", { ANTHROPIC_MODEL: "env-model" }, "setting-model")).toBe("claude-opus-5-5");
    expect(chooseModel(undefined, { ANTHROPIC_MODEL: "env-model" }, "setting-model")).toBe("env-model");
    expect(chooseModel(undefined, {}, "haiku")).toBe("claude-haiku-5-5");
    expect(chooseModel(undefined, {}, 42)).toBe(DEFAULT_MODEL);
  });
});
