import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolResult } from "../../src/core/result.js";
import { defineTool } from "../../src/core/tool.js";
import { runTool } from "../../src/executor/run.js";
import { testContext } from "../helpers/context.js";
import { recordingTools } from "../helpers/tools.js";

const text = (r: ToolResult) => ToolResult.text(r);

describe("runTool", () => {
  it("rejects an unknown tool with the closest names, without throwing", async () => {
    const { tools } = recordingTools();
    const result = await runTool("peek", { id: "a" }, testContext({ tools }));
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^<tool_use_error>No tool named "peek"\. Did you mean Peek/);
  });

  it("names every offending parameter in one validation message", async () => {
    const { tools } = recordingTools();
    const result = await runTool("Poke", { count: 99, extra: true }, testContext({ tools }));
    expect(result.isError).toBe(true);
    const message = text(result);
    expect(message).toContain("<tool_use_error>Poke input is invalid (3 problems)");
    expect(message).toContain("missing required parameter `id`");
    expect(message).toContain("unexpected parameter `extra`");
    expect(message).toContain("parameter `count` is too large");
  });

  it("coerces numeric strings where the schema wants a number", async () => {
    const { tools } = recordingTools();
    const result = await runTool("Peek", { id: "a", ms: "1" }, testContext({ tools }));
    expect(result).toEqual(ToolResult.success("peeked a"));
  });

  it("turns a thrown exception into an error result", async () => {
    const { tools } = recordingTools();
    const ctx = testContext({ tools });
    const crash = await runTool("Boom", { how: "throw" }, ctx);
    expect(crash.isError).toBe(true);
    expect(text(crash)).toBe("Boom failed unexpectedly: cannot read properties of undefined");
    const toolError = await runTool("Boom", { how: "tool-error" }, ctx);
    expect(text(toolError)).toBe("the widget is missing; create it first");
    const before = await runTool("Boom", { how: "input-error" }, ctx);
    expect(text(before)).toBe("<tool_use_error>the widget name is bad</tool_use_error>");
  });

  it("turns thrown non-Errors and malformed results into error results that say so", async () => {
    const thrown: unknown[] = ["a string", undefined, null, { code: 7 }];
    const returned: unknown[] = [undefined, "text", { content: "x", isError: false }, { content: [null] }];
    const tools = [
      ...thrown.map((value, i) =>
        defineTool({
          name: `Throw${i}`,
          description: "throws",
          permissionLevel: "none",
          inputSchema: z.strictObject({}),
          execute: async () => {
            throw value;
          },
        }),
      ),
      ...returned.map((value, i) =>
        defineTool({
          name: `Return${i}`,
          description: "returns junk",
          permissionLevel: "none",
          inputSchema: z.strictObject({}),
          execute: async () => value as ToolResult,
        }),
      ),
    ];
    const ctx = testContext({ tools });
    const messages = await Promise.all(tools.map(async (t) => text(await runTool(t.name, {}, ctx))));
    expect(messages.slice(0, 4)).toEqual([
      "Throw0 failed unexpectedly: a string",
      "Throw1 failed unexpectedly: undefined",
      "Throw2 failed unexpectedly: null",
      'Throw3 failed unexpectedly: {"code":7}',
    ]);
    for (const message of messages.slice(4))
      expect(message).toMatch(/^Return\d finished but returned no valid result/);
  });

  it("aborts a call on the caller's signal and on the deadline", async () => {
    const { tools } = recordingTools();
    const ctx = testContext({ tools });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const cancelled = await runTool("Boom", { how: "hang" }, ctx, { signal: controller.signal });
    expect(cancelled.isError).toBe(true);
    expect(text(cancelled)).toContain("cancelled");
    const late = await runTool("Boom", { how: "hang" }, ctx, { deadlineMs: 50 });
    expect(text(late)).toContain("was stopped after 50 ms, the longest a call may run.");
  });

  it("returns a cancelled call's result only once the tool has stopped", async () => {
    const { tools, events } = recordingTools();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const result = await runTool("Boom", { how: "slow-stop" }, testContext({ tools }), {
      signal: controller.signal,
    });
    expect(ToolResult.text(result)).toContain("cancelled");
    expect(events).toContain("cleaned up");
  });

  it("says a cancelled call took effect when the tool finished anyway", async () => {
    const { tools } = recordingTools();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 5);
    const result = await runTool("Poke", { id: "a" }, testContext({ tools }), { signal: controller.signal });
    expect(result.isError).toBe(true);
    expect(ToolResult.text(result)).toMatch(/cancelled.*already finished, so what it did took effect/);
  });

  it("spills a result over the budget to a file and keeps head and tail", async () => {
    const { tools } = recordingTools();
    const ctx = testContext({ tools });
    const result = await runTool("Boom", { how: "huge" }, ctx);
    const shown = text(result);
    expect(shown.length).toBeLessThan(20_000);
    expect(shown).toContain("250000 characters");
    const path = result.metadata?.spilledTo as string;
    expect(readFileSync(path, "utf8")).toHaveLength(250_000);
  });

  it("asks the permission handler and denies with the reason when nobody can answer", async () => {
    const { tools } = recordingTools();
    const ctx = testContext({ tools, permissionMode: "default" });
    const result = await runTool("Poke", { id: "a" }, ctx);
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/Permission to use Poke was denied/);
    expect(text(result)).toMatch(/--allow/);
  });

  it("lets a session grant stand for later calls", async () => {
    const { tools } = recordingTools();
    let asked = 0;
    const ctx = testContext({
      tools,
      permissionMode: "default",
      permissionHandler: {
        name: "test",
        async ask() {
          asked++;
          return { behavior: "allow", scope: "session" };
        },
      },
    });
    expect((await runTool("Poke", { id: "a" }, ctx)).isError).toBe(false);
    expect((await runTool("Poke", { id: "b" }, ctx)).isError).toBe(false);
    expect(asked).toBe(1);
  });
});
