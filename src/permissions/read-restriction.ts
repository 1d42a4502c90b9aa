import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { ToolContext } from "../core/context.js";
import { canonicalPath, escapes, isWithin } from "../fs/canonical.js";
import { Evaluation } from "./evaluation.js";
import {
  type AnchoredPattern,
  anchorPathPattern,
  compilePatternSet,
  compilePatternSetBelow,
  simplePattern,
  toPosix,
} from "./paths.js";
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
): SearchRestriction | undefined {
  const ev = new Evaluation({ ...input, subject: { kind: "none" }, level: "readOnly", mode: "default" });
  const restrictive = [...ev.rules.deny, ...ev.rules.ask].filter(
    ({ rule, entry }) =>
      (rule.kind === "path" || rule.kind === "specifier") &&
      coversPathAccess(rule.tool, entry.behavior, input.toolName, "read"),
  );
  if (restrictive.length === 0) return undefined;
  // Deny and ask rules see both a path's spellings through both anchors (links resolved and as written),
  // as Evaluation.pathRuleMatches does; here all of them become one compiled test.
  const anchored = restrictive.flatMap(({ rule, entry }) => {
    const spec = (rule as { spec: string }).spec;
    const bases = { workingDir: input.workingDir, root: entry.source.root, homeDir: input.homeDir };
    return [anchorPathPattern(spec, bases, true), anchorPathPattern(spec, bases, false)];
  });
  const covered = compilePatternSet(anchored);
  const directories = new Map<string, string>();
  const hides = (path: string) => {
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
    const canonical =
      (canonicalDir.endsWith(sep) ? canonicalDir : canonicalDir + sep) + lexical.slice(cut + 1);
    return covered(canonical) || (lexical !== canonical && covered(lexical));
  };
  const below = (root: string) => {
    const lexicalRoot = resolve(root);
    const canonicalRoot = ev.pathView(lexicalRoot).canonical;
    const prefix = lexicalRoot.endsWith(sep) ? lexicalRoot : lexicalRoot + sep;
    const canonicalPrefix = canonicalRoot.endsWith(sep) ? canonicalRoot : canonicalRoot + sep;
    // Only rules whose base lies on the root's line (above it or below it) can cover a file under it.
    const related = (base: string) =>
      [lexicalRoot, canonicalRoot].some((dir) => isWithin(dir, base) || isWithin(base, dir));
    const patterns = anchored.filter(({ base }) => related(base));
    const covered = compilePatternSet(patterns);
    // A path below the root through both spellings of the root (links resolved and as written).
    const canonicalBelow = compilePatternSetBelow(patterns, canonicalRoot);
    const lexicalBelow =
      prefix === canonicalPrefix ? undefined : compilePatternSetBelow(patterns, lexicalRoot);
    const relativeTest = lexicalBelow
      ? (rel: string) => canonicalBelow(rel) || lexicalBelow(rel)
      : canonicalBelow;
    const test = (path: string) => {
      if (path.startsWith(prefix)) return relativeTest(toPosix(path.slice(prefix.length)));
      if (path === lexicalRoot) return covered(canonicalRoot) || covered(lexicalRoot);
      return hides(path);
    };
    return Object.assign(test, { relative: relativeTest });
  };
  return { hides, below, excludeGlobs: (root) => excludeGlobs(anchored, root) };
}

/** SearchRestriction.below's test. */
export interface BelowTest {
  (absolutePath: string): boolean;
  relative(path: string): boolean;
}

/** What Grep and Glob leave out; made once per search. */
export interface SearchRestriction {
  /** Whether the rules cover this listed file (absolute path). The judge of what is left out. */
  hides(absolutePath: string): boolean;
  /**
   * hides() for the files a walk lists under `root` without following links (both search backends):
   * only the root itself can lead elsewhere, so it alone is resolved, once. The test a search applies;
   * `relative` takes the path below the root as the walk printed it (`/`-separated, without `.` or `..`
   * parts), with no absolute path built per file.
   */
  below(root: string): BelowTest;
  /**
   * ripgrep globs (gitignore semantics, relative to the searched directory `root`, each starting with
   * `!`) for what the rules cover below `root`, so those files are never opened. A translation of the
   * simple cases only: hides() still filters whatever it does not express.
   */
  excludeGlobs(root: string): string[];
}

/** Characters special in a ripgrep glob that are literal in a gitignore pattern or a file name. */
const GLOB_SPECIAL = /[\\*?[\]{}]/g;

function excludeGlobs(patterns: readonly AnchoredPattern[], root: string): string[] {
  const roots = [...new Set([resolve(root), canonicalPath(root, "/")])];
  const globs = new Set<string>();
  for (const { base, pattern } of patterns) {
    const simple = pattern === undefined ? undefined : simplePattern(pattern);
    if (pattern !== undefined && simple === undefined) continue;
    // Simple patterns hold no class or escape characters; braces are literal in gitignore, not in rg.
    const glob = pattern?.replace(/[{}]/g, "\\$&");
    for (const dir of roots) {
      const rel = relative(dir, base);
      if (escapes(rel)) {
        // The search lies inside the rule's base: a name pattern, or one that starts with `**/`, still
        // applies as written (anchored at the search root, `**/` also spans the directories above it).
        const spansAbove = glob !== undefined && /^\/?\*\*\//.test(glob);
        if (isWithin(dir, base) && simple && (!simple.anchored || spansAbove)) globs.add(`!${glob}`);
        continue;
      }
      if (rel === "") {
        // Rules anchored at the searched directory mean the same to rg; one covering all of it leaves nothing.
        globs.add(glob === undefined ? "!*" : `!${glob}`);
        continue;
      }
      const at = `/${rel.split(sep).join("/").replace(GLOB_SPECIAL, "\\$&")}`;
      if (glob === undefined) globs.add(`!${at}`);
      else if (simple?.anchored) globs.add(`!${at}/${glob.replace(/^\//, "")}`);
      else globs.add(`!${at}/**/${glob}`);
    }
  }
  return [...globs];
}

/**
 * For Grep and Glob: a test that says which files the session's Read deny and ask rules keep out of a
 * directory-wide search, or undefined when no rule does.
 */
export function hiddenFromSearch(ctx: ToolContext, toolName: string): SearchRestriction | undefined {
  return readRestriction({
    toolName,
    rules: ctx.rules(),
    workingDir: ctx.workingDir,
    additionalDirectories: ctx.additionalDirectories,
    homeDir: homedir(),
    // Rules written for this sub-agent's type apply to its searches as to its Reads.
    agentType: ctx.agentType,
  });
}
