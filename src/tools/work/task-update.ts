import * as z from "zod";
import { InputError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import type { TaskStore } from "../../tasks/store.js";
import { findWorkItem, itemData, openBlockers, type WorkItem, workStore } from "./items.js";

/** True when `to` is reachable from `from` along "blocks" edges: adding to → from would close a cycle. */
function reaches(store: TaskStore, from: string, to: string): boolean {
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (id === to) return true;
    if (seen.has(id)) continue;
    seen.add(id);
    stack.push(...(store.get(id)?.work?.blocks ?? []));
  }
  return false;
}

/** Checks every new edge (blocker → blocked) before any is added, so a refused update changes nothing. */
function planEdges(
  ctx: Parameters<typeof findWorkItem>[0],
  item: WorkItem,
  blocks: string[],
  blockedBy: string[],
) {
  const store = workStore(ctx);
  const edges: Array<[WorkItem, WorkItem]> = [
    ...blocks.map((id): [WorkItem, WorkItem] => [item, findWorkItem(ctx, id)]),
    ...blockedBy.map((id): [WorkItem, WorkItem] => [findWorkItem(ctx, id), item]),
  ];
  for (const [blocker, blocked] of edges) {
    if (blocker === blocked) throw new InputError(`Task ${item.id} cannot block itself.`);
    if (reaches(store, blocked.id, blocker.id)) {
      throw new InputError(
        `${blocker.id} blocking ${blocked.id} would make a cycle (${blocked.id} already blocks ${blocker.id}, directly or through other tasks); nothing was changed.`,
      );
    }
  }
  return edges;
}

export const taskUpdateTool = defineTool({
  name: ToolName.TaskUpdate,
  description: [
    "Updates a work item of this session's task list.",
    "",
    "- status: pending → in_progress when you start it, → completed when it is fully done; deleted removes it (and every dependency on it).",
    "- addBlocks / addBlockedBy add dependencies on other existing items; a dependency that would make a cycle is refused.",
    "- subject, description, activeForm and owner replace the old values; metadata keys are merged in (a key set to null is removed).",
  ].join("\n"),
  permissionLevel: PermissionLevel.None,
  inputSchema: z.strictObject({
    taskId: z.string().describe("The id of the work item to update."),
    subject: z.string().min(1).optional().describe("New title."),
    description: z.string().optional().describe("New description."),
    activeForm: z.string().optional().describe("New present-continuous form."),
    status: z
      .union([z.enum(["pending", "in_progress", "completed"]), z.literal("deleted")])
      .optional()
      .describe("New status; deleted removes the item."),
    addBlocks: z
      .array(z.string())
      .optional()
      .describe("Ids of items that cannot start until this one is done."),
    addBlockedBy: z.array(z.string()).optional().describe("Ids of items that must be done before this one."),
    owner: z.string().optional().describe("Who works on it (an agent's name, say)."),
    metadata: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("Keys to merge into the item's metadata; null removes a key."),
  }),
  async execute(input, ctx) {
    const store = workStore(ctx);
    const item = findWorkItem(ctx, input.taskId);
    if (input.status === "deleted") {
      store.removeWork(item.id);
      return ToolResult.success(`Task ${item.id} deleted.`, { taskId: item.id, deleted: true });
    }
    const edges = planEdges(ctx, item, input.addBlocks ?? [], input.addBlockedBy ?? []);
    const changed: string[] = [];
    const { work } = item;
    if (input.subject !== undefined && input.subject !== work.subject) {
      work.subject = input.subject;
      item.description = input.subject;
      changed.push("subject");
    }
    if (input.description !== undefined && input.description !== work.detail) {
      work.detail = input.description;
      changed.push("description");
    }
    if (input.activeForm !== undefined && input.activeForm !== work.activeForm) {
      work.activeForm = input.activeForm;
      changed.push("activeForm");
    }
    if (input.owner !== undefined && input.owner !== work.owner) {
      work.owner = input.owner;
      changed.push("owner");
    }
    if (input.status !== undefined && input.status !== item.status) {
      changed.push(`status (${item.status} → ${input.status})`);
      item.status = input.status;
      if (input.status === "completed") item.endedAt = Date.now();
    }
    if (input.metadata) {
      for (const [key, value] of Object.entries(input.metadata)) {
        if (value === null) delete work.metadata[key];
        // defineProperty: a key named __proto__ is data like any other, never the object's prototype.
        else
          Object.defineProperty(work.metadata, key, {
            value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
      }
      changed.push("metadata");
    }
    for (const [blocker, blocked] of edges) {
      if (!blocker.work.blocks.includes(blocked.id)) blocker.work.blocks.push(blocked.id);
      if (!blocked.work.blockedBy.includes(blocker.id)) blocked.work.blockedBy.push(blocker.id);
    }
    if (edges.length > 0) changed.push("dependencies");
    const blockers = openBlockers(store, item);
    const warning =
      item.status === "in_progress" && blockers.length > 0
        ? ` Note: it is still blocked by ${blockers.join(", ")}, which ${blockers.length === 1 ? "is" : "are"} not completed.`
        : "";
    const text =
      changed.length > 0
        ? `Updated task ${item.id}: ${changed.join(", ")}.${warning}`
        : `Task ${item.id} already had these values; nothing changed.`;
    return ToolResult.success(text, { task: itemData(store, item) });
  },
});
