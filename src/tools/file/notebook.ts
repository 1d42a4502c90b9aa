import { randomBytes } from "node:crypto";
import { InputError } from "../../core/errors.js";
import type { ContentBlock } from "../../core/result.js";

/**
 * Jupyter notebooks (nbformat 4): reading cells for the model, locating a cell by id or `cell-N`, and
 * editing the JSON TEXT in place, cell by cell, so the bytes of the metadata and of every other cell stay
 * exactly as they were (whatever indentation or key order the file uses).
 */

export interface NotebookCell {
  cell_type: string;
  id?: string;
  source: string | string[];
  metadata: Record<string, unknown>;
  outputs?: NotebookOutput[];
  execution_count?: number | null;
  [key: string]: unknown;
}

interface NotebookOutput {
  output_type: string;
  name?: string;
  text?: string | string[];
  data?: Record<string, unknown>;
  ename?: string;
  evalue?: string;
  traceback?: string[];
}

export interface Notebook {
  nbformat: number;
  nbformat_minor: number;
  metadata: Record<string, unknown>;
  cells: NotebookCell[];
}

/** Longest text kept from one cell output. */
const MAX_OUTPUT_CHARS = 10_000;
/** nbformat's rule for cell ids. */
const CELL_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/** Image types in outputs that are shown as images. */
const OUTPUT_IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isSource = (v: unknown) =>
  typeof v === "string" || (Array.isArray(v) && v.every((s) => typeof s === "string"));

/** Everything that makes a notebook invalid nbformat 4; empty when it is valid. */
export function notebookProblems(nb: unknown): string[] {
  if (!isObject(nb)) return ["the file is not a JSON object"];
  const problems: string[] = [];
  if (nb.nbformat !== 4)
    problems.push(`nbformat is ${JSON.stringify(nb.nbformat)}, only version 4 is supported`);
  if (typeof nb.nbformat_minor !== "number") problems.push("nbformat_minor is missing");
  if (!isObject(nb.metadata)) problems.push("metadata is not an object");
  if (!Array.isArray(nb.cells)) return [...problems, "cells is not an array"];
  const needsIds = typeof nb.nbformat_minor === "number" && nb.nbformat_minor >= 5;
  const seen = new Set<string>();
  for (const [i, cell] of (nb.cells as unknown[]).entries()) {
    const where = `cell ${i}`;
    if (!isObject(cell)) {
      problems.push(`${where} is not an object`);
      continue;
    }
    if (!["code", "markdown", "raw"].includes(cell.cell_type as string))
      problems.push(`${where} has cell_type ${JSON.stringify(cell.cell_type)}`);
    if (!isSource(cell.source))
      problems.push(`${where} has a source that is neither a string nor a list of strings`);
    if (!isObject(cell.metadata)) problems.push(`${where} has no metadata object`);
    if (cell.cell_type === "code") {
      if (!Array.isArray(cell.outputs)) problems.push(`${where} is a code cell without an outputs list`);
      if (cell.execution_count !== null && !Number.isInteger(cell.execution_count))
        problems.push(`${where} has an invalid execution_count`);
    } else if ("outputs" in cell || "execution_count" in cell) {
      problems.push(`${where} is a ${String(cell.cell_type)} cell with code-cell fields`);
    }
    if (cell.id === undefined) {
      if (needsIds) problems.push(`${where} has no id (required from nbformat 4.5)`);
    } else if (typeof cell.id !== "string" || !CELL_ID.test(cell.id))
      problems.push(`${where} has an invalid id`);
    else if (seen.has(cell.id)) problems.push(`${where} repeats the id ${cell.id}`);
    else seen.add(cell.id);
  }
  return problems;
}

export function parseNotebook(text: string, path: string): Notebook {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new InputError(
      `${path} is not valid JSON (${(error as Error).message}), so it cannot be read as a notebook.`,
    );
  }
  const problems = notebookProblems(parsed);
  if (problems.length > 0)
    throw new InputError(`${path} is not a valid nbformat 4 notebook: ${problems.join("; ")}.`);
  return parsed as Notebook;
}

export const sourceText = (source: string | string[]) => (Array.isArray(source) ? source.join("") : source);

/** A source in the style the notebook already uses: nbformat writers store a list of lines. */
export function sourceLike(text: string, style: string | string[]): string | string[] {
  if (typeof style === "string") return text;
  return text === "" ? [] : (text.match(/[^\n]*\n|[^\n]+$/g) ?? []);
}

/** How the model names a cell: its id, or `cell-N` (0-based position) when it has none. */
export const cellLabel = (cell: NotebookCell, index: number) => cell.id ?? `cell-${index}`;

/** The index of the cell named `cellId` (an id, or `cell-N`); an error listing the cells when none is. */
export function findCell(nb: Notebook, cellId: string, path: string): number {
  const byId = nb.cells.findIndex((c) => c.id === cellId);
  if (byId !== -1) return byId;
  const positional = /^cell-(\d+)$/.exec(cellId);
  if (positional && Number(positional[1]) < nb.cells.length) return Number(positional[1]);
  const labels = nb.cells.map(cellLabel);
  const listed = labels.length > 20 ? `${labels.slice(0, 20).join(", ")}, ...` : labels.join(", ") || "none";
  throw new InputError(
    `${path} has no cell "${cellId}". Its cells are: ${listed}. Read the notebook to see them.`,
  );
}

