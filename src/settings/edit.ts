import { readFile } from "node:fs/promises";
import type { JSONPath, ParseError } from "jsonc-parser";
import { atomicWrite } from "../fs/atomic-write.js";

/**
 * Changes settings files the way a person would: only the value that changes is touched, so the user's
 * formatting, key order and comments stay, and the file is replaced atomically (a crash leaves the old one).
 */

/** The indentation a file already uses (two spaces when it has none yet). */
function indentationOf(text: string): { insertSpaces: boolean; tabSize: number } {
  const indent = /^[ \t]+(?=")/m.exec(text)?.[0];
  if (!indent) return { insertSpaces: true, tabSize: 2 };
  return indent.startsWith("\t")
    ? { insertSpaces: false, tabSize: 1 }
    : { insertSpaces: true, tabSize: indent.length };
}

async function readOrEmpty(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw new Error(`Cannot read ${path}: ${(error as Error).message}`);
  }
}

/** The parsed document, or an error naming what is wrong; a file we cannot parse is never overwritten. */
async function parseSettings(path: string, text: string) {
  const { parseTree, printParseErrorCode } = await import("jsonc-parser");
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) {
    const first = errors[0]!;
    throw new Error(
      `${path} is not valid JSON (${printParseErrorCode(first.error)} at offset ${first.offset}); it was left untouched. Fix it, then try again.`,
    );
  }
  if (tree && tree.type !== "object")
    throw new Error(`${path} does not hold a JSON object; it was left untouched.`);
  return tree;
}

export interface SettingsEdit {
  path: JSONPath;
  /** The new value; undefined removes the key. */
  value: unknown;
  /** Append `value` to the list at `path` instead of replacing it. */
  append?: boolean;
}

/**
 * Applies edits to a settings file (created when missing). `check` sees the current document first and may
 * throw to refuse (a key of the wrong type) or return false to skip the write (nothing to change).
 */
export async function editSettingsFile(
  path: string,
  edits: (current: unknown) => SettingsEdit[] | false,
): Promise<boolean> {
  const original = await readOrEmpty(path);
  const text = original.trim() === "" ? "{}\n" : original;
  const { applyEdits, getNodeValue, modify } = await import("jsonc-parser");
  const tree = await parseSettings(path, text);
  const wanted = edits(tree ? getNodeValue(tree) : {});
  if (wanted === false || wanted.length === 0) return false;
  const formattingOptions = { ...indentationOf(text), eol: "\n" };
  let next = text;
  for (const edit of wanted) {
    const at = edit.append ? [...edit.path, -1] : edit.path;
    next = applyEdits(
      next,
      modify(next, at, edit.value, { formattingOptions, isArrayInsertion: edit.append }),
    );
  }
  if (!next.endsWith("\n")) next += "\n";
  await atomicWrite(path, new TextEncoder().encode(next), { createParents: true });
  return true;
}
