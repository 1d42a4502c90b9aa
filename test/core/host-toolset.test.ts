import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createToolContext } from "../../src/context.js";
import { forkContext } from "../../src/core/context.js";
import { createHost } from "../../src/core/host.js";
import { ToolResult } from "../../src/core/result.js";
import { Session } from "../../src/core/session.js";
import { defineTool } from "../../src/core/tool.js";
import { DuplicateToolError, ToolSet } from "../../src/core/toolset.js";
import { runTool } from "../../src/executor/run.js";
import { allowAllHandler, autoHandler } from "../../src/permissions/handlers.js";
import { builtinTools, toAnthropicTools, toolsFor, unavailableTools } from "../../src/registry.js";
import { tempDir, testContext } from "../helpers/context.js";

const ask = defineTool({
  name: "AskSomething",
  description: "Asks the person a question.",
  permissionLevel: "none",
  requires: ["questions"],
  inputSchema: z.strictObject({ question: z.string() }),
  async execute({ question }, ctx) {
    const answers = await ctx.host.askQuestions?.(
      [{ question, header: "Q", options: [{ label: "yes", description: "" }], multiSelect: false }],
      ctx.signal,
    );
    return ToolResult.success(`answer: ${answers?.[question] ?? "none"}`);
  },
});

const hidden = defineTool({
  name: "Hidden",
  description: "Only found through ToolSearch.",
  permissionLevel: "none",
  deferred: true,
  inputSchema: z.strictObject({}),
  execute: async () => ToolResult.success("found"),
});

describe("Host", () => {
  it("offers a capability only when its operation is there and the override agrees", () => {
    let clientAsks = false;
    const host = createHost(
      {
        permissions: allowAllHandler,
        interactive: () => clientAsks,
        askQuestions: async () => ({}),
        supports: (c) => c !== "questions" || clientAsks,
      },
      autoHandler,
    );
    expect(host.supports("permissionPrompt")).toBe(false);
    expect(host.supports("questions")).toBe(false);
    expect(host.supports("model")).toBe(false);
    clientAsks = true;
    expect(host.supports("permissionPrompt")).toBe(true);
    expect(host.supports("questions")).toBe(true);
  });

  it("a host without a permission handler answers asks with the fallback's denial", async () => {
    const host = createHost({}, autoHandler);
    const answer = await host.askPermission(
      {
        toolName: "Bash",
        input: {},
        level: "execute",
        subject: { kind: "none" },
        mode: "default",
        reason: "needs approval",
        suggestedRules: ["Bash(ls)"],
        prefixRules: [],
        workingDir: "/",
      },
      new AbortController().signal,
    );
    expect(answer.behavior).toBe("deny");
  });
});

describe("ToolSet", () => {
  it("refuses a tool whose name or alias another tool has, naming both", () => {
    const clash = defineTool({ ...hidden, name: "Read", aliases: [], deferred: false } as never);
    expect(() => builtinTools().with([clash])).toThrow(DuplicateToolError);
    expect(() => createToolContext({ workingDir: tempDir(), tools: [clash] })).toThrow(
      /uses the name "Read" of the built-in tool Read/,
    );
  });

  it("finds tools by name and alias, narrows and widens without changing the original", () => {
    const set = builtinTools();
    expect(set.get("KillShell")?.name).toBe("TaskStop");
    const reads = set.only(["Read", "Glob", "Grep"]);
    expect(reads.names()).toEqual(["Read", "Glob", "Grep"]);
    expect(set.without(["Bash"]).get("Bash")).toBeUndefined();
    expect(set.get("Bash")).toBeDefined();
  });

  it("computes provider definitions once per set and leaves deferred tools out of them", () => {
    const set = ToolSet.of([...builtinTools().only(["Read"]), hidden]);
    const first = toAnthropicTools(set);
    expect(toAnthropicTools(set)).toBe(first);
    expect(first.map((d) => d.name)).toEqual(["Read"]);
    expect(first.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
  });

  it("offers a tool only where the host provides what it needs, and says why otherwise", async () => {
    const plain = testContext({ tools: [ask] });
    expect(toolsFor(plain).map((t) => t.name)).not.toContain("AskSomething");
    const reason = unavailableTools(plain).find((u) => u.tool.name === "AskSomething")?.reason;
    expect(reason).toMatch(/needs a person to answer questions/);
    const refused = await runTool("AskSomething", { question: "go?" }, plain);
    expect(refused.isError).toBe(true);
    expect(ToolResult.text(refused)).toMatch(/not available here/);

    const host = createHost({ askQuestions: async (qs) => ({ [qs[0]!.question]: "yes" }) }, autoHandler);
    const asking = testContext({ tools: [ask], host });
    expect(toolsFor(asking).map((t) => t.name)).toContain("AskSomething");
    const answered = await runTool("AskSomething", { question: "go?" }, asking);
    expect(ToolResult.text(answered)).toBe("answer: yes");
  });

  it("includes the embedder's own tools in the provider formats of a context", () => {
    const own = defineTool({ ...hidden, name: "MyTool", deferred: false } as never);
    const ctx = testContext({ tools: [own] });
    expect(toAnthropicTools(ctx).map((d) => d.name)).toContain("MyTool");
  });
});

describe("forkContext", () => {
  it("reads through what it does not override and keeps its own mode, tools and session", async () => {
    const parent = testContext({ permissionMode: "default" });
    const session = new Session();
    const fork = forkContext(parent, {
      permissionMode: "plan",
      tools: builtinTools().only(["Read"]),
      session,
      agentType: "Explore",
    });
    expect(fork.workingDir).toBe(parent.workingDir);
    expect(fork.permissionMode).toBe("plan");
    fork.setPermissionMode("acceptEdits");
    expect(parent.permissionMode).toBe("default");
    expect(fork.session).toBe(session);
    expect(fork.agentType).toBe("Explore");
    // The fork's own tool set decides what it may call.
    const bash = await runTool("Bash", { command: "true" }, fork);
    expect(ToolResult.text(bash)).toMatch(/No tool named "Bash"/);
    // Grants made in the parent reach the fork.
    parent.addRules([
      { rule: "Read", behavior: "allow", source: { scope: "session", root: parent.workingDir } },
    ]);
    expect(fork.rules().map((r) => r.rule)).toContain("Read");
    await session.dispose();
  });

  it("decides permissions with the fork's own mode", async () => {
    const parent = testContext({ permissionMode: "bypassPermissions" });
    const fork = forkContext(parent, { permissionMode: "plan" });
    const write = await runTool("Write", { file_path: "x.txt", content: "x" }, fork);
    expect(write.isError).toBe(true);
    expect(ToolResult.text(write)).toMatch(/denied/);
  });
});
