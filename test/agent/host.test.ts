import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { anthropicProvider } from "../../src/agent/anthropic.js";
import { agentHost, MAIN_CONVERSATION } from "../../src/agent/host.js";
import { AgentRuntime } from "../../src/agent/runtime.js";
import type { ToolContext } from "../../src/core/context.js";
import type { PermissionMode } from "../../src/core/permission-level.js";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { inboxSlot } from "../../src/messages/inbox.js";
import { taskStoreSlot } from "../../src/tasks/store.js";
import { tempDir, testContext } from "../helpers/context.js";
import { eventually, survivors, uniqueSeconds } from "../process/ps.js";
import { type StandIn, startStandIn, text, toolCall } from "./standin.js";

const stands: StandIn[] = [];
afterEach(async () => {
  while (stands.length > 0) await stands.pop()!.close();
});

/** The agent host over a runtime that talks to `stand`, and the main conversation's context. */
function hostOn(stand: StandIn, options: { idleMs?: number; permissionMode?: PermissionMode } = {}) {
  const runtime = new AgentRuntime({
    provider: anthropicProvider({ apiKey: "k", baseURL: stand.url, idleMs: options.idleMs ?? 5_000 }),
    model: "claude-sonnet-5-5",
    configDir: tempDir("cc-tools-config-"),
  });
  let main: ToolContext | undefined;
  const host = agentHost({ runtime, mainContext: () => main });
  const ctx = testContext({ host, permissionMode: options.permissionMode });
  main = ctx;
  return { runtime, host, ctx };
}

/** Starts the sub-agent "helper" with the prompt FIRST, so messages can continue it. */
function startHelper(runtime: AgentRuntime, ctx: ToolContext) {
  return runtime.runSubagent(
    { description: "helper", prompt: "FIRST", subagentType: "general-purpose", name: "helper" },
    ctx,
    new AbortController().signal,
  );
}

describe("the agent host", () => {
  it("delivers messages and cron prompts into the main conversation's inbox, read at its next turn", async () => {
    const stand = await startStandIn([text("noted")]);
    stands.push(stand);
    const { runtime, host, ctx } = hostOn(stand, { idleMs: 2_000 });
    expect(host.recipients?.()).toEqual([MAIN_CONVERSATION]);
    expect(
      host.deliverMessage?.({ from: "reviewer", to: MAIN_CONVERSATION, message: "the tests pass" }),
    ).toBe(true);
    expect(host.deliverMessage?.({ from: "x", to: "nobody", message: "lost" })).toBe(false);
    await host.runPrompt?.("check the build", { kind: "cron", id: "cron_1" });

    const agent = await runtime.createAgent(ctx);
    await agent.run("go on", new AbortController().signal);
    const sent = JSON.stringify(stand.requests[0].messages);
    expect(sent).toContain("the tests pass");
    expect(sent).toContain("reviewer");
    expect(sent).toContain("check the build");
    expect(sent).toContain("cron cron_1");
  });

  it("runs a sub-agent's work on a message as a task of the session, which TaskStop stops with its processes", async () => {
    const seconds = uniqueSeconds();
    const stand = await startStandIn([
      (request) => {
        const all = JSON.stringify(request.messages);
        if (!all.includes("SECOND")) return text("first done");
        if (!all.includes("tool_result")) return toolCall("Bash", { command: `sleep ${seconds}` });
        return text("second done");
      },
    ]);
    stands.push(stand);
    const { runtime, host, ctx } = hostOn(stand, { permissionMode: "bypassPermissions" });
    const first = await startHelper(runtime, ctx);
    expect(first.text).toBe("first done");
    expect(host.deliverMessage?.({ from: MAIN_CONVERSATION, to: "helper", message: "SECOND" })).toBe(true);
    const tasks = ctx.session.get(taskStoreSlot).list();
    expect(tasks.map((t) => [t.kind, t.description, t.status])).toEqual([
      ["agent", "helper on a message from main", "running"],
    ]);
    expect(await eventually(() => survivors(`sleep ${seconds}`).length > 0, 15_000)).toBe(true);
    const stopped = await runTool("TaskStop", { task_id: tasks[0]!.id }, ctx);
    expect(stopped.isError).toBe(false);
    expect(ToolResult.text(stopped)).toContain(tasks[0]!.id);
    expect(await eventually(() => survivors(`sleep ${seconds}`).length === 0)).toBe(true);
    expect(ctx.session.get(taskStoreSlot).get(tasks[0]!.id)?.status).toBe("killed");
    // A stopped sub-agent sends no answer.
    expect(ctx.session.get(inboxSlot).take()).toEqual([]);
  });

  it("brings the sub-agent's answer to a message back to the main conversation", async () => {
    const stand = await startStandIn([
      (request) => text(JSON.stringify(request.messages).includes("SECOND") ? "second done" : "first done"),
    ]);
    stands.push(stand);
    const { runtime, host, ctx } = hostOn(stand);
    await startHelper(runtime, ctx);
    host.deliverMessage?.({ from: MAIN_CONVERSATION, to: "helper", message: "SECOND" });
    const inbox = ctx.session.get(inboxSlot);
    expect(await eventually(() => inbox.size > 0, 15_000)).toBe(true);
    expect(inbox.take()).toMatchObject([{ from: "helper", to: MAIN_CONVERSATION, message: "second done" }]);
    const [task] = ctx.session.get(taskStoreSlot).list();
    expect(await eventually(() => ctx.session.get(taskStoreSlot).get(task!.id)?.status === "completed")).toBe(
      true,
    );
  });

  it("works on two messages one after the other, never interleaving their turns", async () => {
    const stand = await startStandIn([
      (request) => {
        const all = JSON.stringify(request.messages);
        const last = JSON.stringify(request.messages.at(-1));
        if (!all.includes("SECOND")) return text("first done");
        // Each message's run reads one file, then answers.
        if (!last.includes("tool_result")) return toolCall("Read", { file_path: "a.txt" });
        return text(all.includes("THIRD") ? "third done" : "second done");
      },
    ]);
    stands.push(stand);
    const { runtime, host, ctx } = hostOn(stand, { permissionMode: "bypassPermissions" });
    writeFileSync(join(ctx.workingDir, "a.txt"), "a\n");
    await startHelper(runtime, ctx);
    host.deliverMessage?.({ from: MAIN_CONVERSATION, to: "helper", message: "SECOND" });
    host.deliverMessage?.({ from: MAIN_CONVERSATION, to: "helper", message: "THIRD" });
    const inbox = ctx.session.get(inboxSlot);
    const answers: string[] = [];
    expect(
      await eventually(() => {
        answers.push(...inbox.take().map((m) => m.message));
        return answers.length === 2;
      }, 20_000),
    ).toBe(true);
    expect(answers).toEqual(["second done", "third done"]);
    // Every request the model got alternates user and assistant turns, as the API requires.
    for (const request of stand.requests) {
      const roles = (request.messages as Array<{ role: string }>).map((m) => m.role);
      expect(roles.every((role, i) => i === 0 || role !== roles[i - 1])).toBe(true);
    }
  });
});
