import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runToolBatch } from "../../src/executor/batch.js";
import { testContext } from "../helpers/context.js";
import { recordingTools } from "../helpers/tools.js";

describe("runToolBatch", () => {
  it("runs consecutive concurrency-safe calls in parallel and others alone, results in call order", async () => {
    const { events, tools } = recordingTools();
    const ctx = testContext({ tools });
    const results = await runToolBatch(
      [
        { name: "Peek", input: { id: "r1", ms: 60 } },
        { name: "Peek", input: { id: "r2", ms: 10 } },
        { name: "Poke", input: { id: "w1" } },
        { name: "Peek", input: { id: "r3", ms: 10 } },
        { name: "Nope", input: {} },
        { name: "Peek", input: { id: "r4", ms: 10 } },
      ],
      ctx,
    );
    expect(results.map((r) => ToolResult.text(r).slice(0, 40))).toEqual([
      "peeked r1",
      "peeked r2",
      "poked w1",
      "peeked r3",
      '<tool_use_error>No tool named "Nope". Di',
      "peeked r4",
    ]);
    // r1 and r2 overlap; w1 starts only after both ended and ends before r3 starts.
    expect(events.indexOf("start r2")).toBeLessThan(events.indexOf("end r1"));
    expect(events.indexOf("start w1")).toBeGreaterThan(events.indexOf("end r1"));
    expect(events.indexOf("start w1")).toBeGreaterThan(events.indexOf("end r2"));
    expect(events.indexOf("start r3")).toBeGreaterThan(events.indexOf("end w1"));
  });

  it("returns an empty list for no calls", async () => {
    expect(await runToolBatch([], testContext())).toEqual([]);
  });
});
