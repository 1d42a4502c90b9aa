import { describe, expect, it } from "vitest";
import { ToolResult } from "../../../src/core/result.js";
import { Session } from "../../../src/core/session.js";
import { runTool } from "../../../src/executor/run.js";
import { taskStoreSlot } from "../../../src/tasks/store.js";
import { todoSlot } from "../../../src/tasks/todos.js";
import { testContext } from "../../helpers/context.js";

type Ctx = ReturnType<typeof testContext>;

async function call(ctx: Ctx, name: string, input: Record<string, unknown>) {
  const result = await runTool(name, input, ctx);
  return { result, text: ToolResult.text(result), meta: result.metadata ?? {} };
}

async function create(ctx: Ctx, subject: string): Promise<string> {
  const { result, meta } = await call(ctx, "TaskCreate", { subject, description: `do ${subject}` });
  expect(result.isError).toBe(false);
  return (meta.task as { id: string }).id;
}

describe("TaskCreate, TaskGet, TaskUpdate, TaskList", () => {
  it("creates items, moves them through their statuses and shows them", async () => {
    const ctx = testContext();
    const id = await create(ctx, "Write the parser");
    expect(id).toBe("work_1");
    const got = await call(ctx, "TaskGet", { taskId: id });
    expect(got.text).toContain("Task work_1: Write the parser");
    expect(got.text).toContain("Status: pending");
    expect(got.text).toContain("Description: do Write the parser");

    const started = await call(ctx, "TaskUpdate", { taskId: id, status: "in_progress", owner: "me" });
    expect(started.text).toContain("status (pending → in_progress)");
    expect(started.text).toContain("owner");
    const done = await call(ctx, "TaskUpdate", { taskId: id, status: "completed" });
    expect(done.result.isError).toBe(false);
    expect(ctx.session.get(taskStoreSlot).get(id)?.status).toBe("completed");
    const list = await call(ctx, "TaskList", {});
    expect(list.text).toBe("work_1 [completed] Write the parser (owner: me)");
  });

  it("merges metadata and removes keys set to null", async () => {
    const ctx = testContext();
    const id = (await call(ctx, "TaskCreate", { subject: "a", description: "b", metadata: { x: 1, y: 2 } }))
      .meta.task as { id: string };
    await call(ctx, "TaskUpdate", { taskId: id.id, metadata: { y: null, z: "new" } });
    const got = await call(ctx, "TaskGet", { taskId: id.id });
    expect((got.meta.task as { metadata: unknown }).metadata).toEqual({ x: 1, z: "new" });
  });

  it("records dependencies both ways and lists only the blockers still open", async () => {
    const ctx = testContext();
    const a = await create(ctx, "design");
    const b = await create(ctx, "build");
    const c = await create(ctx, "ship");
    await call(ctx, "TaskUpdate", { taskId: b, addBlockedBy: [a] });
    await call(ctx, "TaskUpdate", { taskId: b, addBlocks: [c] });
    const early = await call(ctx, "TaskUpdate", { taskId: b, status: "in_progress" });
    expect(early.text).toContain(`Note: it is still blocked by ${a}, which is not completed.`);
    await call(ctx, "TaskUpdate", { taskId: b, status: "pending" });
    let list = (await call(ctx, "TaskList", {})).text;
    expect(list).toContain(`${b} [pending] build [blocked by ${a}]`);
    expect(list).toContain(`${c} [pending] ship [blocked by ${b}]`);
    expect((await call(ctx, "TaskGet", { taskId: a })).text).toContain(`Blocks: ${b}`);
    await call(ctx, "TaskUpdate", { taskId: a, status: "completed" });
    list = (await call(ctx, "TaskList", {})).text;
    expect(list).toContain(`${b} [pending] build\n`);
    expect((await call(ctx, "TaskGet", { taskId: b })).text).toContain(`Blocked by: ${a} (completed)`);
  });

  it("refuses a dependency that would make a cycle, and changes nothing", async () => {
    const ctx = testContext();
    const a = await create(ctx, "a");
    const b = await create(ctx, "b");
    const c = await create(ctx, "c");
    await call(ctx, "TaskUpdate", { taskId: a, addBlocks: [b] });
    await call(ctx, "TaskUpdate", { taskId: b, addBlocks: [c] });
    const cycle = await call(ctx, "TaskUpdate", { taskId: c, addBlocks: [a], subject: "renamed" });
    expect(cycle.result.isError).toBe(true);
    expect(cycle.text).toContain("would make a cycle");
    expect((await call(ctx, "TaskGet", { taskId: c })).text).toContain("Task work_3: c");
    const self = await call(ctx, "TaskUpdate", { taskId: a, addBlockedBy: [a] });
    expect(self.text).toContain("cannot block itself");
  });

  it("names the known ids when an id is unknown, for items and for dependencies", async () => {
    const ctx = testContext();
    const empty = await call(ctx, "TaskGet", { taskId: "work_9" });
    expect(empty.result.isError).toBe(true);
    expect(empty.text).toContain("This session has no work items");
    const a = await create(ctx, "alpha");
    const missing = await call(ctx, "TaskUpdate", { taskId: a, addBlocks: ["work_42"] });
    expect(missing.result.isError).toBe(true);
    expect(missing.text).toContain('No work item with id "work_42"');
    expect(missing.text).toContain("work_1 (alpha)");
  });

  it("deleted removes the item and every dependency on it", async () => {
    const ctx = testContext();
    const a = await create(ctx, "a");
    const b = await create(ctx, "b");
    await call(ctx, "TaskUpdate", { taskId: b, addBlockedBy: [a] });
    const deleted = await call(ctx, "TaskUpdate", { taskId: a, status: "deleted" });
    expect(deleted.text).toBe(`Task ${a} deleted.`);
    expect((await call(ctx, "TaskList", {})).text).toBe(`${b} [pending] b`);
    expect((await call(ctx, "TaskGet", { taskId: a })).result.isError).toBe(true);
  });

  it("shares the id space with background shells: TaskOutput and TaskStop take any id and explain", async () => {
    const ctx = testContext();
    const item = await create(ctx, "item");
    const bash = await call(ctx, "Bash", { command: "echo hi", run_in_background: true });
    const shellId = bash.meta.taskId as string;
    expect(shellId).toBe("shell_2");
    const output = await call(ctx, "TaskOutput", { task_id: item });
    expect(output.result.isError).toBe(true);
    expect(output.text).toContain("is a work item");
    const asItem = await call(ctx, "TaskGet", { taskId: shellId });
    expect(asItem.text).toContain("is a background shell task, not a work item");
    const stop = await call(ctx, "TaskStop", { task_id: "nope" });
    expect(stop.text).toContain('No task with id "nope"');
  });

  it("keeps work items (and the id counter) in the session's saved state", async () => {
    const ctx = testContext();
    const a = await create(ctx, "persisted");
    const b = await create(ctx, "blocked");
    await call(ctx, "TaskUpdate", { taskId: b, addBlockedBy: [a], owner: "agent-1" });
    const saved = JSON.parse(JSON.stringify(ctx.session.snapshot()));
    const later = testContext({ session: new Session({ saved }) });
    expect((await call(later, "TaskList", {})).text).toBe(
      `${a} [pending] persisted\n${b} [pending] blocked (owner: agent-1) [blocked by ${a}]`,
    );
    expect(await create(later, "next")).toBe("work_3");
  });
});

