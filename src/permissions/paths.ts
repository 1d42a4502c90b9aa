import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, parse, relative, resolve, sep } from "node:path";
import ignore from "ignore";

/** Symlinks followed while canonicalising one path before giving up (Linux's SYMLOOP_MAX is 40). */
export const MAX_SYMLINK_HOPS = 40;

/** Case-insensitive file systems by default: a rule for `.ENV` must cover `.env` there. */
const CASE_INSENSITIVE_FS = process.platform === "darwin" || process.platform === "win32";

/** Expands a leading `~` against the given home directory. */
export function expandTilde(path: string, homeDir: string): string {
  if (path === "~") return homeDir;
  if (path.startsWith("~/")) return join(homeDir, path.slice(2));
  return path;
}

/**
 * Where a path really leads: every existing component is resolved through symlinks (also dangling
 * ones, whose target may be created by a write), `..` is applied to the resolved parent (as the
 * kernel does), and components that do not exist yet are appended as written. So a symlink inside the
 * workspace that points outside is outside, and `..` cannot climb out unnoticed.
 */
export function canonicalPath(path: string, baseDir: string): string {
  return walk(isAbsolute(path) ? path : `${baseDir}${sep}${path}`, { hops: 0 });
}

function walk(absolute: string, budget: { hops: number }): string {
  const root = parse(absolute).root;
  let current = root;
  let exists = true;
  for (const part of absolute.slice(root.length).split(/[\\/]+/)) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      current = dirname(current);
      exists = true;
      continue;
    }
    const next = join(current, part);
    if (!exists) {
      current = next;
      continue;
    }
    try {
      current = realpathSync.native(next);
    } catch {
      current = followDangling(next, current, budget);
      exists = false;
    }
  }
  return current;
}

/** A path that does not resolve: when it is a symlink, a write would create its target, so follow it. */
function followDangling(path: string, parent: string, budget: { hops: number }): string {
  let target: string;
  try {
    if (!lstatSync(path).isSymbolicLink()) return path;
    target = readlinkSync(path);
  } catch {
    return path;
  }
  if (++budget.hops > MAX_SYMLINK_HOPS) return path;
  return walk(isAbsolute(target) ? target : `${parent}${sep}${target}`, budget);
}

/** True when `path` is `dir` or below it (both canonical). */
export function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || !escapes(rel);
}

/** True when a relative path leaves its base (`..`, `../x`) or is on another drive. */
function escapes(rel: string): boolean {
  return rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel);
}

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
