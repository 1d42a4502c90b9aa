import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { mcpHost } from "../../src/mcp/server.js";
import { toolUnavailable } from "../../src/process/shells.js";
import { builtinTools } from "../../src/registry.js";
import { type StandIn, text as say, startStandIn, toolCall } from "../agent/standin.js";
import { tempDir } from "../helpers/context.js";
import { type Answer, type Asked, connectCli, sdkClient, text, workspace } from "./mcp-client.js";

// The 2026-07-28 revision has no requests from server to client: a call that needs the user's answer
// ends unfinished (input_required) with its questions and a handle, and the client calls again with the
// answers. The SDK client does both rounds inside one callTool; the manual tests drive them by hand.

const standIns: StandIn[] = [];
afterEach(async () => {
  while (standIns.length > 0) await standIns.pop()!.close();
});

/** A client pinned to the 2026-07-28 revision; `answer` fills its forms (without one it has no elicitation). */
function modernClient(
  dir: string,
  env: Record<string, string>,
  answer?: (asked: Asked) => Answer,
  extraArgs: string[] = [],
  autoFulfill = true,
) {
  const client = sdkClient("modern", answer, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
    inputRequired: { autoFulfill },
  });
  return connectCli(client, dir, env, extraArgs);
}

/**
 * A modern client whose user allows every question, against a server whose model is a stand-in: its
 * sub-agent writes `content` to `outside` with one Write, then answers `reply`. `writeTask` starts it.
 */
async function agentServer(outside: string, content: string, reply: string) {
  const { dir, env } = workspace();
  const model = await startStandIn([toolCall("Write", { file_path: outside, content }), say(reply)]);
  standIns.push(model);
  const asked: string[] = [];
  const client = await modernClient(
    dir,
    { ...env, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url },
    ({ message }) => {
      asked.push(message);
      return { action: "accept", content: { decision: "Allow once" } };
    },
  );
  const writeTask = (extra: Record<string, unknown> = {}) =>
    client.callTool({
      name: "Task",
      arguments: {
        description: "write a file",
        prompt: `Write ${outside}`,
        subagent_type: "general-purpose",
        ...extra,
      },
    });
  return { writeTask, model, asked, client };
}

/** The tools a host that can (or cannot) ask its user serves, on this machine. */
const served = (asks: boolean) =>
  builtinTools()
    .availableFor(mcpHost(() => asks))
    .available.names()
    .filter((name) => !toolUnavailable(name))
    .sort();

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();

/** A PreToolUse hook that appends a line to `log` for each call it sees. */
function countingHook(dir: string, log: string) {
  mkdirSync(join(dir, ".claude"), { recursive: true });
  writeFileSync(
    join(dir, ".claude", "settings.json"),
    JSON.stringify({
      hooks: {
        PreToolUse: [{ matcher: "Write", hooks: [{ type: "command", command: `echo call >> ${log}` }] }],
      },
    }),
  );
}

