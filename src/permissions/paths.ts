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
  const { whole, byBase } = byBaseOf(patterns);
  if (CASE_INSENSITIVE_FS) {
    const tests = [
      ...[...whole].map((base) => matcherBelow(base, [])),
      ...[...byBase].map(([base, list]) => matcherBelow(base, [...list])),
    ];
    return (path) => tests.some((test) => test(path));
  }
  // Case-sensitive: plain loops over prefixes and compiled tests, no closure per path. A filter applied to
  // every file a search lists costs its call structure as much as its regular expressions otherwise.
  const wholeBases = [...whole];
  const wholePrefixes = wholeBases.map(withSeparator);
  const prefixes = [...byBase.keys()].map(withSeparator);
  const tests = [...byBase.values()].map((list) => gitignoreTest([...list]));
  return (path) => {
    for (let i = 0; i < wholeBases.length; i++) {
      if (path === wholeBases[i] || path.startsWith(wholePrefixes[i]!)) return true;
    }
    for (let i = 0; i < prefixes.length; i++) {
      const prefix = prefixes[i]!;
      if (path.startsWith(prefix) && tests[i]!(toPosix(path.slice(prefix.length)))) return true;
    }
    return false;
  };
}

/** The bases that patterns cover whole, and the patterns of every other base. */
function byBaseOf(patterns: readonly AnchoredPattern[]) {
  const byBase = new Map<string, Set<string>>();
  const whole = new Set<string>();
  for (const { base, pattern } of patterns) {
    if (pattern === undefined) whole.add(base);
    else byBase.set(base, (byBase.get(base) ?? new Set()).add(pattern));
  }
  return { whole, byBase };
}

/**
 * compilePatternSet for the paths below the directory `root`, each given relative to it as a search
 * prints it: `/`-separated, without `.` or `..` parts. Every base is placed relative to the root once, so
 * a filter over every file of a search tests the path it printed, with no absolute path built per file.
 */
export function compilePatternSetBelow(
  patterns: readonly AnchoredPattern[],
  root: string,
): (rel: string) => boolean {
  const rootPrefix = withSeparator(root);
  if (CASE_INSENSITIVE_FS || sep !== "/") {
    const covered = compilePatternSet(patterns);
    return (rel) => covered(rootPrefix + toNative(rel));
  }
  const { whole, byBase } = byBaseOf(patterns);
  // A whole base at or above the root covers everything below it; one below the root, a subtree.
  if ([...whole].some((base) => isWithin(root, base))) return () => true;
  const wholeBelow = [...whole]
    .filter((base) => base.startsWith(rootPrefix))
    .map((base) => base.slice(rootPrefix.length));
  const wholeBelowPrefixes = wholeBelow.map((sub) => `${sub}/`);
  // Patterns of the root itself, of a directory below it (tested on the rest of the path), and of one above
  // it (tested on the path from there).
  const at: Array<(rel: string) => boolean> = [];
  const belowPrefixes: string[] = [];
  const belowTests: Array<(rel: string) => boolean> = [];
  const aboveTests: Array<(rel: string) => boolean> = [];
  for (const [base, list] of byBase) {
    const test = gitignoreTest([...list]);
    if (base === root) at.push(test);
    else if (base.startsWith(rootPrefix)) {
      belowPrefixes.push(`${base.slice(rootPrefix.length)}/`);
      belowTests.push(test);
    } else if (isWithin(root, base)) {
      const up = `${relative(base, root)}/`;
      aboveTests.push((rel) => test(up + rel));
    }
  }
  return (rel) => {
    for (let i = 0; i < wholeBelow.length; i++) {
      if (rel === wholeBelow[i] || rel.startsWith(wholeBelowPrefixes[i]!)) return true;
    }
    for (let i = 0; i < at.length; i++) if (at[i]!(rel)) return true;
    for (let i = 0; i < belowPrefixes.length; i++) {
      const prefix = belowPrefixes[i]!;
      if (rel.startsWith(prefix) && belowTests[i]!(rel.slice(prefix.length))) return true;
    }
    for (let i = 0; i < aboveTests.length; i++) if (aboveTests[i]!(rel)) return true;
    return false;
  };
}

const withSeparator = (dir: string) => (dir.endsWith(sep) ? dir : dir + sep);

/** A `/`-separated relative path with this platform's separator. */
const toNative = sep === "/" ? (rel: string) => rel : (rel: string) => rel.split("/").join(sep);

/** A relative path with `/` between its parts. */
export const toPosix = sep === "/" ? (rel: string) => rel : (rel: string) => rel.split(sep).join("/");

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
  const prefix = withSeparator(base);
  if (patterns.length === 0) return (path) => path === base || path.startsWith(prefix);
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
  // One expression for all of them: a name pattern matches one whole component anywhere (the component
  // may be a directory above the path), a directory name one with something below it.
  const sources = [
    ...(anchored.length > 0 ? [`^(?:${anchored.join("|")})$`] : []),
    ...(names.length > 0 ? [`(?:^|/)(?:${names.join("|")})(?:/|$)`] : []),
    ...(directoryNames.length > 0 ? [`(?:^|/)(?:${directoryNames.join("|")})/`] : []),
  ];
  const regex =
    sources.length > 0 ? new RegExp(sources.join("|"), CASE_INSENSITIVE_FS ? "is" : "s") : undefined;
  if (slow.length === 0) return regex ? (rel) => regex.test(rel) : () => false;
  // One matcher per compiled set (not shared across decisions): `ignore` caches every path it tests.
  const matcher = ignore({ ignorecase: CASE_INSENSITIVE_FS }).add(slow);
  return (rel) => regex?.test(rel) === true || matcher.ignores(rel);
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
