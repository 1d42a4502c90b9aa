/**
 * ripgrep's `--glob` and `--type` rules for the built-in search. Globs follow .gitignore syntax: one without
 * a `/` matches a name at any depth, one with a `/` matches the path from the search root; a trailing `/`
 * matches directories only; a leading `!` excludes; the last glob that matches decides. A file a glob
 * includes is searched even when a .gitignore excludes it, as rg does.
 */
import { basename, extname } from "node:path";
import picomatch from "picomatch";
import { InputError } from "../core/errors.js";

/** A small table of ripgrep's file types: the ones models ask for. rg itself knows many more. */
export const FILE_TYPES: Readonly<Record<string, readonly string[]>> = {
  c: [".c", ".h"],
  cpp: [".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h", ".inl"],
  cs: [".cs"],
  css: [".css", ".scss"],
  go: [".go"],
  html: [".html", ".htm", ".xhtml"],
  java: [".java"],
  js: [".js", ".jsx", ".mjs", ".cjs", ".vue"],
  json: [".json", ".jsonl"],
  kotlin: [".kt", ".kts"],
  lua: [".lua"],
  markdown: [".md", ".markdown", ".mdx", ".mkd"],
  md: [".md", ".markdown", ".mdx", ".mkd"],
  php: [".php"],
  py: [".py", ".pyi"],
  rb: [".rb", ".gemspec"],
  ruby: [".rb", ".gemspec"],
  rust: [".rs"],
  sh: [".sh", ".bash", ".zsh"],
  sql: [".sql"],
  swift: [".swift"],
  toml: [".toml"],
  ts: [".ts", ".tsx", ".mts", ".cts"],
  txt: [".txt"],
  xml: [".xml", ".xsd", ".xsl"],
  yaml: [".yaml", ".yml"],
};

export type Verdict = "include" | "exclude" | "none";

interface CompiledGlob {
  exclude: boolean;
  dirOnly: boolean;
  onPath: boolean;
  test: (s: string) => boolean;
}

function compile(glob: string): CompiledGlob {
  const exclude = glob.startsWith("!");
  let body = exclude ? glob.slice(1) : glob;
  const dirOnly = body.endsWith("/");
  if (dirOnly) body = body.slice(0, -1);
  const onPath = body.includes("/");
  if (body.startsWith("/")) body = body.slice(1);
  try {
    return { exclude, dirOnly, onPath, test: picomatch(body, { dot: true, strictBrackets: true }) };
  } catch (error) {
    throw new InputError(`The glob ${JSON.stringify(glob)} is not valid: ${(error as Error).message}`);
  }
}

export class GlobFilter {
  private readonly globs: CompiledGlob[];
  private readonly hasIncludes: boolean;

  constructor(globs: readonly string[]) {
    this.globs = globs.map(compile);
    this.hasIncludes = this.globs.some((g) => !g.exclude);
  }

  /** `rel` is the path from the search root with `/` separators. */
  verdict(rel: string, isDir: boolean): Verdict {
    const name = basename(rel);
    for (let i = this.globs.length - 1; i >= 0; i--) {
      const g = this.globs[i]!;
      if (g.dirOnly && !isDir) continue;
      if (g.test(g.onPath ? rel : name)) return g.exclude ? "exclude" : "include";
    }
    // Include globs say which files to search; directories are still walked to find them.
    return this.hasIncludes && !isDir ? "exclude" : "none";
  }
}

/** The test for `type`, or an error listing the types this search knows. */
export function typeFilter(type: string | undefined): ((name: string) => boolean) | undefined {
  if (type === undefined) return undefined;
  const extensions = FILE_TYPES[type];
  if (!extensions) {
    throw new InputError(
      `Unknown file type "${type}". Known types: ${Object.keys(FILE_TYPES).join(", ")}; or filter with \`glob\` instead.`,
    );
  }
  return (name) => extensions.includes(extname(name).toLowerCase());
}
