import { describe, expect, it } from "vitest";
import { Session } from "../../src/core/session.js";
import { isRunning, type TaskRun, TaskStore, taskStoreSlot } from "../../src/tasks/store.js";

function fakeRun(onStop: () => void): TaskRun {
  return {
    outputFile: "/dev/null",
    output: () => ({ whole: "", head: "", tail: "", totalChars: 0, file: undefined, fileComplete: true }),
    settled: new Promise(() => {}),
    stop: async () => onStop(),
  };
}

describe("TaskStore", () => {
  it("numbers tasks of every kind in one id space and lists them by kind", () => {
    const store = new TaskStore();
    const item = store.add("work", "write the docs");
    const job = store.add("shell", "npm test", () => fakeRun(() => {}));
    expect([item.id, job.id]).toEqual(["work_1", "shell_2"]);
    expect(item.status).toBe("pending");
    expect(isRunning(job)).toBe(true);
    expect(isRunning(item)).toBe(false);
    expect(store.list("shell")).toEqual([job]);
    expect(store.get("work_1")).toBe(item);
  });

  it("stops every running task when the session is disposed", async () => {
    const session = new Session();
    const stopped: string[] = [];
    const store = session.get(taskStoreSlot);
    store.add("shell", "a", () => fakeRun(() => stopped.push("a")));
    const b = store.add("agent", "b", () => fakeRun(() => stopped.push("b")));
    store.add("shell", "c", () => fakeRun(() => stopped.push("c")));
    b.status = "completed";
    await session.dispose();
    expect(stopped.sort()).toEqual(["a", "c"]);
  });
});
