import { Client } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { createToolContext } from "../../src/context.js";
import { createToolSession } from "../../src/mcp/server.js";
import { tempDir } from "../helpers/context.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

type Answer = { action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> };

/** A real SDK client with elicitation, wired to one server session in memory; records what it was asked. */
async function connect(
  answer: (params: { requestedSchema: { properties: Record<string, unknown> } }) => Answer,
) {
  const workingDir = tempDir();
  const session = createToolSession(
    (s, host) => createToolContext({ workingDir, session: s, host, permissionMode: "bypassPermissions" }),
    undefined,
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await session.server.connect(serverSide);
  const client = new Client({ name: "test", version: "1" }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler("elicitation/create", (request) => answer(request.params as never) as never);
  await client.connect(clientSide);
  cleanups.push(async () => {
    await client.close();
    await session.dispose();
  });
  return client;
}

const text = (result: { content?: unknown }) =>
  ((result.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? "").join("\n");

const questions = [
  {
    question: "Which extras?",
    header: "Extras",
    options: [
      { label: "Cache", description: "redis" },
      { label: "Search", description: "full text" },
    ],
    multiSelect: true,
  },
  {
    question: "Which database?",
    header: "DB",
    options: [
      { label: "Postgres", description: "" },
      { label: "SQLite", description: "" },
    ],
    multiSelect: false,
  },
];

describe("the MCP host's questions through elicitation", () => {
  it("asks a multi-select and a single choice in one form; a typed answer wins over a choice", async () => {
    let schema: Record<string, unknown> = {};
    const client = await connect((params) => {
      schema = params.requestedSchema.properties;
      return { action: "accept", content: { q1: ["Cache", "Search"], q2: "Postgres", q2_other: "DuckDB" } };
    });
    const result = await client.callTool({ name: "AskUserQuestion", arguments: { questions } });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain('"Which extras?"="Cache, Search", "Which database?"="DuckDB"');
    expect(schema.q1).toMatchObject({ type: "array", title: "Extras" });
    expect(schema.q2).toMatchObject({ type: "string", oneOf: [{ const: "Postgres" }, { const: "SQLite" }] });
  });

  it("a declined form is no answer", async () => {
    const client = await connect(() => ({ action: "decline" }));
    const result = await client.callTool({ name: "AskUserQuestion", arguments: { questions } });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("did not answer");
  });

  it("a declined plan keeps plan mode and passes the feedback", async () => {
    const client = await connect(() => ({
      action: "accept",
      content: { approve: false, feedback: "smaller steps" },
    }));
    await client.callTool({ name: "EnterPlanMode", arguments: {} });
    const rejected = await client.callTool({ name: "ExitPlanMode", arguments: { plan: "do it all" } });
    expect(rejected.isError).toBe(true);
    expect(text(rejected)).toContain("Their feedback: smaller steps.");
  });
});
