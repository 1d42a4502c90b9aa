import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { waitFor } from "../mcp/fixtures.js";
import { CLI } from "./cli.js";
import {
  type Answer,
  type Asked,
  closeAfterTest,
  connectCli,
  sdkClient,
  text,
  workspace,
} from "./mcp-client.js";

/** The built `cc-tools mcp` over stdio, driven by the SDK's client; with `elicit`, the client answers elicitation. */
const serve = (
  dir: string,
  env: Record<string, string>,
  args: string[],
  elicit?: (asked: Asked) => Answer,
  name = "e2e",
) => connectCli(sdkClient(name, elicit), dir, env, args);

describe("session tools over MCP (built CLI, stdio)", () => {
  it("lists and runs the session tools; AskUserQuestion only for a client that elicits", async () => {
    const { dir, env } = workspace();
    const plain = await serve(dir, env, ["--permission-mode", "bypassPermissions"]);
    const names = (await plain.listTools()).tools.map((t) => t.name);
    for (const tool of [
      "TaskCreate",
      "TaskGet",
      "TaskUpdate",
      "TaskList",
      "TodoWrite",
      "EnterPlanMode",
      "ExitPlanMode",
    ])
      expect(names).toContain(tool);
    for (const tool of [
      "EnterWorktree",
      "ExitWorktree",
      "CronList",
      "CronDelete",
      "ToolSearch",
      "Skill",
      "Config",
      "Brief",
      "Sleep",
    ])
      expect(names).toContain(tool);
    // Nobody to ask, nothing that runs prompts, no other session to message.
    for (const tool of ["AskUserQuestion", "CronCreate", "SendMessage"]) expect(names).not.toContain(tool);

    const created = await plain.callTool({
      name: "TaskCreate",
      arguments: { subject: "Port it", description: "all of it" },
    });
    expect(text(created)).toContain("Task work_1 created");
    expect(text(await plain.callTool({ name: "TaskList", arguments: {} }))).toBe("work_1 [pending] Port it");
    const todos = await plain.callTool({
      name: "TodoWrite",
      arguments: { todos: [{ content: "Port", status: "in_progress", activeForm: "Porting" }] },
    });
    expect(text(todos)).toContain("1 in_progress");
    expect(todos._meta?.["cc-tools/todos"]).toEqual([
      { content: "Port", status: "in_progress", activeForm: "Porting" },
    ]);
    const found = await plain.callTool({ name: "ToolSearch", arguments: { query: "select:TaskGet" } });
    expect(text(found)).toContain('"name":"TaskGet"');
    expect(text(await plain.callTool({ name: "Sleep", arguments: { duration_ms: 10 } }))).toMatch(
      /^Slept for/,
    );
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await plain.callTool({ name, arguments: args });
      return { isError: Boolean(result.isError), text: text(result) };
    };
    expect((await call("TaskUpdate", { taskId: "work_1", status: "in_progress" })).text).toContain(
      "pending → in_progress",
    );
    expect((await call("TaskGet", { taskId: "work_1" })).text).toContain("Status: in_progress");
    expect(await call("CronList", {})).toEqual({ isError: false, text: "No cron jobs are scheduled." });
    expect((await call("CronDelete", { id: "cron_x" })).text).toContain("This session has no cron jobs");
    expect((await call("Skill", { skill: "nope" })).text).toContain('No skill named "nope"');
    expect((await call("Config", { setting: "model" })).text).toContain("model = (not set)");
    writeFileSync(join(dir, "report.md"), "# done\n");
    expect((await call("Brief", { message: "Done", attachments: ["report.md"] })).text).toContain(
      "1 attachment",
    );
    const worktree = await call("EnterWorktree", { name: "x" });
    expect(worktree).toMatchObject({ isError: true });
    expect(worktree.text).toContain("not inside a git repository");
    expect((await call("ExitWorktree", { action: "keep" })).text).toContain("not in a worktree");
    const asked = await plain.callTool({ name: "AskUserQuestion", arguments: { questions: [] } });
    expect(asked.isError).toBe(true);
    expect(text(asked)).toContain("not available here");

    const eliciting = await serve(dir, env, ["--permission-mode", "bypassPermissions"], () => ({
      action: "accept",
      content: { q1: "Blue" },
    }));
    expect((await eliciting.listTools()).tools.map((t) => t.name)).toContain("AskUserQuestion");
    const answered = await eliciting.callTool({
      name: "AskUserQuestion",
      arguments: {
        questions: [
          {
            question: "Which color?",
            header: "Color",
            options: [
              { label: "Red", description: "warm" },
              { label: "Blue", description: "cool" },
            ],
            multiSelect: false,
          },
        ],
      },
    });
    expect(text(answered)).toContain('"Which color?"="Blue"');
  }, 60_000);

  it("plan mode blocks a Write; the plan is approved through elicitation and the mode comes back", async () => {
    const { dir, env } = workspace();
    const plans: string[] = [];
    const client = await serve(dir, env, ["--permission-mode", "acceptEdits"], (params) => {
      plans.push(params.message);
      return { action: "accept", content: { approve: true } };
    });
    await client.callTool({ name: "EnterPlanMode", arguments: {} });
    const blocked = await client.callTool({
      name: "Write",
      arguments: { file_path: "a.txt", content: "a\n" },
    });
    expect(blocked.isError).toBe(true);
    expect(text(blocked)).toContain("plan mode is on");
    expect(existsSync(join(dir, "a.txt"))).toBe(false);
    const exited = await client.callTool({ name: "ExitPlanMode", arguments: { plan: "Write a.txt" } });
    expect(text(exited)).toContain("acceptEdits mode now");
    expect(plans[0]).toContain("Write a.txt");
    expect(
      (await client.callTool({ name: "Write", arguments: { file_path: "a.txt", content: "a\n" } })).isError,
    ).toBeFalsy();
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("a\n");
  }, 60_000);

  it("with --session, a restarted connection keeps its work items, todos and mode", async () => {
    const { dir, env } = workspace();
    const first = await serve(dir, env, ["--session", "work", "--permission-mode", "bypassPermissions"]);
    await first.callTool({ name: "TaskCreate", arguments: { subject: "Survive", description: "a restart" } });
    await first.callTool({
      name: "TodoWrite",
      arguments: { todos: [{ content: "Keep", status: "pending", activeForm: "Keeping" }] },
    });
    await first.callTool({ name: "EnterPlanMode", arguments: {} });
    await first.close();
    const second = await serve(dir, env, ["--session", "work", "--permission-mode", "bypassPermissions"]);
    expect(text(await second.callTool({ name: "TaskList", arguments: {} }))).toBe("work_1 [pending] Survive");
    expect(
      text(await second.callTool({ name: "TaskCreate", arguments: { subject: "Next", description: "" } })),
    ).toContain("work_2");
    const write = await second.callTool({ name: "Write", arguments: { file_path: "x.txt", content: "x" } });
    expect(text(write)).toContain("plan mode is on");
    const fresh = await serve(dir, env, ["--permission-mode", "bypassPermissions"]);
    expect(text(await fresh.callTool({ name: "TaskList", arguments: {} }))).toContain("No tasks yet");
  }, 60_000);
});

