/**
 * Ignore files as ripgrep reads them, for the built-in search and for Glob's count of ignored files:
 * `.gitignore` (only inside a git repository, as rg requires), `.git/info/exclude`, the global excludes
 * file (`core.excludesFile` in ~/.gitconfig or $XDG_CONFIG_HOME/git/config, else $XDG_CONFIG_HOME/git/ignore), and
 * `.ignore` / `.rgignore` anywhere. Deeper files win over shallower ones, `.rgignore` over `.ignore` over
 * `.gitignore`, and a `!pattern` re-includes.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, sep } from "node:path";
import ignore, { type Ignore } from "ignore";

interface Layer {
  base: string;
  rules: Ignore;
}

function load(file: string): Ignore | undefined {
  // Most directories have no ignore file: checking first is far cheaper than the error a failed read throws.
  if (!existsSync(file)) return undefined;
  try {
    // Git on Linux and macOS's default both match case-sensitively; so does rg.
    return ignore({ ignorecase: false }).add(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

function findGitRoot(start: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** `excludesFile = path` in any git config section, as ripgrep reads it (quotes and spaces trimmed). */
const EXCLUDES_FILE_SETTING = /^\s*excludesfile\s*=\s*"?\s*(\S+?)\s*"?\s*$/im;

/** The global excludes file: core.excludesFile from ~/.gitconfig or the XDG git config, else git's default. */
function globalExcludes(): string {
  const home = homedir();
  const xdg = process.env.XDG_CONFIG_HOME || join(home, ".config");
  for (const config of [join(home, ".gitconfig"), join(xdg, "git", "config")]) {
    if (!existsSync(config)) continue;
    let setting: RegExpExecArray | null = null;
    try {
      setting = EXCLUDES_FILE_SETTING.exec(readFileSync(config, "utf8"));
    } catch {
      // Unreadable config: git would complain; the search goes on without it.
    }
    if (setting) return setting[1]!.startsWith("~/") ? join(home, setting[1]!.slice(2)) : setting[1]!;
  }
  return join(xdg, "git", "ignore");
}

function isUnder(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/**
 * The path of `dir`'s entry `name` from `base`, an ancestor of `dir` (or `dir` itself). By slicing: called
 * for every entry the built-in search walks, where path.relative's normalising showed in profiles.
 */
function entryBelow(base: string, dir: string, name: string): string {
  if (dir === base) return name;
  return `${dir.slice(base.endsWith(sep) ? base.length : base.length + 1)}${sep}${name}`;
}

function posix(path: string): string {
  return sep === "/" ? path : path.split(sep).join("/");
}

export class IgnoreRules {
  private readonly layerCache = new Map<string, Layer[]>();
  private readonly dirCache = new Map<string, boolean>();
  private readonly gitRoot: string | undefined;
  /** The highest directory whose ignore files apply. */
  private top: string;

  /**
   * `searchRoot` is a directory; ignore files above it up to the repository root apply too. When the
   * root was named explicitly and is itself ignored, rg still searches it; the `ignore` package cannot
   * test a path without its parents, so the rules from above such a root are dropped (an approximation).
   */
  constructor(searchRoot: string, options: { explicitRoot: boolean }) {
    this.gitRoot = findGitRoot(searchRoot);
    this.top = this.gitRoot ?? searchRoot;
    if (options.explicitRoot && this.dirIgnored(searchRoot)) {
      this.top = searchRoot;
      this.layerCache.clear();
      this.dirCache.clear();
    }
  }

  private ownLayers(dir: string): Layer[] {
    const layers: Layer[] = [];
    const add = (file: string) => {
      const rules = load(file);
      if (rules) layers.push({ base: dir, rules });
    };
    if (this.gitRoot) {
      if (dir === this.gitRoot) {
        add(globalExcludes());
        add(join(dir, ".git", "info", "exclude"));
      }
      add(join(dir, ".gitignore"));
    }
    add(join(dir, ".ignore"));
    add(join(dir, ".rgignore"));
    return layers;
  }

  /** Every layer that applies to entries of `dir`, lowest precedence first. */
  layers(dir: string): Layer[] {
    const cached = this.layerCache.get(dir);
    if (cached) return cached;
    let layers: Layer[] = [];
    if (isUnder(dir, this.top)) {
      const parent = dirname(dir);
      const inherited = dir === this.top ? [] : this.layers(parent);
      const own = this.ownLayers(dir);
      layers = own.length > 0 ? [...inherited, ...own] : inherited;
    }
    this.layerCache.set(dir, layers);
    return layers;
  }

  /** Whether the entry `name` of `dir` is ignored by the rules that apply there (ancestors not checked). */
  ignoresEntry(dir: string, name: string, isDir: boolean): boolean {
    const layers = this.layers(dir);
    if (layers.length === 0) return false;
    for (let i = layers.length - 1; i >= 0; i--) {
      const layer = layers[i]!;
      const rel = posix(entryBelow(layer.base, dir, name)) + (isDir ? "/" : "");
      const result = layer.rules.test(rel);
      if (result.ignored) return true;
      if (result.unignored) return false;
    }
    return false;
  }

  private dirIgnored(dir: string): boolean {
    if (!isUnder(dir, this.top) || dir === this.top) return false;
    const cached = this.dirCache.get(dir);
    if (cached !== undefined) return cached;
    const parent = dirname(dir);
    const ignored = this.dirIgnored(parent) || this.ignoresEntry(parent, basename(dir), true);
    this.dirCache.set(dir, ignored);
    return ignored;
  }

  /** Whether a file is ignored, by its own name or because a directory above it is. */
  ignoresFile(path: string): boolean {
    const dir = dirname(path);
    return this.dirIgnored(dir) || this.ignoresEntry(dir, basename(path), false);
  }
}
