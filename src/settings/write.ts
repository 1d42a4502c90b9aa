import { readFile } from "node:fs/promises";
import {
  applyEdits,
  type FormattingOptions,
  modify,
  type ParseError,
  parse,
  printParseErrorCode,
} from "jsonc-parser";
import { atomicWrite } from "../fs/atomic-write.js";

/** The indentation and line ending a settings file already uses, so an edit looks like the rest of it. */
function formattingOf(text: string): FormattingOptions {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1];
  return {
    insertSpaces: !indent?.startsWith("\t"),
    tabSize: indent && !indent.startsWith("\t") ? indent.length : 2,
    eol: text.includes("\r\n") ? "\r\n" : "\n",
  };
}

/**
 * Sets (or, with `undefined`, removes) one value of a JSON settings file, keeping everything else byte for
 * byte: comments, key order, indentation. The file is replaced atomically; a file that does not parse is
 * left untouched and named in the error.
 */
export async function writeSetting(path: string, key: readonly string[], value: unknown): Promise<void> {
  let text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return "";
    throw new Error(`Cannot read ${path}: ${error.message}`);
  });
  if (text.trim() === "") text = "{}\n";
  const errors: ParseError[] = [];
  const current = parse(text, errors, { allowTrailingComma: true });
  if (errors.length > 0 || current === null || typeof current !== "object" || Array.isArray(current)) {
    const why = errors[0] ? printParseErrorCode(errors[0].error) : "it does not hold a JSON object";
    throw new Error(`${path} cannot be edited (${why}); it was left untouched. Fix the file first.`);
  }
  const edits = modify(text, [...key], value, { formattingOptions: formattingOf(text) });
  await atomicWrite(path, Buffer.from(applyEdits(text, edits), "utf8"), { createParents: true });
}
