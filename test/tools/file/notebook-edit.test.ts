import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { notebookProblems } from "../../../src/tools/file/notebook.js";
import { call, fileContext } from "./util.js";

const NOTEBOOK = {
  cells: [
    { cell_type: "markdown", id: "intro", metadata: { tags: ["x"] }, source: ["# Title\n", "Intro text"] },
    {
      cell_type: "code",
      execution_count: 3,
      id: "calc",
      metadata: {},
      outputs: [{ name: "stdout", output_type: "stream", text: ["2\n"] }],
      source: ["x = 1\n", "print(x + 1)"],
    },
    { cell_type: "code", execution_count: null, id: "tail", metadata: {}, outputs: [], source: [] },
  ],
  metadata: { kernelspec: { name: "python3" }, language_info: { name: "python" } },
  nbformat: 4,
  nbformat_minor: 5,
};

/** Jupyter's own layout: one-space indent, trailing newline. */
const serialise = (nb: unknown) => `${JSON.stringify(nb, null, 1)}\n`;

async function setup(content = serialise(NOTEBOOK)) {
  const ctx = fileContext();
  const path = join(ctx.workingDir, "n.ipynb");
  writeFileSync(path, content);
  await call(ctx, "Read", { file_path: path });
  return { ctx, path };
}

const load = (path: string) => JSON.parse(readFileSync(path, "utf8")) as typeof NOTEBOOK;

