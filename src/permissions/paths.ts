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
  const { base, pattern } = anchorPathPattern(spec, bases, resolveLinks);
  return { base, matches: matcherBelow(base, pattern === undefined ? [] : [pattern]) };
}

/** A rule's pattern with its directory resolved: gitignore `pattern` below `base` (undefined: all of it). */
export interface AnchoredPattern {
  base: string;
  pattern: string | undefined;
}

/** Where a path rule's specifier is anchored and what gitignore pattern it applies below that directory. */
export function anchorPathPattern(
  spec: string,
  bases: PathPatternBases,
  resolveLinks: boolean,
): AnchoredPattern {
  const parsed = parsePathSpec(spec);
  const anchor = { root: "/", home: bases.homeDir, settings: bases.root, cwd: bases.workingDir }[
    parsed.anchor
  ];
  const base = resolve(canonicalPath(anchor, "/"), ...parsed.literal);
  return { base: resolveLinks ? canonicalPath(base, "/") : base, pattern: parsed.pattern };
}

/**
 * One test for many anchored patterns, true when any matches: patterns sharing a base share one gitignore
 * matcher (rules hold no negations, so adding them together is their union). For filters applied to
 * every file of a search, where one matcher per rule would multiply the cost by the number of rules.
 */
export function compilePatternSet(patterns: readonly AnchoredPattern[]): (canonical: string) => boolean {
  const byBase = new Map<string, Set<string>>();
  const whole = new Set<string>();
  for (const { base, pattern } of patterns) {
    if (pattern === undefined) whole.add(base);
    else byBase.set(base, (byBase.get(base) ?? new Set()).add(pattern));
  }
  const tests = [
    ...[...whole].map((base) => matcherBelow(base, [])),
    ...[...byBase].map(([base, list]) => matcherBelow(base, [...list])),
  ];
  return (path) => tests.some((test) => test(path));
}

/** A test for paths below `base` against gitignore patterns (none: `base` itself and everything below it). */
function matcherBelow(base: string, patterns: readonly string[]): (path: string) => boolean {
  const below = gitignoreTest(patterns);
  if (CASE_INSENSITIVE_FS) {
    if (patterns.length === 0) return (path) => isWithin(path, base);
    return (path) => {
      const rel = relative(base, path);
      return rel !== "" && !escapes(rel) && below(rel.split(sep).join("/"));
    };
  }
  // Case-sensitive: a string prefix is the whole containment test, and far cheaper than path.relative
  // on a filter applied to every file of a search.
  const prefix = base.endsWith(sep) ? base : base + sep;
  if (patterns.length === 0) return (path) => path === base || path.startsWith(prefix);
  const toPosix = sep === "/" ? (rel: string) => rel : (rel: string) => rel.split(sep).join("/");
  return (path) => path.startsWith(prefix) && below(toPosix(path.slice(prefix.length)));
}

/**
 * Whether a relative `/`-separated path is covered by any of the gitignore patterns (itself or a
 * directory above it matches). The simple patterns rules are made of (names, `*`, `?`, whole `**`
 * segments, a trailing `/`) become one regular expression: one test per path, where the `ignore`
 * package costs microseconds per path and pattern — too much for a filter over every file of a search.
 * Anything else (classes, escapes) is left to `ignore`. test/permissions/paths.test.ts checks the two
 * agree.
 */
function gitignoreTest(patterns: readonly string[]): (rel: string) => boolean {
  const anchored: string[] = [];
  const names: string[] = [];
  const directoryNames: string[] = [];
  const slow: string[] = [];
  for (const pattern of patterns) {
    const simple = simplePattern(pattern);
    if (simple === undefined) slow.push(pattern);
    else if (!simple.anchored) (simple.dirOnly ? directoryNames : names).push(simple.source);
    else anchored.push(`${simple.source}${simple.dirOnly ? "/.+" : "(?:/.+)?"}`);
  }
  const flags = CASE_INSENSITIVE_FS ? "is" : "s";
  const tests: Array<(rel: string) => boolean> = [];
  // A name pattern matches one whole component anywhere; the component may be a directory above the path.
  if (names.length > 0) tests.push(regexTest(new RegExp(`(?:^|/)(?:${names.join("|")})(?:/|$)`, flags)));
  if (directoryNames.length > 0)
    tests.push(regexTest(new RegExp(`(?:^|/)(?:${directoryNames.join("|")})/`, flags)));
  if (anchored.length > 0) tests.push(regexTest(new RegExp(`^(?:${anchored.join("|")})$`, flags)));
  // One matcher per compiled set (not shared across decisions): `ignore` caches every path it tests.
  if (slow.length > 0) {
    const matcher = ignore({ ignorecase: CASE_INSENSITIVE_FS }).add(slow);
    tests.push((rel) => matcher.ignores(rel));
  }
  return (rel) => tests.some((test) => test(rel));
}

function regexTest(regex: RegExp): (rel: string) => boolean {
  return (rel) => regex.test(rel);
}

/** Characters a simple pattern may hold besides `*`, `?` and `/`. */
const SIMPLE_PATTERN = /^[^\\[\]!#\s]+$/;

/** A simple gitignore pattern as a regular expression source (see gitignoreTest). */
interface SimplePattern {
  /** Matched from the base; otherwise `source` is one path component matched at any depth. */
  anchored: boolean;
  dirOnly: boolean;
  source: string;
}

/** The regular expression of a simple gitignore pattern, or undefined for one left to `ignore`. */
export function simplePattern(pattern: string): SimplePattern | undefined {
  if (!SIMPLE_PATTERN.test(pattern)) return undefined;
  let body = pattern;
  const dirOnly = body.endsWith("/");
  if (dirOnly) body = body.slice(0, -1);
  // A slash at the start or in the middle anchors the pattern at the base; otherwise it matches a name at any depth.
  const anchored = body.includes("/");
  if (body.startsWith("/")) body = body.slice(1);
  const segments = body.split("/");
  const odd = (segment: string) =>
    segment === "" || segment === "." || segment === ".." || (segment.includes("**") && segment !== "**");
  if (segments.some(odd) || segments.every((segment) => segment === "**")) return undefined;
  let source = "";
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === "**") {
      // `**/` at the start or in the middle: any directories, or none; `/**` at the end: everything inside.
      source += last ? ".+" : "(?:[^/]+/)*";
      return;
    }
    source += segment
      .replace(/[.+^${}()|]/g, "\\$&")
      .replace(/\*/g, "[^/]*")
      .replace(/\?/g, "[^/]");
    if (!last) source += "/";
  });
  return { anchored, dirOnly, source };
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