describe("SendMessage between the sessions of one HTTP server (built CLI)", () => {
  it("delivers to a named session with its next tool result; an unknown name lists the others", async () => {
    const { dir, env } = workspace();
    const child = spawn(
      process.execPath,
      [CLI, "mcp", "--cwd", dir, "--http", "--port", "0", "--permission-mode", "bypassPermissions"],
      {
        env: { ...process.env, ...env },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    try {
      expect(await waitFor(() => /listening on (\S+)/.test(stderr))).toBe(true);
      const url = new URL(/listening on (http\S+?\/mcp)\b/.exec(stderr)![1]!);
      const open = async (name: string) => {
        const client = new Client({ name, version: "1" });
        await client.connect(new StreamableHTTPClientTransport(url));
        return closeAfterTest(client);
      };
      const alice = await open("Alice App");
      const bob = await open("bob");
      expect((await alice.listTools()).tools.map((t) => t.name)).toContain("SendMessage");
      const unknown = await alice.callTool({
        name: "SendMessage",
        arguments: { to: "carol", message: "hi" },
      });
      expect(unknown.isError).toBe(true);
      expect(text(unknown)).toContain("Reachable now: bob-2.");
      const sent = await alice.callTool({
        name: "SendMessage",
        arguments: { to: "bob-2", message: "the build is green", summary: "build" },
      });
      expect(text(sent)).toContain("Message sent to bob-2");
      const next = await bob.callTool({ name: "TaskList", arguments: {} });
      expect(text(next)).toContain(
        '<message from="alice-app-1" summary="build">\nthe build is green\n</message>',
      );
      // Each message arrives once.
      expect(text(await bob.callTool({ name: "TaskList", arguments: {} }))).not.toContain("<message");
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.on("close", r));
    }
  }, 60_000);
});
