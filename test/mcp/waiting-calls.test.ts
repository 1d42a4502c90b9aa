import type { ServerContext } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { LiveCall, MAX_WAITING_CALLS, WaitingCalls } from "../../src/mcp/live-call.js";

/** A call whose run lasts until `end` is called; only a 2026-07-28 round's envelope is read of its request. */
function parkedCall(name = "Write", args: Record<string, unknown> = { file_path: "/x" }) {
  const request = { mcpReq: { envelope: {} } } as unknown as ServerContext;
  const call = new LiveCall(request, () => false, { name, args });
  let end!: () => void;
  call.start(
    new Promise((resolve) => {
      end = () => resolve(ToolResult.success("done"));
    }),
  );
  return { call, end };
}

describe("WaitingCalls", () => {
  it("stops a call whose answer does not come in time", async () => {
    const waiting = new WaitingCalls(20);
    const { call } = parkedCall();
    waiting.park(call);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(call.controller.signal.aborted).toBe(true);
    expect(call.controller.signal.reason).toContain("nobody answered");
    expect(waiting.resume(call.handle, call.called)).toContain("No call is waiting");
  });

  it("resumes only the call the handle was given for, with the same tool and arguments", () => {
    const waiting = new WaitingCalls();
    const { call } = parkedCall("Write", { file_path: "/x", content: "a" });
    waiting.park(call);
    expect(waiting.resume(call.handle, { name: "Write", args: { file_path: "/y", content: "a" } })).toContain(
      "another tool or other arguments",
    );
    expect(waiting.resume("forged", call.called)).toContain("No call is waiting");
    // The same arguments in another key order are the same call.
    expect(waiting.resume(call.handle, { name: "Write", args: { content: "a", file_path: "/x" } })).toBe(
      call,
    );
    expect(call.controller.signal.aborted).toBe(false);
  });

  it("forgets a call whose run ended while it waited", async () => {
    const waiting = new WaitingCalls();
    const { call, end } = parkedCall();
    waiting.park(call);
    end();
    await call.run;
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(waiting.resume(call.handle, call.called)).toContain("No call is waiting");
  });

  it(`keeps at most ${MAX_WAITING_CALLS} calls waiting: the oldest is stopped for a new one`, () => {
    const waiting = new WaitingCalls();
    const calls = Array.from({ length: MAX_WAITING_CALLS + 1 }, () => parkedCall().call);
    for (const call of calls) waiting.park(call);
    expect(calls[0]!.controller.signal.aborted).toBe(true);
    expect(calls[0]!.controller.signal.reason).toContain("too many calls");
    expect(calls.slice(1).every((c) => !c.controller.signal.aborted)).toBe(true);
    waiting.abortAll("the end");
    expect(calls.every((c) => c.controller.signal.aborted)).toBe(true);
  });
});

describe("LiveCall", () => {
  it("takes answers only to the questions it sent, under the answers' own keys", async () => {
    const request = { mcpReq: { envelope: {} } } as unknown as ServerContext;
    const call = new LiveCall(request, () => false);
    const form = {
      mode: "form" as const,
      message: "ok?",
      requestedSchema: { type: "object" as const, properties: {} },
    };
    let answered: unknown;
    let ask!: Promise<unknown>;
    call.start(
      (async () => {
        ask = call.ask(form, new AbortController().signal).then((a) => (answered = a));
        await ask;
        return ToolResult.success("done");
      })(),
    );
    const accept = { action: "accept", content: {} };
    // Not sent yet: an answer guessing the key does not count.
    call.takeAnswers({ "question-1": accept });
    const round = await call.serveRound();
    expect(Object.keys("questions" in round ? round.questions : {})).toEqual(["question-1"]);
    call.takeAnswers(JSON.parse('{"__proto__": {"question-1": {"action": "accept", "content": {}}}}'));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(answered).toBeUndefined();
    call.takeAnswers({ "question-1": accept });
    await ask;
    expect(answered).toEqual(accept);
    expect("result" in (await call.serveRound())).toBe(true);
  });
});