export function newCellId(nb: Notebook): string {
  const taken = new Set(nb.cells.map((c) => c.id));
  for (;;) {
    const id = randomBytes(4).toString("hex");
    if (!taken.has(id)) return id;
  }
}

function clip(text: string): string {
  return text.length <= MAX_OUTPUT_CHARS
    ? text
    : `${text.slice(0, MAX_OUTPUT_CHARS)}\n... [${text.length - MAX_OUTPUT_CHARS} more characters of output]`;
}

const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

function outputBlocks(output: NotebookOutput): ContentBlock[] {
  if (output.output_type === "stream") return [{ type: "text", text: clip(sourceText(output.text ?? "")) }];
  if (output.output_type === "error") {
    const trace = (output.traceback ?? []).join("\n").replace(ANSI, "");
    return [{ type: "text", text: clip(trace || `${output.ename}: ${output.evalue}`) }];
  }
  const data = output.data ?? {};
  const blocks: ContentBlock[] = [];
  const plain = data["text/plain"];
  if (plain !== undefined) blocks.push({ type: "text", text: clip(sourceText(plain as string | string[])) });
  for (const type of OUTPUT_IMAGE_TYPES) {
    const image = data[type];
    if (image !== undefined)
      blocks.push({
        type: "image",
        data: sourceText(image as string | string[]).replace(/\s/g, ""),
        mimeType: type,
      });
  }
  if (blocks.length === 0)
    blocks.push({ type: "text", text: `[${Object.keys(data).join(", ") || "empty"} output]` });
  return blocks;
}

/** Every cell with its id, type, source and outputs; image outputs as image blocks. */
export function notebookBlocks(nb: Notebook): ContentBlock[] {
  const language = (nb.metadata.language_info as { name?: string } | undefined)?.name ?? "python";
  const blocks: ContentBlock[] = [];
  let text = "";
  const flush = () => {
    if (text) blocks.push({ type: "text", text });
    text = "";
  };
  nb.cells.forEach((cell, i) => {
    const count = cell.cell_type === "code" ? ` execution_count="${cell.execution_count ?? ""}"` : "";
    const lang = cell.cell_type === "code" ? ` language="${language}"` : "";
    text += `<cell id="${cellLabel(cell, i)}" type="${cell.cell_type}"${lang}${count}>\n${sourceText(cell.source)}\n</cell>\n`;
    const outputs = cell.outputs ?? [];
    if (outputs.length === 0) return;
    text += `<outputs cell="${cellLabel(cell, i)}">\n`;
    for (const output of outputs) {
      for (const block of outputBlocks(output)) {
        if (block.type === "text") text += `${block.text.replace(/\n$/, "")}\n`;
        else {
          text += "[image output, shown below]\n";
          flush();
          blocks.push(block);
        }
      }
    }
    text += "</outputs>\n";
  });
  if (nb.cells.length === 0) text = "The notebook has no cells.";
  flush();
  return blocks;
}

// ---- editing the JSON text ----

/** End (exclusive) of the JSON string starting at `i`. */
function skipString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === "\\") j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

/** End (exclusive) of the JSON value starting at `i`. */
function skipValue(text: string, i: number): number {
  if (text[i] === '"') return skipString(text, i);
  if (text[i] !== "{" && text[i] !== "[") {
    let j = i;
    while (j < text.length && !/[\s,\]}]/.test(text[j]!)) j++;
    return j;
  }
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === '"') j = skipString(text, j) - 1;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return text.length;
}

const skipSpace = (text: string, i: number) => {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
};

/** Where each cell of the top-level `cells` array is in the text, and the array's own brackets. */
export interface CellLayout {
  open: number;
  close: number;
  cells: Array<{ start: number; end: number }>;
  /** One level of indentation as the file writes it ("" for compact JSON). */
  unit: string;
}

export function cellLayout(text: string): CellLayout {
  let i = skipSpace(text, text.indexOf("{") + 1);
  const unit = /^[ \t]*/.exec(text.slice(text.lastIndexOf("\n", i) + 1, i))?.[0] ?? "";
  while (i < text.length && text[i] === '"') {
    const keyEnd = skipString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    const valueStart = skipSpace(text, skipSpace(text, keyEnd) + 1);
    const valueEnd = skipValue(text, valueStart);
    if (key === "cells") {
      const cells: CellLayout["cells"] = [];
      let j = skipSpace(text, valueStart + 1);
      while (text[j] !== "]" && j < valueEnd) {
        const end = skipValue(text, j);
        cells.push({ start: j, end });
        j = skipSpace(text, end);
        if (text[j] === ",") j = skipSpace(text, j + 1);
      }
      return { open: valueStart, close: valueEnd - 1, cells, unit };
    }
    i = skipSpace(text, valueEnd);
    if (text[i] === ",") i = skipSpace(text, i + 1);
  }
  throw new InputError("The notebook has no top-level cells array.");
}

/** A cell as JSON text, indented to sit at `indent` in a file indented by `unit`. */
export function cellJson(cell: NotebookCell, unit: string, indent: string): string {
  if (unit === "") return JSON.stringify(cell);
  return JSON.stringify(cell, null, unit).replaceAll("\n", `\n${indent}`);
}

/** The indentation of the line `offset` is on, up to `offset`. */
export function indentAt(text: string, offset: number): string {
  return /^[ \t]*/.exec(text.slice(text.lastIndexOf("\n", offset - 1) + 1, offset))?.[0] ?? "";
}
