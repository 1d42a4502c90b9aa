import { extname } from "node:path";
import * as z from "zod";
import type { ToolCallContext } from "../../core/context.js";
import { InputError, ToolError } from "../../core/errors.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { applySplices, decodeText, type Splice, spliceBytes, unencodable } from "../../fs/codec.js";
import { missingFileMessage } from "../../fs/missing-file.js";
import { pathSubject } from "../../fs/paths.js";
import {
  readCurrent,
  requireFreshRead,
  requireWritableEncoding,
  withWriteTarget,
  writeAndRecord,
} from "./guard.js";
import {
  type CellLayout,
  cellJson,
  cellLabel,
  cellLayout,
  findCell,
  indentAt,
  type Notebook,
  type NotebookCell,
  newCellId,
  notebookProblems,
  parseNotebook,
  sourceLike,
} from "./notebook.js";

/** nbformat minor version from which every cell carries an id. */
const IDS_FROM_MINOR = 5;

const inputSchema = z.strictObject({
  notebook_path: z
    .string()
    .describe(
      "The Jupyter notebook (.ipynb) to change: an absolute path, or relative to the working directory.",
    ),
  cell_id: z
    .string()
    .optional()
    .describe(
      'The cell to replace or delete, or to insert after: its id as Read shows it, or "cell-N" for the cell at 0-based position N. ' +
        "When inserting without it, the new cell goes first.",
    ),
  new_source: z.string().describe("The new source of the cell (ignored when deleting)."),
  cell_type: z
    .enum(["code", "markdown"])
    .optional()
    .describe("The cell's type. Required when inserting; when replacing, changes the cell's type."),
  edit_mode: z
    .enum(["replace", "insert", "delete"])
    .optional()
    .describe("replace (the default) rewrites the cell, insert adds a new cell, delete removes the cell."),
});

type NotebookEditInput = z.output<typeof inputSchema>;

const description = `Changes one cell of a Jupyter notebook (.ipynb): replace its source, insert a new cell, or delete it.

- Read the notebook first in this session; cells are named by the ids Read shows (or "cell-N" by position).
- Replacing a code cell clears its outputs and execution count.
- Insert puts the new cell after cell_id, or at the start when cell_id is omitted; cell_type is required.
- The notebook stays valid nbformat, and its metadata and other cells are left exactly as they were.`;

/** Code-cell fields added or removed to suit the cell's type; a code cell's outputs start empty. */
function setType(cell: NotebookCell, type: string): NotebookCell {
  cell.cell_type = type;
  if (type === "code") {
    cell.execution_count = null;
    cell.outputs = [];
  } else {
    delete cell.execution_count;
    delete cell.outputs;
  }
  return cell;
}

/** A new cell, keys in the alphabetical order nbformat writers use, with an id where the version has them. */
function freshCell(nb: Notebook, type: string, source: string): NotebookCell {
  const cell = setType(
    { cell_type: type, metadata: {}, source: sourceLike(source, nb.cells[0]?.source ?? []) },
    type,
  );
  if (nb.nbformat_minor >= IDS_FROM_MINOR) cell.id = newCellId(nb);
  return Object.fromEntries(Object.entries(cell).sort(([a], [b]) => (a < b ? -1 : 1))) as NotebookCell;
}

/** Where in the text a new cell goes at `position`, separated from its neighbours as the file does. */
function insertion(view: string, layout: CellLayout, position: number, cell: NotebookCell): Splice {
  const { cells, unit } = layout;
  if (cells.length === 0) {
    const outer = indentAt(view, layout.open);
    const body =
      unit === ""
        ? cellJson(cell, unit, "")
        : `\n${outer}${unit}${cellJson(cell, unit, outer + unit)}\n${outer}`;
    return { start: layout.open + 1, end: layout.close, text: body };
  }
  const indent = indentAt(view, cells[0]!.start);
  const separator =
    cells.length > 1
      ? view.slice(view.indexOf(",", cells[0]!.end) + 1, cells[1]!.start)
      : unit
        ? `\n${indent}`
        : "";
  const json = cellJson(cell, unit, indent);
  if (position < cells.length) {
    const at = cells[position]!.start;
    return { start: at, end: at, text: `${json},${separator}` };
  }
  const at = cells[cells.length - 1]!.end;
  return { start: at, end: at, text: `,${separator}${json}` };
}

function removal(layout: CellLayout, index: number): Splice {
  const { cells } = layout;
  if (cells.length === 1) return { start: layout.open + 1, end: layout.close, text: "" };
  if (index < cells.length - 1) return { start: cells[index]!.start, end: cells[index + 1]!.start, text: "" };
  return { start: cells[index - 1]!.end, end: cells[index]!.end, text: "" };
}

