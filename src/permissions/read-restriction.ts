import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, resolve, sep } from "node:path";
import type { ToolContext } from "../core/context.js";
import { Evaluation } from "./evaluation.js";
import { anchorPathPattern, compilePatternSet } from "./paths.js";
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
  // Deny and ask rules see both a path's spellings through both anchors (links resolved and as written),
  // as Evaluation.pathRuleMatches does; here all of them become one compiled test.
  const covered = compilePatternSet(
    restrictive.flatMap(({ rule, entry }) => {
      const spec = (rule as { spec: string }).spec;
      const bases = { workingDir: input.workingDir, root: entry.source.root, homeDir: input.homeDir };
      return [anchorPathPattern(spec, bases, true), anchorPathPattern(spec, bases, false)];
    }),
  );
  const directories = new Map<string, string>();
  return (path) => {
    const lexical = isAbsolute(path) ? path : resolve(path);
    // Both search walks list files without following symbolic links (and yield none), so only the
    // directories on the way can be links: each is resolved once per search, not once per file. A search
    // root that is itself a file was judged, links resolved, by the call's own decision.
    const cut = lexical.lastIndexOf(sep);
    const dir = lexical.slice(0, Math.max(cut, 1));
    let canonicalDir = directories.get(dir);
    if (canonicalDir === undefined) {
      try {
        // Listed directories exist: one realpath call instead of canonicalPath's walk per component.
        canonicalDir = realpathSync.native(dir);
      } catch {
        canonicalDir = ev.pathView(dir).canonical;
      }
      directories.set(dir, canonicalDir);
    }
    const canonical = (canonicalDir.endsWith(sep) ? canonicalDir : canonicalDir + sep) + lexical.slice(cut + 1);
    return covered(canonical) || (lexical !== canonical && covered(lexical));
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
