import type { ToolContext } from "../../core/context.js";
import { InputError } from "../../core/errors.js";
import { ToolName } from "../../core/tool-names.js";
import { type RunningTask, type Task, taskStoreSlot } from "../../tasks/store.js";

/** The session's task with this id, when it is one that runs; otherwise an error naming the ids there are. */
export function findRunTask(ctx: ToolContext, id: string): Task & Pick<RunningTask, "run"> {
  const store = ctx.session.get(taskStoreSlot);
  const task = store.get(id);
  if (!task) {
    const past = store.pastRun(id);
    if (past) {
      const code =
        past.exitCode === undefined || past.exitCode === null ? "" : `, exit code ${past.exitCode}`;
      throw new InputError(
        `Task ${id} (${past.description}) was started by an earlier process of this session and ended with it ` +
          `(${past.status}${code}): background tasks live only as long as the process that started them, so ` +
          `start long jobs under one long-lived process (cc-tools mcp). Its output is in ${past.outputFile}; read it with ${ToolName.Read}.`,
      );
    }
    const known = store.list().filter((t) => t.run);
    const hint =
      known.length > 0
        ? `Tasks of this session: ${known.map((t) => `${t.id} (${t.status})`).join(", ")}.`
        : "This session has started no background tasks.";
    throw new InputError(`No task with id "${id}". ${hint}`);
  }
  if (!task.run) {
    throw new InputError(
      `Task ${id} is a work item: it has no output and nothing to stop. Use TaskGet to see it.`,
    );
  }
  return task as Task & Pick<RunningTask, "run">;
}
