import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../../src/core/result.js";
import { Session } from "../../../src/core/session.js";
import { runTool } from "../../../src/executor/run.js";
import { taskStoreSlot } from "../../../src/tasks/store.js";
import { testContext } from "../../helpers/context.js";
import { eventually, survivors, uniqueSeconds } from "../../process/ps.js";

async function call(name: string, input: Record<string, unknown>, ctx: ReturnType<typeof testContext>) {
  const result = await runTool(name, input, ctx);
  return { result, text: ToolResult.text(result) };
}

async function startJob(command: string, ctx: ReturnType<typeof testContext>): Promise<string> {
  const { result, text } = await call("Bash", { command, run_in_background: true }, ctx);
  expect(result.isError).toBe(false);
  expect(text).toMatch(/TaskOutput/);
  return result.metadata?.taskId as string;
}

describe("background commands with TaskOutput and TaskStop", () => {
  it("returns a task id at once and lists the job in the session's task store", async () => {
    const ctx = testContext();
    const secs = uniqueSeconds();
    const id = await startJob(`sleep ${secs}`, ctx);
    const tasks = ctx.session.get(taskStoreSlot).list("shell");
    expect(tasks.map((t) => [t.id, t.status, t.description])).toEqual([[id, "running", `sleep ${secs}`]]);
  });

  it("waits for completion and returns the output, status and exit code", async () => {
    const ctx = testContext();
    const id = await startJob("echo first; echo second >&2; sleep 0.2; exit 3", ctx);
    const { result, text } = await call("TaskOutput", { task_id: id }, ctx);
    expect(result.isError).toBe(false);
    expect(text).toContain("<retrieval_status>success</retrieval_status>");
    expect(text).toContain("<status>failed</status>");
    expect(text).toContain("<exit_code>3</exit_code>");
    expect(text).toContain("<output>\nfirst\nsecond\n</output>");
    expect(readFileSync(result.metadata?.outputFile as string, "utf8")).toBe("first\nsecond\n");
  });

  it("without blocking returns the output so far", async () => {
    const ctx = testContext();
    const id = await startJob(`echo early; sleep ${uniqueSeconds()}`, ctx);
    await eventually(() => ctx.session.get(taskStoreSlot).get(id)!.run!.output().totalChars > 0);
    const { text } = await call("TaskOutput", { task_id: id, block: false }, ctx);
    expect(text).toContain("<retrieval_status>not_ready</retrieval_status>");
    expect(text).toContain("<status>running</status>");
    expect(text).toContain("early");
  });

  it("stops waiting at its timeout and says the task still runs", async () => {
    const ctx = testContext();
    const id = await startJob(`sleep ${uniqueSeconds()}`, ctx);
    const { text } = await call("TaskOutput", { task_id: id, timeout: 200 }, ctx);
    expect(text).toContain("<retrieval_status>timeout</retrieval_status>");
    expect(text).toMatch(/TaskStop/);
  });

  it("TaskStop kills the job and everything it started, setsid included; the old names work too", async () => {
    const ctx = testContext();
    const secs = uniqueSeconds();
    const first = await startJob(`setsid sleep ${secs} >/dev/null 2>&1 & sleep ${secs}`, ctx);
    const second = await startJob(`sleep ${secs}`, ctx);
    await eventually(() => survivors(secs).length >= 3);
    expect((await call("TaskStop", { task_id: first }, ctx)).text).toMatch(/Stopped task/);
    expect((await call("KillShell", { shell_id: second }, ctx)).result.isError).toBe(false);
    expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
    const { text } = await call("BashOutput", { task_id: first }, ctx);
    expect(text).toContain("<status>killed</status>");
  });

  it("tells the model in the next shell result, once, that a background task has ended", async () => {
    const ctx = testContext();
    const id = await startJob("echo done; exit 3", ctx);
    const store = ctx.session.get(taskStoreSlot);
    await store.get(id)!.run!.settled;
    const next = await call("Bash", { command: "echo next" }, ctx);
    expect(next.text).toBe(
      `next\n\nBackground task ${id} (echo done; exit 3) has ended: failed, exit code 3. Read its output with TaskOutput (task_id "${id}").`,
    );
    expect((await call("Bash", { command: "echo again" }, ctx)).text).toBe("again");
    const read = await startJob("true", ctx);
    await store.get(read)!.run!.settled;
    expect((await call("TaskOutput", { task_id: read }, ctx)).text).toContain("<output>(no output)</output>");
    expect((await call("Bash", { command: "echo seen" }, ctx)).text).toBe("seen");
  });

  it("in the next process of a named session, says where an earlier process's task went and keeps ids unique", async () => {
    const first = testContext();
    const id = await startJob("echo from the first process", first);
    await first.session.get(taskStoreSlot).get(id)!.run!.settled;
    const saved = first.session.snapshot();
    const workingDir = first.workingDir;
    const second = testContext({ workingDir, session: new Session({ saved, dir: first.session.dir }) });
    const { result, text } = await call("TaskOutput", { task_id: id }, second);
    expect(result.isError).toBe(true);
    expect(text).toMatch(
      /started by an earlier process of this session and ended with it \(completed, exit code 0\)/,
    );
    const file = text.match(/Its output is in (\S+);/)![1]!;
    expect(readFileSync(file, "utf8")).toBe("from the first process\n");
    expect(await startJob("true", second)).not.toBe(id);
  });

  it("refuses to stop a finished task or an unknown id, naming the tasks there are", async () => {
    const ctx = testContext();
    const id = await startJob("true", ctx);
    await call("TaskOutput", { task_id: id }, ctx);
    expect((await call("TaskStop", { task_id: id }, ctx)).text).toMatch(
      /already ended \(completed, exit code 0\)/,
    );
    const unknown = await call("TaskStop", { task_id: "shell_99" }, ctx);
    expect(unknown.result.isError).toBe(true);
    expect(unknown.text).toContain(`${id} (completed)`);
    expect((await call("TaskStop", {}, ctx)).text).toMatch(/Pass task_id/);
  });

  it("kills every job when the session ends", async () => {
    const ctx = testContext();
    const secs = uniqueSeconds();
    await startJob(`sleep ${secs}`, ctx);
    await startJob(`sleep ${secs}`, ctx);
    await eventually(() => survivors(secs).length >= 2);
    await ctx.session.dispose();
    expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
  });

  it("keeps a flooding job's memory bounded and its file capped", async () => {
    const ctx = testContext();
    const id = await startJob("yes | head -c 20000000", ctx);
    const { result, text } = await call("TaskOutput", { task_id: id }, ctx);
    expect(text).toContain("<status>completed</status>");
    expect(text.length).toBeLessThan(15_000);
    expect(text).toContain(result.metadata?.outputFile as string);
  });
});