function requireCellId(input: NotebookEditInput, mode: string): string {
  if (input.cell_id === undefined)
    throw new InputError(`cell_id is required to ${mode} a cell: give the id Read shows, or "cell-N".`);
  return input.cell_id;
}

/** The one splice an edit makes, and how to describe it. */
function planEdit(
  view: string,
  nb: Notebook,
  input: NotebookEditInput,
  path: string,
): { splice: Splice; summary: string } {
  const layout = cellLayout(view);
  const mode = input.edit_mode ?? "replace";
  if (mode === "insert") {
    if (input.cell_type === undefined)
      throw new InputError('cell_type ("code" or "markdown") is required when inserting a cell.');
    const position = input.cell_id === undefined ? 0 : findCell(nb, input.cell_id, path) + 1;
    const cell = freshCell(nb, input.cell_type, input.new_source);
    const where =
      position === 0 ? "at the start" : `after cell ${cellLabel(nb.cells[position - 1]!, position - 1)}`;
    return {
      splice: insertion(view, layout, position, cell),
      summary: `Inserted a new ${input.cell_type} cell ${cell.id ?? `cell-${position}`} ${where}`,
    };
  }
  const index = findCell(nb, requireCellId(input, mode), path);
  const label = cellLabel(nb.cells[index]!, index);
  if (mode === "delete") return { splice: removal(layout, index), summary: `Deleted cell ${label}` };
  const previous = nb.cells[index]!;
  // The cell's own key order, metadata and source style are kept, so its JSON changes only where it must.
  const cell = setType(
    { ...previous, source: sourceLike(input.new_source, previous.source) },
    input.cell_type ?? previous.cell_type,
  );
  const { start, end } = layout.cells[index]!;
  const hadOutputs = previous.cell_type === "code" && (previous.outputs?.length ?? 0) > 0;
  const cleared = hadOutputs ? " (its outputs were cleared)" : "";
  const retyped = cell.cell_type === previous.cell_type ? "" : `, now a ${cell.cell_type} cell,`;
  return {
    splice: { start, end, text: cellJson(cell, layout.unit, indentAt(view, start)) },
    summary: `Replaced the source of ${previous.cell_type} cell ${label}${retyped}${cleared}`,
  };
}

async function editNotebook(
  path: string,
  target: string,
  input: NotebookEditInput,
  ctx: ToolCallContext,
): Promise<ToolResult> {
  const current = await readCurrent(target);
  if (!current) throw new ToolError(await missingFileMessage(path, ctx.workingDir));
  const decoded = decodeText(current);
  if (!decoded) throw new InputError(`${path} is binary, not a notebook.`);
  requireFreshRead(ctx, target, current, decoded.view);
  requireWritableEncoding(path, decoded);
  const nb = parseNotebook(decoded.view, path);
  const { splice, summary } = planEdit(decoded.view, nb, input, path);
  const edited = applySplices(decoded.view, [splice]);
  // Checked before anything is written: a notebook Jupyter cannot open is worse than a failed edit.
  const problems = notebookProblems(JSON.parse(edited));
  if (problems.length > 0)
    throw new ToolError(
      `The edit would leave ${path} invalid (${problems.join("; ")}), so nothing was written.`,
    );
  const foreign = unencodable(splice.text, decoded.format.encoding);
  if (foreign.length > 0)
    throw new InputError(
      `${path} is stored as ${decoded.format.encoding}, which cannot hold ${foreign.join(" ")}; nothing was written. ` +
        `Notebooks should be UTF-8: convert it (iconv -f ${decoded.format.encoding === "latin1" ? "WINDOWS-1252" : decoded.format.encoding} -t UTF-8) and retry.`,
    );
  const bytes = spliceBytes(decoded, [splice]);
  const note = await writeAndRecord(ctx, target, current, bytes, edited);
  return ToolResult.success(`${summary} in ${path}.${note && ` ${note}`}`, {
    path: target,
    editMode: input.edit_mode ?? "replace",
  });
}

export const notebookEditTool = defineTool({
  name: ToolName.NotebookEdit,
  description,
  permissionLevel: PermissionLevel.Write,
  inputSchema,
  permissionSubject: (input, ctx) => pathSubject(ctx, input.notebook_path, "write"),
  async execute(input, ctx) {
    const path = ctx.resolvePath(input.notebook_path);
    if (extname(path).toLowerCase() !== ".ipynb") {
      throw new InputError(
        `${path} is not a Jupyter notebook (.ipynb); change other files with Edit or Write.`,
      );
    }
    return withWriteTarget(path, (target) => editNotebook(path, target, input, ctx));
  },
});