describe("NotebookEdit", () => {
  it("replaces a code cell's source, clears its outputs, and leaves every other byte alone", async () => {
    const { ctx, path } = await setup();
    const result = await call(ctx, "NotebookEdit", {
      notebook_path: path,
      cell_id: "calc",
      new_source: "y = 2\nprint(y)",
    });
    expect(result.isError).toBe(false);
    const expected = structuredClone(NOTEBOOK);
    Object.assign(expected.cells[1]!, {
      execution_count: null,
      outputs: [],
      source: ["y = 2\n", "print(y)"],
    });
    expect(readFileSync(path, "utf8")).toBe(serialise(expected));
  });

  it("inserts after a cell, or at the start, with a valid new id", async () => {
    const { ctx, path } = await setup();
    await call(ctx, "NotebookEdit", {
      notebook_path: path,
      cell_id: "intro",
      new_source: "## Part",
      cell_type: "markdown",
      edit_mode: "insert",
    });
    const first = await call(ctx, "NotebookEdit", {
      notebook_path: path,
      new_source: "import os",
      cell_type: "code",
      edit_mode: "insert",
    });
    expect(first.isError).toBe(false);
    const nb = load(path);
    expect(nb.cells.map((c) => c.cell_type)).toEqual(["code", "markdown", "markdown", "code", "code"]);
    expect(nb.cells[2]).toMatchObject({ source: ["## Part"], metadata: {} });
    expect(nb.cells[0]).toMatchObject({ source: ["import os"], outputs: [], execution_count: null });
    expect(nb.cells[0]!.id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(notebookProblems(nb)).toEqual([]);
    // The untouched cells are still exactly where they were, byte for byte.
    const text = readFileSync(path, "utf8");
    expect(text).toContain(JSON.stringify(NOTEBOOK.cells[1], null, 1).replaceAll("\n", "\n  "));
  });

  it("deletes a cell by id or by cell-N position", async () => {
    const { ctx, path } = await setup();
    await call(ctx, "NotebookEdit", {
      notebook_path: path,
      cell_id: "tail",
      new_source: "",
      edit_mode: "delete",
    });
    await call(ctx, "NotebookEdit", {
      notebook_path: path,
      cell_id: "cell-0",
      new_source: "",
      edit_mode: "delete",
    });
    const nb = load(path);
    expect(nb.cells.map((c) => c.id)).toEqual(["calc"]);
    expect(readFileSync(path, "utf8")).toBe(serialise({ ...NOTEBOOK, cells: [NOTEBOOK.cells[1]] }));
  });

  it("changes a cell's type on replace", async () => {
    const { ctx, path } = await setup();
    await call(ctx, "NotebookEdit", {
      notebook_path: path,
      cell_id: "calc",
      new_source: "Now prose",
      cell_type: "markdown",
    });
    const cell = load(path).cells[1]!;
    expect(cell).toEqual({ cell_type: "markdown", id: "calc", metadata: {}, source: ["Now prose"] });
  });

  it("refuses an unknown cell (listing the real ones), a missing cell_type on insert, and an unread notebook", async () => {
    const { ctx, path } = await setup();
    const before = readFileSync(path, "utf8");
    expect(
      (await call(ctx, "NotebookEdit", { notebook_path: path, cell_id: "nope", new_source: "x" })).text,
    ).toMatch(/no cell "nope".*intro, calc, tail/);
    expect(
      (await call(ctx, "NotebookEdit", { notebook_path: path, new_source: "x", edit_mode: "insert" })).text,
    ).toMatch(/cell_type .* is required/);
    const other = fileContext();
    const otherPath = join(other.workingDir, "n.ipynb");
    writeFileSync(otherPath, before);
    expect(
      (await call(other, "NotebookEdit", { notebook_path: otherPath, cell_id: "calc", new_source: "x" }))
        .text,
    ).toMatch(/has not been read/);
    expect(readFileSync(path, "utf8")).toBe(before);
  });

  it("edits a notebook with no ids (nbformat 4.4) by position without adding ids", async () => {
    const old = { ...NOTEBOOK, nbformat_minor: 4, cells: NOTEBOOK.cells.map(({ id: _id, ...rest }) => rest) };
    const { ctx, path } = await setup(serialise(old));
    await call(ctx, "NotebookEdit", {
      notebook_path: path,
      cell_id: "cell-1",
      new_source: "new",
      cell_type: "code",
      edit_mode: "insert",
    });
    const nb = load(path);
    expect(nb.cells[2]).toEqual({
      cell_type: "code",
      execution_count: null,
      metadata: {},
      outputs: [],
      source: ["new"],
    });
    expect(notebookProblems(nb)).toEqual([]);
  });

  it("keeps a notebook valid when its last cell is deleted and one is inserted into the empty list", async () => {
    const { ctx, path } = await setup(serialise({ ...NOTEBOOK, cells: [NOTEBOOK.cells[0]] }));
    await call(ctx, "NotebookEdit", {
      notebook_path: path,
      cell_id: "intro",
      new_source: "",
      edit_mode: "delete",
    });
    expect(load(path).cells).toEqual([]);
    await call(ctx, "NotebookEdit", {
      notebook_path: path,
      new_source: "a",
      cell_type: "markdown",
      edit_mode: "insert",
    });
    expect(load(path).cells).toHaveLength(1);
    expect(notebookProblems(load(path))).toEqual([]);
  });
});

describe("NotebookEdit result texts", () => {
  it("mention cleared outputs only when there were some, and a change of cell type", async () => {
    const { ctx, path } = await setup();
    const edit = (cell_id: string, cell_type?: string) =>
      call(ctx, "NotebookEdit", { notebook_path: path, cell_id, new_source: "z = 3", cell_type });
    expect((await edit("calc")).text).toContain(
      "Replaced the source of code cell calc (its outputs were cleared)",
    );
    expect((await edit("tail")).text).toBe(`Replaced the source of code cell tail in ${path}.`);
    expect((await edit("intro", "code")).text).toBe(
      `Replaced the source of markdown cell intro, now a code cell, in ${path}.`,
    );
    expect(load(path).cells[0]!.cell_type).toBe("code");
  });
});

describe("a broken notebook", () => {
  it("is shown as text by Read, which counts as a read so Write can repair it", async () => {
    const ctx = fileContext();
    const path = join(ctx.workingDir, "broken.ipynb");
    writeFileSync(path, '{"cells": [\n<<<<<<< HEAD\n');
    const read = await call(ctx, "Read", { file_path: path });
    expect(read.isError).toBe(false);
    expect(read.text).toContain("is not valid JSON");
    expect(read.text).toContain("repair it with Write");
    expect(read.text).toContain('1\t{"cells": [\n2\t<<<<<<< HEAD');
    const repaired = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n';
    const write = await call(ctx, "Write", { file_path: path, content: repaired });
    expect(write.isError).toBe(false);
    expect(readFileSync(path, "utf8")).toBe(repaired);
  });
});
