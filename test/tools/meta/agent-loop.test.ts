import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { anthropicProvider } from "../../../src/agent/anthropic.js";
import { AgentRuntime } from "../../../src/agent/runtime.js";
import { createHost, type HostParts } from "../../../src/core/host.js";
import { ToolResult } from "../../../src/core/result.js";
import { type AnyTool, defineTool } from "../../../src/core/tool.js";
import { runTool } from "../../../src/executor/run.js";
import { inboxSlot } from "../../../src/messages/inbox.js";
import { autoHandler } from "../../../src/permissions/handlers.js";
import { type Clock, cronSlot } from "../../../src/schedule/scheduler.js";
import { type StandIn, type Step, startStandIn, text, toolCall } from "../../agent/standin.js";
import { tempDir, testContext } from "../../helpers/context.js";

const stands: StandIn[] = [];
afterEach(async () => {
  while (stands.length > 0) await stands.pop()!.close();
});

/** An agent over a loopback stand-in of the Messages API, with the host parts given. */
async function agentWith(steps: Step[], parts: HostParts = {}, tools: AnyTool[] = []) {
  const stand = await startStandIn(steps);
  stands.push(stand);
  const runtime = new AgentRuntime({
    provider: anthropicProvider({ apiKey: "test-key", baseURL: stand.url, idleMs: 2_000 }),
    model: "claude-sonnet-4-5",
    configDir: tempDir("cc-tools-config-"),
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
  });
  const ctx = testContext({ host: createHost({ model: runtime, ...parts }, autoHandler), tools });
  const agent = await runtime.createAgent(ctx);
  return { stand, ctx, agent };
}

// biome-ignore lint/suspicious/noExplicitAny: request JSON.
const toolNames = (request: any): string[] => request.tools.map((t: { name: string }) => t.name);
// biome-ignore lint/suspicious/noExplicitAny: request JSON.
const allText = (request: any): string => JSON.stringify(request.messages);

describe("session tools in the agent loop", () => {
  it("ToolSearch brings a deferred tool's definition into the next request, and the model calls it", async () => {
    let deployed = "";
    const deploy = defineTool({
      name: "DeployService",
      description: "Deploys a service to production.",
      permissionLevel: "none",
      inputSchema: z.strictObject({ service: z.string() }),
      deferred: true,
      execute: async ({ service }) => {
        deployed = service;
        return ToolResult.success(`deployed ${service}`);
      },
    });
    const { stand, agent } = await agentWith(
      [
        toolCall("ToolSearch", { query: "deploy to production", max_results: 1 }, "t1"),
        toolCall("DeployService", { service: "api" }, "t2"),
        text("Deployed."),
      ],
      {},
      [deploy],
    );
    const result = await agent.run("Deploy the api", new AbortController().signal);
    expect(result.text).toBe("Deployed.");
    expect(toolNames(stand.requests[0])).not.toContain("DeployService");
    expect(toolNames(stand.requests[1])).toContain("DeployService");
    expect(deployed).toBe("api");
  });

  it("a message sent to the session reaches the model at its next turn", async () => {
    const { stand, ctx, agent } = await agentWith([text("Noted.")]);
    ctx.session
      .get(inboxSlot)
      .deliver({ from: "reviewer", to: "main", message: "tests are red", summary: "CI" });
    await agent.run("Carry on", new AbortController().signal);
    expect(allText(stand.requests[0])).toContain(
      '<message from=\\"reviewer\\" summary=\\"CI\\">\\ntests are red\\n</message>',
    );
    expect(ctx.session.get(inboxSlot).size).toBe(0);
  });

  it("a cron job fires into the host's prompt runner, which runs it as a turn of the agent", async () => {
    let now = new Date(2026, 2, 2, 8, 59, 0).getTime();
    const timers: Array<{ at: number; fire: () => void }> = [];
    const clock: Clock = {
      now: () => now,
      setTimeout: (fire, ms) => timers.push({ at: now + ms, fire }),
      clearTimeout: () => {},
    };
    const ran: Promise<unknown>[] = [];
    const holder: { agent?: Awaited<ReturnType<typeof agentWith>>["agent"] } = {};
    const { stand, ctx, agent } = await agentWith([text("Build checked.")], {
      runPrompt: async (prompt) => {
        ran.push(holder.agent!.run(prompt, new AbortController().signal));
      },
    });
    holder.agent = agent;
    ctx.session.get(cronSlot).useClock(clock);
    const created = await runTool(
      "CronCreate",
      { cron: "0 9 * * *", prompt: "check the build", recurring: false },
      ctx,
    );
    expect(created.isError).toBe(false);
    now += 60_000;
    for (const timer of timers.splice(0)) if (timer.at <= now) timer.fire();
    await Promise.all(ran);
    expect(allText(stand.requests[0])).toContain("check the build");
    expect(ctx.session.get(cronSlot).list()).toEqual([]);
  });
});