describe("TodoWrite", () => {
  const todo = (content: string, status: string) => ({ content, status, activeForm: `${content}ing` });

  it("replaces the list, counts the items by status and lets the host read it", async () => {
    const ctx = testContext();
    const seen: unknown[] = [];
    ctx.session.get(todoSlot).onChange((items) => seen.push(items.length));
    const first = await call(ctx, "TodoWrite", {
      todos: [todo("Test", "completed"), todo("Build", "in_progress"), todo("Ship", "pending")],
    });
    expect(first.text).toBe(
      "Todo list updated: 3 items (1 pending, 1 in_progress, 1 completed). Now: Building.",
    );
    expect(first.meta.counts).toEqual({ pending: 1, in_progress: 1, completed: 1 });
    await call(ctx, "TodoWrite", { todos: [todo("Ship", "pending")] });
    expect(ctx.session.get(todoSlot).items).toEqual([todo("Ship", "pending")]);
    expect(seen).toEqual([3, 1]);
  });

  it("refuses two items in progress and keeps the old list", async () => {
    const ctx = testContext();
    await call(ctx, "TodoWrite", { todos: [todo("A", "pending")] });
    const two = await call(ctx, "TodoWrite", { todos: [todo("A", "in_progress"), todo("B", "in_progress")] });
    expect(two.result.isError).toBe(true);
    expect(two.text).toContain('2 items are in_progress ("A", "B"); at most one may be');
    expect(ctx.session.get(todoSlot).items).toEqual([todo("A", "pending")]);
  });

  it("rejects items without content or activeForm, naming the parameter", async () => {
    const ctx = testContext();
    const bad = await call(ctx, "TodoWrite", {
      todos: [{ content: "", status: "pending", activeForm: "x" }],
    });
    expect(bad.result.isError).toBe(true);
    expect(bad.text).toContain("content");
  });

  it("survives a restart of the session", async () => {
    const ctx = testContext();
    await call(ctx, "TodoWrite", { todos: [todo("Keep", "in_progress")] });
    const later = testContext({
      session: new Session({ saved: JSON.parse(JSON.stringify(ctx.session.snapshot())) }),
    });
    expect(later.session.get(todoSlot).items).toEqual([todo("Keep", "in_progress")]);
  });
});
