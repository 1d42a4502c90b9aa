import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import type { ToolContext } from "../core/context.js";
import { Evaluation } from "./evaluation.js";
import { coversPathAccess } from "./rules.js";
import type { EvaluationInput } from "./types.js";

/**
 * The files a tool that reads whole directories (Grep, Glob) must leave out: those a path-specific Read
 * deny or ask rule covers. The call's own decision only judged the directory, so without this a Grep of
 * the workspace would show what `Read(.env)` denies. Undefined when no such rule exists (nothing to hide).
 * The rules are parsed and their patterns compiled once, when the filter is made: make one per search.
 */
export function readRestriction(
  input: Omit<EvaluationInput, "subject" | "level" | "mode">,
): ((absolutePath: string) => boolean) | undefined {
  const ev = new Evaluation({ ...input, subject: { kind: "none" }, level: "readOnly", mode: "default" });
  const restrictive = [...ev.rules.deny, ...ev.rules.ask].filter(
    ({ rule, entry }) =>
      (rule.kind === "path" || rule.kind === "specifier") &&
      coversPathAccess(rule.tool, entry.behavior, input.toolName, "read"),
  );
  if (restrictive.length === 0) return undefined;
  return (path) => {
    let canonical: string;
    try {
      // Listed files exist: one realpath call instead of a walk per component.
      canonical = realpathSync.native(path);
    } catch {
      canonical = ev.pathView(path).canonical;
    }
    const view = { canonical, lexical: resolve(path) };
    return restrictive.some((loaded) => ev.pathRuleMatches(loaded, input.toolName, "read", view));
  };
}

/**
 * For Grep and Glob: a test that says which files the session's Read deny and ask rules keep out of a
 * directory-wide search, or undefined when no rule does.
 */
export function hiddenFromSearch(
  ctx: ToolContext,
  toolName: string,
): ((path: string) => boolean) | undefined {
  return readRestriction({
    toolName,
    rules: ctx.rules(),
    workingDir: ctx.workingDir,
    additionalDirectories: ctx.additionalDirectories,
    homeDir: homedir(),
  });
}
