import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Session } from "./session.js";

/**
 * Output too long for a result goes to a file in the session's directory, and the result shows its head,
 * a marker naming the file, and its tail: one shape for the executor's budget and for command output.
 */

/** Writes text that is too long for a result to a file in the session directory; returns its path. */
export function spillToFile(session: Session, text: string, label: string): string {
  const path = join(session.dir, `${label}-${randomUUID().slice(0, 8)}.txt`);
  writeFileSync(path, text, "utf8");
  return path;
}

/** The one shape of a spilled result: head, a marker with the file's path, tail. */
export function spilledPreview(head: string, tail: string, totalChars: number, path: string): string {
  const omitted = totalChars - head.length - tail.length;
  return (
    `${head}\n\n... [${omitted} characters omitted; the full output (${totalChars} characters) is in ${path}; ` +
    `read it with Read using offset/limit, or search it with Grep] ...\n\n${tail}`
  );
}
