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
  const parsed = parsePathSpec(spec);
  const anchor = { root: "/", home: bases.homeDir, settings: bases.root, cwd: bases.workingDir }[
    parsed.anchor
  ];
  const base = resolve(canonicalPath(anchor, "/"), ...parsed.literal);
  const canonicalBase = resolveLinks ? canonicalPath(base, "/") : base;
  if (parsed.pattern === undefined) {
    return { base: canonicalBase, matches: (path) => isWithin(path, canonicalBase) };
  }
  // One matcher per compiled pattern (not shared across decisions): `ignore` caches every path it tests.
  const matcher = ignore({ ignorecase: CASE_INSENSITIVE_FS }).add(parsed.pattern);
  return {
    base: canonicalBase,
    matches(path) {
      const rel = relative(canonicalBase, path);
      if (rel === "" || escapes(rel)) return false;
      return matcher.ignores(rel.split(sep).join("/"));
    },
  };
}

/** A path rule's specifier taken apart; pure, so parsed once per distinct specifier. */
interface PathSpec {
  anchor: "root" | "home" | "settings" | "cwd";
  /** Literal leading directories of an anchored pattern, moved into the base. */
  literal: string[];
  /** The gitignore pattern below the base; undefined when it covers everything there. */
  pattern: string | undefined;
}

const pathSpecs = new Map<string, PathSpec>();
/** Distinct specifiers remembered; past this the memo starts over (rules come from a few settings files). */
const MAX_REMEMBERED_SPECS = 4096;

function parsePathSpec(spec: string): PathSpec {
  const known = pathSpecs.get(spec);
  if (known) return known;
  let anchor: PathSpec["anchor"];
  let pattern: string;
  if (spec.startsWith("//")) [anchor, pattern] = ["root", spec.slice(1)];
  else if (spec === "~" || spec.startsWith("~/")) [anchor, pattern] = ["home", spec.slice(1) || "/"];
  else if (spec.startsWith("/")) [anchor, pattern] = ["settings", spec];
  else if (spec.startsWith("./")) [anchor, pattern] = ["cwd", spec.slice(1)];
  else [anchor, pattern] = ["cwd", spec];
  let literal: string[] = [];
  if (pattern.startsWith("/")) {
    const parts = pattern.slice(1).split("/");
    let count = 0;
    while (count < parts.length - 1 && !GLOB_CHARS.test(parts[count]!) && !parts[count]!.includes("\\")) {
      count++;
    }
    literal = parts.slice(0, count);
    pattern = `/${parts.slice(count).join("/")}`;
  }
  const everything = pattern === "/" || pattern === "/**" || pattern === "**";
  const parsed: PathSpec = { anchor, literal, pattern: everything ? undefined : pattern };
  if (pathSpecs.size >= MAX_REMEMBERED_SPECS) pathSpecs.clear();
  pathSpecs.set(spec, parsed);
  return parsed;
}

/** Escapes a literal path for use as a gitignore pattern (the exact-file rules that suggestions make). */
export function escapePathPattern(path: string): string {
  return path.replace(/[\\*?[\]!#]/g, (c) => `\\${c}`).replace(/ $/, "\\ ");
}
