import { afterEach, describe, expect, it } from "vitest";
import { anthropicProvider } from "../../src/agent/anthropic.js";
import { agentHost, MAIN_CONVERSATION } from "../../src/agent/host.js";
import { AgentRuntime } from "../../src/agent/runtime.js";
import type { ToolContext } from "../../src/core/context.js";
import { tempDir, testContext } from "../helpers/context.js";
import { type StandIn, startStandIn, text } from "./standin.js";

const stands: StandIn[] = [];
afterEach(async () => {
  while (stands.length > 0) await stands.pop()!.close();
});

describe("the agent host", () => {
  it("delivers messages and cron prompts into the main conversation's inbox, read at its next turn", async () => {
    const stand = await startStandIn([text("noted")]);
    stands.push(stand);
    const runtime = new AgentRuntime({
      provider: anthropicProvider({ apiKey: "k", baseURL: stand.url, idleMs: 2_000 }),
      model: "claude-sonnet-5-5",
      configDir: tempDir("cc-tools-config-"),
    });
    let ctx: ToolContext | undefined;
    const host = agentHost({ runtime, mainContext: () => ctx });
    ctx = testContext({ host });
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
});
