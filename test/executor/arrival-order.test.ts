import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { ArrivalOrder } from "../../src/executor/arrival-order.js";
import { runTool } from "../../src/executor/run.js";
import { CLI } from "../e2e/cli.js";
import { tempDir, testContext } from "../helpers/context.js";
import { recordingTools } from "../helpers/tools.js";

describe("ArrivalOrder", () => {
  it("lets reads overlap but runs a change after everything that arrived before it, and before what follows", async () => {
    const { events, tools } = recordingTools();
    const ctx = testContext({ tools });
    const order = new ArrivalOrder(ctx);
    const signal = new AbortController().signal;
    const call = (name: string, input: Record<string, unknown>) =>
      order.run({ name, input }, signal, () => runTool(name, input, ctx));
    await Promise.all([
      call("Peek", { id: "r1", ms: 60 }),
      call("Peek", { id: "r2", ms: 10 }),
      call("Poke", { id: "w1" }),
      call("Peek", { id: "r3", ms: 10 }),
    ]);
    expect(events.indexOf("start r2")).toBeLessThan(events.indexOf("end r1"));
    expect(events.indexOf("start w1")).toBeGreaterThan(events.indexOf("end r1"));
    expect(events.indexOf("start r3")).toBeGreaterThan(events.indexOf("end w1"));
  });

  it("a call that leaves lets the calls after it go; when it rejoins it waits for them, and later calls for it", async () => {
    const { events, tools } = recordingTools();
    const ctx = testContext({ tools });
    const order = new ArrivalOrder(ctx);
    const signal = new AbortController().signal;
    const poke = (id: string) =>
      order.run({ name: "Poke", input: { id } }, signal, () => runTool("Poke", { id }, ctx));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const asking = order.run({ name: "Poke", input: { id: "w1" } }, signal, async (place) => {
      events.push("start w1");
      // Waiting for an answer that may never come: the calls after it need not wait too.
      place.leave();
      await answered;
      events.push("answered w1");
      await place.rejoin(signal);
      events.push("end w1");
    });
    const passing = poke("w2");
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(events).toEqual(["start w1", "start w2"]);
    // Answered while w2 runs: w1 goes on only once w2, which went ahead, is done.
    answer();
    await new Promise((resolve) => setTimeout(resolve, 0));
    const later = poke("w3");
    await Promise.all([asking, passing, later]);
    expect(events).toEqual(["start w1", "start w2", "answered w1", "end w2", "end w1", "start w3", "end w3"]);
  });

  it("a call cancelled while queued does nothing, and the calls after it still wait for those before it", async () => {
    const ctx = testContext();
    const order = new ArrivalOrder(ctx);
    const none = new AbortController().signal;
    const run = (input: Record<string, unknown>, signal: AbortSignal, name = "Bash") =>
      order.run({ name, input }, signal, () => runTool(name, input, ctx, { signal }));
    const first = run({ command: "sleep 0.6; echo A > a.txt" }, none);
    const cancel = new AbortController();
    const write = run({ file_path: "b.txt", content: "b" }, cancel.signal, "Write");
    const third = run({ command: "cat a.txt" }, none);
    setTimeout(() => cancel.abort(), 50);
    const written = await write;
    expect(ToolResult.text(written)).toContain("cancelled before it started");
    expect(existsSync(join(ctx.workingDir, "b.txt"))).toBe(false);
    await first;
    expect(ToolResult.text(await third)).toBe("A");
  });

  it("stops waiting when a queued call is cancelled", async () => {
    const { tools } = recordingTools();
    const ctx = testContext({ tools });
    const order = new ArrivalOrder(ctx);
    const first = order.run({ name: "Poke", input: { id: "a" } }, new AbortController().signal, () =>
      runTool("Boom", { how: "hang" }, ctx, { deadlineMs: 2_000 }),
    );
    const controller = new AbortController();
    const queued = order.run({ name: "Poke", input: { id: "b" } }, controller.signal, async () => "ran");
    controller.abort();
    expect(await queued).toBe("ran");
    await first;
  });
});

describe("cc-tools mcp with pipelined requests", () => {
  it("runs a Read and the Edit sent right after it in that order", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "f.txt"), "alpha\n");
    const child = spawn(process.execPath, [CLI, "mcp", "--cwd", dir, "--permission-mode", "acceptEdits"], {
      stdio: ["pipe", "pipe", "ignore"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const send = (m: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`);
    send({
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    send({ method: "notifications/initialized" });
    send({ id: 2, method: "tools/call", params: { name: "Read", arguments: { file_path: "f.txt" } } });
    const edit = { file_path: "f.txt", old_string: "alpha", new_string: "beta" };
    send({ id: 3, method: "tools/call", params: { name: "Edit", arguments: edit } });
    await new Promise<void>((resolve) => {
      child.stdout.on("data", () => {
        if (out.includes('"id":3')) resolve();
      });
    });
    child.stdin.end();
    await new Promise((r) => child.on("close", r));
    const answer = out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((m) => m.id === 3);
    expect(answer.result.isError ?? false).toBe(false);
    expect(readFileSync(join(dir, "f.txt"), "utf8")).toBe("beta\n");
  });
});