describe("cc-tools mcp on the 2026-07-28 revision", () => {
  it("offers the tools that ask exactly to a client whose envelope says it elicits", async () => {
    const { dir, env } = workspace();
    const eliciting = await modernClient(dir, env, () => ({ action: "cancel" }));
    // The first list is the opening's answer (before the server loads), the second the server's own.
    expect(await names(eliciting)).toEqual(served(true));
    expect(await names(eliciting)).toEqual(served(true));
    expect(served(true)).toContain("AskUserQuestion");
    const mute = await modernClient(dir, env);
    expect(await names(mute)).toEqual(served(false));
    expect(await names(mute)).toEqual(served(false));
    expect(served(false)).not.toContain("AskUserQuestion");
  });

  it("asks for a permission within the call, and runs the call once: its hook once, its write once", async () => {
    const { dir, env } = workspace();
    const hookLog = join(tempDir(), "hook.log");
    countingHook(dir, hookLog);
    const asked: string[] = [];
    const client = await modernClient(dir, env, ({ message }) => {
      asked.push(message);
      return { action: "accept", content: { decision: "Allow once" } };
    });
    const inside = await client.callTool({ name: "Bash", arguments: { command: "echo modern" } });
    expect(text(inside)).toContain("modern");
    expect(asked).toEqual([]);
    const outside = join(tempDir(), "x.txt");
    const result = await client.callTool({ name: "Write", arguments: { file_path: outside, content: "x" } });
    expect(result.isError).toBeFalsy();
    expect(readFileSync(outside, "utf8")).toBe("x");
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain(`Write ${outside}`);
    // The retry resumed the waiting call; it did not start it over.
    expect(readFileSync(hookLog, "utf8")).toBe("call\n");
  });

  it("runs nothing the user declined, and says why a client without elicitation was not asked", async () => {
    const { dir, env } = workspace();
    const declining = await modernClient(dir, env, () => ({ action: "decline" }));
    const outside = join(tempDir(), "x.txt");
    const declined = await declining.callTool({
      name: "Write",
      arguments: { file_path: outside, content: "x" },
    });
    expect(declined.isError).toBe(true);
    expect(text(declined)).toContain("declined it when asked");
    expect(existsSync(outside)).toBe(false);
    const mute = await modernClient(dir, env);
    const refused = await mute.callTool({ name: "Write", arguments: { file_path: outside, content: "x" } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain("cannot show cc-tools' questions");
    expect(existsSync(outside)).toBe(false);
  });

  it("AskUserQuestion: the user's choices and own words come back to the model", async () => {
    const { dir, env } = workspace();
    let schema: Asked["requestedSchema"] | undefined;
    const client = await modernClient(dir, env, (asked) => {
      schema = asked.requestedSchema;
      return { action: "accept", content: { q1: "Blue", q2: ["Tests", "Docs"], q2_other: "" } };
    });
    const result = await client.callTool({
      name: "AskUserQuestion",
      arguments: {
        questions: [
          {
            question: "Which color?",
            header: "Color",
            multiSelect: false,
            options: [
              { label: "Blue", description: "calm" },
              { label: "Red", description: "loud" },
            ],
          },
          {
            question: "What else should change?",
            header: "Scope",
            multiSelect: true,
            options: [
              { label: "Tests", description: "more tests" },
              { label: "Docs", description: "the README" },
            ],
          },
        ],
      },
    });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain(`"Which color?"="Blue"`);
    expect(text(result)).toContain(`"What else should change?"="Tests, Docs"`);
    expect(Object.keys(schema?.properties ?? {})).toEqual(["q1", "q1_other", "q2", "q2_other"]);
  });

  it("ExitPlanMode: the user approves the plan, or sends it back with feedback", async () => {
    const { dir, env } = workspace();
    const plan = { plan: "1. Add the test\n2. Fix the bug" };
    const rejecting = await modernClient(
      dir,
      env,
      () => ({ action: "accept", content: { approve: false, feedback: "Fix the bug first" } }),
      ["--permission-mode", "plan"],
    );
    const sentBack = await rejecting.callTool({ name: "ExitPlanMode", arguments: plan });
    expect(sentBack.isError).toBe(true);
    expect(text(sentBack)).toContain("Their feedback: Fix the bug first.");
    const messages: string[] = [];
    const approving = await modernClient(
      dir,
      env,
      ({ message }) => {
        messages.push(message);
        return { action: "accept", content: { approve: true } };
      },
      ["--permission-mode", "plan"],
    );
    const approved = await approving.callTool({ name: "ExitPlanMode", arguments: plan });
    expect(approved.isError).toBeFalsy();
    expect(text(approved)).toContain("The plan was approved");
    expect(messages[0]).toContain("2. Fix the bug");
  });

  it("a sub-agent's question waits in place: the agent is not run again, and its write happens once", async () => {
    const outside = join(tempDir(), "from-agent.txt");
    const { writeTask, model, asked } = await agentServer(outside, "agent\n", "Wrote it.");
    const result = await writeTask();
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain("Wrote it.");
    expect(readFileSync(outside, "utf8")).toBe("agent\n");
    expect(asked).toHaveLength(1);
    expect(model.requests).toHaveLength(2);
  });

  it("a background agent that needs an answer after its call ended is refused, saying why", async () => {
    const outside = join(tempDir(), "from-background.txt");
    const { writeTask, client, model, asked } = await agentServer(outside, "late\n", "I could not write it.");
    const started = await writeTask({ run_in_background: true });
    const taskId = /task (\S+)\./.exec(text(started))?.[1];
    expect(taskId).toBeDefined();
    const output = await client.callTool({
      name: "TaskOutput",
      arguments: { task_id: taskId, timeout: 20_000 },
    });
    expect(text(output)).toContain("I could not write it.");
    expect(existsSync(outside)).toBe(false);
    expect(asked).toEqual([]);
    expect(JSON.stringify(model.requests[1])).toContain("the call that started this work has ended");
  });

  it("a retry runs only the call it was handed for, and only while it waits", async () => {
    const { dir, env } = workspace();
    const client = await modernClient(dir, env, () => ({ action: "cancel" }), [], false);
    const outside = join(tempDir(), "x.txt");
    const call = { name: "Write", arguments: { file_path: outside, content: "x" } };
    const first = (await client.callTool(call, { allowInputRequired: true })) as unknown as {
      resultType: string;
      inputRequests: Record<string, unknown>;
      requestState: string;
    };
    expect(first.resultType).toBe("input_required");
    const [key] = Object.keys(first.inputRequests);
    const allow = { [key!]: { action: "accept", content: { decision: "Allow once" } } };
    const retry = (params: Record<string, unknown>) =>
      client.callTool(params as typeof call, { allowInputRequired: true });

    // Another call's arguments under this call's handle: nothing runs, and the call still waits.
    const other = join(tempDir(), "other.txt");
    const swapped = await retry({
      name: "Write",
      arguments: { file_path: other, content: "x" },
      inputResponses: allow,
      requestState: first.requestState,
    });
    expect(text(swapped)).toContain("belongs to a call with another tool or other arguments");
    expect(existsSync(other)).toBe(false);
    // The call waits for an answer that may never come; the connection goes on meanwhile.
    const meanwhile = await client.callTool({ name: "Bash", arguments: { command: "echo meanwhile" } });
    expect(text(meanwhile)).toContain("meanwhile");
    // An answer reached only through `__proto__` is no answer: asked again.
    const hidden = (await retry({
      ...call,
      inputResponses: JSON.parse(JSON.stringify({ hidden: allow }).replace('"hidden"', '"__proto__"')),
      requestState: first.requestState,
    })) as unknown as typeof first;
    expect(hidden.resultType).toBe("input_required");
    expect(existsSync(outside)).toBe(false);
    // A handle this server never gave: nothing runs.
    const forged = await retry({ ...call, inputResponses: allow, requestState: "forged" });
    expect(text(forged)).toContain("No call is waiting for this answer");
    expect(existsSync(outside)).toBe(false);
    // No answer for the question: it is asked again, under the same handle.
    const unanswered = (await retry({
      ...call,
      requestState: first.requestState,
    })) as unknown as typeof first;
    expect(unanswered.resultType).toBe("input_required");
    expect(Object.keys(unanswered.inputRequests)).toEqual([key]);
    expect(existsSync(outside)).toBe(false);
    // The answer, for this call: it runs, once; the handle is spent.
    const done = await retry({ ...call, inputResponses: allow, requestState: unanswered.requestState });
    expect(done.isError).toBeFalsy();
    expect(readFileSync(outside, "utf8")).toBe("x");
    const again = await retry({ ...call, inputResponses: allow, requestState: first.requestState });
    expect(text(again)).toContain("No call is waiting for this answer");
  });

  it("an answer that is not one of the choices offered denies", async () => {
    const { dir, env } = workspace();
    // The rules alone: inside the OS sandbox the command would need no approval.
    mkdirSync(join(dir, ".claude"));
    writeFileSync(join(dir, ".claude", "settings.json"), JSON.stringify({ sandbox: { enabled: false } }));
    const client = await modernClient(dir, env, () => ({ action: "cancel" }), [], false);
    // A command that cannot be checked part by part: no rule can allow it, so "once" or "deny" only.
    const call = { name: "Bash", arguments: { command: 'eval "touch made"' } };
    const first = (await client.callTool(call, { allowInputRequired: true })) as unknown as {
      inputRequests: Record<
        string,
        { params: { requestedSchema: { properties: { decision: { enum: string[] } } } } }
      >;
      requestState: string;
    };
    const [[key, question]] = Object.entries(first.inputRequests) as [
      [string, (typeof first.inputRequests)[string]],
    ];
    expect(question.params.requestedSchema.properties.decision.enum).toEqual(["Allow once", "Deny"]);
    const unoffered = { action: "accept", content: { decision: "Always allow in this project" } };
    const result = await client.callTool(
      { ...call, inputResponses: { [key]: unoffered }, requestState: first.requestState } as typeof call,
      { allowInputRequired: true },
    );
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("not one of the choices offered");
    expect(existsSync(join(dir, "made"))).toBe(false);
  });
});
