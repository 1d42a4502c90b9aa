import * as z from "zod";
import { ToolError } from "../../src/core/errors.js";
import { ToolResult } from "../../src/core/result.js";
import { defineTool } from "../../src/core/tool.js";

/** Small tools for pipeline tests: they record what ran, and when. */
export function recordingTools() {
  const events: string[] = [];
  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      signal.addEventListener("abort", () => {
        clearTimeout(t);
        resolve();
      });
    });
  const peek = defineTool({
    name: "Peek",
    description: "Reads something slowly.",
    permissionLevel: "readOnly",
    inputSchema: z.strictObject({ id: z.string(), ms: z.number().default(30) }),
    async execute({ id, ms }, ctx) {
      events.push(`start ${id}`);
      await sleep(ms, ctx.signal);
      events.push(`end ${id}`);
      return ToolResult.success(`peeked ${id}`);
    },
  });
  const poke = defineTool({
    name: "Poke",
    description: "Changes something.",
    permissionLevel: "write",
    inputSchema: z.strictObject({ id: z.string(), count: z.number().int().min(1).max(10).optional() }),
    async execute({ id }, ctx) {
      events.push(`start ${id}`);
      await sleep(20, ctx.signal);
      events.push(`end ${id}`);
      return ToolResult.success(`poked ${id}`);
    },
  });
  const boom = defineTool({
    name: "Boom",
    description: "Fails in different ways.",
    permissionLevel: "none",
    inputSchema: z.strictObject({
      how: z.enum(["throw", "tool-error", "input-error", "hang", "slow-stop", "huge"]),
    }),
    async execute({ how }, ctx) {
      if (how === "throw") throw new TypeError("cannot read properties of undefined");
      if (how === "tool-error") throw new ToolError("the widget is missing; create it first");
      if (how === "input-error") throw new ToolError("the widget name is bad", { beforeRun: true });
      if (how === "huge") return ToolResult.success("x".repeat(250_000));
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
      if (how === "slow-stop") {
        // Like a shell tool: stopping takes a while (TERM, wait, KILL).
        await new Promise((resolve) => setTimeout(resolve, 150));
        events.push("cleaned up");
      }
      return ToolResult.success("stopped");
    },
  });
  return { events, tools: [peek, poke, boom] };
}
