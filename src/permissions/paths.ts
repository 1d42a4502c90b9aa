import { relative, resolve, sep } from "node:path";
import ignore from "ignore";
import { canonicalPath, escapes, isWithin } from "../fs/canonical.js";

/** Case-insensitive file systems by default: a rule for `.ENV` must cover `.env` there. */
const CASE_INSENSITIVE_FS = process.platform === "darwin" || process.platform === "win32";

/** A compiled path pattern: gitignore semantics below a base directory. */
export interface PathPattern {
  base: string;
  matches(canonical: string): boolean;
}

export interface PathPatternBases {
  workingDir: string;
  /** Where `/pattern` is anchored: the root of the settings file that holds the rule. */
  root: string;
  homeDir: string;
}

const GLOB_CHARS = /[*?[\]]/;

/**
 * Compiles the specifier of a Read/Edit rule. `//abs` is absolute, `~/x` under home, `/x` under the
 * settings root, `./x` and bare `x` under the working directory; below the base the pattern has
 * gitignore semantics (a bare name without a slash matches at any depth, a directory covers its
 * contents, `**` spans directories). The anchor directory (working dir, settings root, home) is always
 * canonicalised. With `resolveLinks`, so are the literal directories the pattern starts with, so a rule
 * written through a symlink also covers the real files: right for deny and ask rules, wrong for allow
 * rules (a symlink a cloned repository ships would otherwise stretch `Edit(./vendor/**)` to wherever it points).
 */
export function compilePathPattern(
  spec: string,
  bases: PathPatternBases,
  resolveLinks: boolean,
): PathPattern {
  let base: string;
  let pattern: string;
  if (spec.startsWith("//")) [base, pattern] = ["/", spec.slice(1)];
  else if (spec === "~" || spec.startsWith("~/")) [base, pattern] = [bases.homeDir, spec.slice(1) || "/"];
  else if (spec.startsWith("/")) [base, pattern] = [bases.root, spec];
  else if (spec.startsWith("./")) [base, pattern] = [bases.workingDir, spec.slice(1)];
  else [base, pattern] = [bases.workingDir, spec];
  base = canonicalPath(base, "/");
  // Move the literal leading directories of an anchored pattern into the base.
  if (pattern.startsWith("/")) {
    const parts = pattern.slice(1).split("/");
    let literal = 0;
    while (
      literal < parts.length - 1 &&
      !GLOB_CHARS.test(parts[literal]!) &&
      !parts[literal]!.includes("\\")
    ) {
      literal++;
    }
    base = resolve(base, ...parts.slice(0, literal));
    pattern = `/${parts.slice(literal).join("/")}`;
  }
  const canonicalBase = resolveLinks ? canonicalPath(base, "/") : base;
  if (pattern === "/" || pattern === "/**" || pattern === "**") {
    return { base: canonicalBase, matches: (path) => isWithin(path, canonicalBase) };
  }
  const matcher = ignore({ ignorecase: CASE_INSENSITIVE_FS }).add(pattern);
  return {
    base: canonicalBase,
    matches(path) {
      const rel = relative(canonicalBase, path);
      if (rel === "" || escapes(rel)) return false;
      return matcher.ignores(rel.split(sep).join("/"));
    },
  };
}

/** Escapes a literal path for use as a gitignore pattern (the exact-file rules that suggestions make). */
export function escapePathPattern(path: string): string {
  return path.replace(/[\\*?[\]!#]/g, (c) => `\\${c}`).replace(/ $/, "\\ ");
}
