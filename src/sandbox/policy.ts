import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { ToolContext } from "../core/context.js";
import { ToolError } from "../core/errors.js";
import { removeTree, type SessionSlot } from "../core/session.js";
import { canonicalPath, isWithin } from "../fs/canonical.js";
import { compilePathPattern } from "../permissions/paths.js";
import { parseRule, READ_RULE_TOOLS, WRITE_RULE_TOOLS } from "../permissions/rules.js";
import { splitBash } from "../permissions/shell-split.js";
import type { PermissionRuleEntry } from "../permissions/types.js";
import { userConfigDir } from "../settings/load.js";
import { noteSandboxWritable, SANDBOX_CACHE_DIRS } from "./host-programs.js";
import { isPlaceholder } from "./placeholder.js";

/**
 * Most entries looked at while finding the files an unanchored Read deny pattern (`.env`, `**\/*.pem`)
 * covers. Past it the pattern cannot be applied, which is an error: hiding only some of them would be a
 * silent failure. Anchored patterns (`./config/.env`, `./secrets/**`) never walk.
 */
export const MASK_WALK_LIMIT = 200_000;

/** Where a control path lives and what it is when it does not exist yet. */
type Kind = "file" | "dir";

export interface Mask {
  path: string;
  kind: Kind;
  /** What hides it, for `cc-tools sandbox status` and the result's note. */
  why: string;
}

/** What a sandboxed command may touch. Every path is canonical (symlinks resolved). */
export interface SandboxPolicy {
  /** Directories (and files) commands may change: workspace, additional dirs, session dir, $TMPDIR, allowWrite. */
  writable: string[];
  /**
   * Directories that hold control files, bound onto themselves: a mount point cannot be renamed or
   * removed, so `mv .git .git-old; mkdir .git` fails (EBUSY) while the files in them stay writable.
   */
  pinned: string[];
  /** Read-only although inside a writable place: control files and sandbox.filesystem.denyWrite. */
  readOnly: string[];
  /**
   * Control paths that do not exist: an empty directory stands in for each while the command runs, so it
   * cannot create them (a new .mcp.json or hook script would run outside the sandbox in the next session).
   * A directory, not a file, and bubblewrap shows the command an empty one over it (bwrap.ts), not the
   * placeholder with its markers, so `git add -A` inside has nothing to pick up. (macOS has no mounts: there
   * the markers stay visible to the command.)
   */
  placeholders: string[];
  /**
   * Paths that must not appear but cannot hold a placeholder (git refuses to work with any `.git/commondir`,
   * and one written inside would point git at a configuration of the command's making): removed, with a
   * note, as soon as the command ends.
   */
  forbidden: string[];
  /** Hidden paths: Read deny rules and sandbox.filesystem.denyRead. */
  masked: Mask[];
  /** Paths inside a masked directory that sandbox.filesystem.allowRead shows again. */
  unmasked: string[];
  network: { allowedDomains: string[]; deniedDomains: string[] };
  /** $TMPDIR inside: the session's own temp dir (the rest of /tmp is read-only). */
  tmpDir: string;
  /** Package-manager caches go here unless the user made their real caches writable. */
  cacheDir: string;
}

/** The files in a workspace that decide what runs outside the sandbox later, and what kind each is. */
const CONTROL_PATHS: ReadonlyArray<{ name: string; kind: Kind }> = [
  { name: ".claude", kind: "dir" },
  { name: ".mcp.json", kind: "file" },
];

function real(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return canonicalPath(path, "/");
  }
}

function kindOf(path: string): Kind | undefined {
  try {
    return statSync(path).isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

/** The directories strictly between `root` and `path`, outermost first. */
function between(root: string, path: string): string[] {
  const parts = relative(root, dirname(path)).split(sep).filter(Boolean);
  return parts.map((_, i) => join(root, ...parts.slice(0, i + 1)));
}

interface Builder {
  writableRoots: string[];
  forbidden: Set<string>;
  pinned: Set<string>;
  readOnly: Set<string>;
  placeholders: Set<string>;
}

/**
 * Makes `path` read-only inside the sandbox, and pins every directory between its writable root and it,
 * so neither it nor a parent can be swapped for a copy. A missing path gets a placeholder.
 */
function protect(b: Builder, path: string, kind: Kind): void {
  const root = b.writableRoots.find((r) => isWithin(path, r));
  if (!root || path === root) return;
  for (const dir of between(root, path)) if (kindOf(dir) === "dir") b.pinned.add(dir);
  const found = kindOf(path);
  if (found === undefined) {
    // The first missing component stands in for the whole path: nothing can be created below it.
    const missing = [...between(root, path), path].find((d) => kindOf(d) === undefined);
    if (missing && kindOf(dirname(missing)) === "dir") b.placeholders.add(missing);
    return;
  }
  // A placeholder already there (another command's, or a killed run's) is joined, not taken for the file
  // or the directory: taken for a real one, it would be bound read-only without a use of this command's,
  // and its owner's removal would detach that mount while this command runs.
  if (found === "dir" && isPlaceholder(path, kind === "dir")) {
    b.placeholders.add(path);
    return;
  }
  b.readOnly.add(path);
}

function readTextOr(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** Most directories looked at under .git/modules for submodules' git dirs. */
const SUBMODULE_SCAN_LIMIT = 1_000;

/** Git dirs of submodules (directories holding HEAD), nested modules included. */
function submoduleGitDirs(modules: string): string[] {
  const found: string[] = [];
  const queue = [modules];
  let seen = 0;
  while (queue.length > 0 && seen++ < SUBMODULE_SCAN_LIMIT) {
    const dir = queue.shift()!;
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    if (entries.some((e) => e.name === "HEAD" && e.isFile())) {
      found.push(dir);
      queue.push(join(dir, "modules"));
      continue;
    }
    for (const entry of entries) if (entry.isDirectory()) queue.push(join(dir, entry.name));
  }
  return found;
}

/** `.git` of a workspace: its config and hooks read-only, the directory pinned; a worktree's real git dirs too. */
function protectGit(b: Builder, workspace: string, writable: Set<string>): void {
  const dotGit = join(workspace, ".git");
  let gitDir: string | undefined;
  let commonDir: string | undefined;
  try {
    const stat = lstatSync(dotGit);
    // A placeholder standing in for a missing .git is no repository: it is joined below.
    if (stat.isDirectory() && !isPlaceholder(dotGit, true)) gitDir = commonDir = dotGit;
    else if (stat.isFile()) {
      const pointer = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, "utf8"))?.[1]?.trim();
      if (pointer) {
        gitDir = real(resolve(workspace, pointer));
        const common = existsSync(join(gitDir, "commondir"))
          ? readFileSync(join(gitDir, "commondir"), "utf8").trim()
          : ".";
        commonDir = real(resolve(gitDir, common));
        // A worktree's git dirs live outside it; git must write objects, refs and the index there.
        for (const dir of new Set([gitDir, commonDir])) {
          if (!b.writableRoots.some((r) => isWithin(dir, r))) {
            writable.add(dir);
            b.writableRoots.push(dir);
          }
        }
        b.readOnly.add(dotGit);
      }
    }
  } catch {
    // no .git
  }
  if (!gitDir || !commonDir) {
    // Without a placeholder, `git init` plus a hook would run code outside the sandbox at the next commit.
    protect(b, dotGit, "dir");
    return;
  }
  b.pinned.add(gitDir);
  b.pinned.add(commonDir);
  // A worktree's own git dir has no config or hooks git reads; the common dir's are the repository's.
  protect(b, join(commonDir, "config"), "file");
  protect(b, join(commonDir, "hooks"), "dir");
  if (gitDir === commonDir && !existsSync(join(gitDir, "commondir")))
    b.forbidden.add(join(gitDir, "commondir"));
  // Hooks elsewhere (core.hooksPath = .husky) run on the user's next commit as much as .git/hooks do.
  const hooksPath = /^\s*hookspath\s*=\s*(.+?)\s*$/im.exec(readTextOr(join(commonDir, "config")))?.[1];
  if (hooksPath) protect(b, real(resolve(workspace, hooksPath.replace(/^~(?=\/)/, homedir()))), "dir");
  // Submodules keep their git dirs under modules/: their config and hooks run code just the same.
  for (const moduleDir of submoduleGitDirs(join(commonDir, "modules"))) {
    protect(b, join(moduleDir, "config"), "file");
    protect(b, join(moduleDir, "hooks"), "dir");
  }
  if (existsSync(join(gitDir, "config.worktree"))) b.readOnly.add(join(gitDir, "config.worktree"));
}

/** Files a hook command runs, as far as its text names them (`"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh`, `scripts/h.py`). */
export function hookScripts(command: string, projectDir: string): string[] {
  const text = command.replace(/\$\{CLAUDE_PROJECT_DIR\}|\$CLAUDE_PROJECT_DIR\b/g, projectDir);
  const split = splitBash(text);
  if (!split.ok) return [];
  const found: string[] = [];
  for (const simple of split.commands) {
    for (const word of simple.literals) {
      if (!word || word.startsWith("-") || word.includes("://")) continue;
      const path = isAbsolute(word) ? word : resolve(projectDir, word);
      if (word.includes("/") || kindOf(path) === "file") found.push(path);
    }
  }
  return found;
}

function hookCommands(ctx: ToolContext): string[] {
  return Object.values(ctx.config.hooks).flatMap((matchers) =>
    matchers.flatMap((m) => (m.hooks ?? []).map((h) => h.command)).filter((c) => typeof c === "string"),
  );
}

/** Rules of one tool family and behaviour with a path pattern. */
function pathRules(ctx: ToolContext, tools: Set<string>, behavior: PermissionRuleEntry["behavior"]) {
  return ctx.rules().flatMap((entry) => {
    if (entry.behavior !== behavior) return [];
    const parsed = parseRule(entry.rule);
    if (!parsed.ok || parsed.rule.kind !== "path" || !tools.has(parsed.rule.tool)) return [];
    return [{ entry, spec: parsed.rule.spec }];
  });
}

const GLOB = /[*?[\]\\]/;

/** The one path a pattern names when it names exactly one (`./a/.env`, `~/x`, `//etc/x`, `dir/**`), else undefined. */
function literalTarget(
  spec: string,
  ctx: ToolContext,
  root: string,
): { path: string; whole: boolean } | undefined {
  const whole = spec.endsWith("/**");
  const body = whole ? spec.slice(0, -3) : spec;
  if (GLOB.test(body)) return undefined;
  let path: string;
  if (body.startsWith("//")) path = body.slice(1);
  else if (body === "~" || body.startsWith("~/")) path = join(homedir(), body.slice(1));
  else if (body.startsWith("/")) path = join(root, body);
  else if (body.startsWith("./")) path = join(ctx.workingDir, body);
  // A bare name without a slash matches at any depth (gitignore semantics): not one path.
  else if (body.includes("/") || whole) path = join(ctx.workingDir, body);
  else return undefined;
  return { path: real(path), whole };
}

interface MaskCache {
  key: string;
  masks: Mask[];
}

/** Unanchored Read deny patterns are expanded by one walk per session and rule set (see docs/SANDBOX.md). */
const maskCacheSlot: SessionSlot<MaskCache> = { key: "sandboxMasks", create: () => ({ key: "", masks: [] }) };

function walkMatches(base: string, matches: (p: string) => boolean, rule: string, why: string): Mask[] {
  const out: Mask[] = [];
  let seen = 0;
  const visit = (dir: string) => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (++seen > MASK_WALK_LIMIT) {
        throw new ToolError(
          `The sandbox cannot apply the Read deny rule ${rule}: finding the files it covers under ${base} means ` +
            `looking at more than ${MASK_WALK_LIMIT} entries. Anchor the rule to the files it means ` +
            "(Read(./config/.env), Read(./secrets/**)) or list them in sandbox.filesystem.denyRead.",
          { beforeRun: true },
        );
      }
      const path = join(dir, entry.name);
      if (matches(path)) out.push({ path, kind: entry.isDirectory() ? "dir" : "file", why });
      else if (entry.isDirectory()) visit(path);
    }
  };
  visit(base);
  return out;
}

function readMasks(ctx: ToolContext): Mask[] {
  const masks: Mask[] = [];
  const walked: Array<{ entry: PermissionRuleEntry; spec: string }> = [];
  for (const { entry, spec } of pathRules(ctx, READ_RULE_TOOLS, "deny")) {
    const why = `Read deny rule ${entry.rule}`;
    const literal = literalTarget(spec, ctx, entry.source.root);
    if (!literal) {
      walked.push({ entry, spec });
      continue;
    }
    const kind = kindOf(literal.path);
    if (kind) masks.push({ path: literal.path, kind, why });
  }
  for (const path of ctx.config.sandbox.filesystem.denyRead) {
    const target = real(path);
    const kind = kindOf(target);
    if (kind) masks.push({ path: target, kind, why: "sandbox.filesystem.denyRead" });
  }
  if (walked.length > 0) {
    const cache = ctx.session.get(maskCacheSlot);
    const key = JSON.stringify(walked.map((w) => [w.entry.rule, w.entry.source.root]));
    if (cache.key !== key) {
      cache.masks = walked.flatMap(({ entry, spec }) => {
        const bases = { workingDir: ctx.workingDir, root: entry.source.root, homeDir: homedir() };
        const pattern = compilePathPattern(spec, bases, true);
        return walkMatches(pattern.base, pattern.matches, entry.rule, `Read deny rule ${entry.rule}`);
      });
      cache.key = key;
    }
    masks.push(...cache.masks.filter((m) => existsSync(m.path)));
  }
  return masks;
}

/** Host names from WebFetch(domain:…) rules of one behaviour. */
function domainRules(rules: readonly PermissionRuleEntry[], behavior: "allow" | "deny"): string[] {
  return rules.flatMap((entry) => {
    if (entry.behavior !== behavior) return [];
    const parsed = parseRule(entry.rule);
    return parsed.ok && parsed.rule.kind === "domain" && parsed.rule.tool === "WebFetch"
      ? [parsed.rule.host]
      : [];
  });
}

let cacheDir: string | undefined;

/** A persistent cache for package managers inside the sandbox, apart from the user's own (which stay read-only). */
function sandboxCacheDir(): string {
  if (cacheDir) return cacheDir;
  for (const dir of SANDBOX_CACHE_DIRS) {
    try {
      mkdirSync(dir, { recursive: true });
      cacheDir = real(dir);
      return cacheDir;
    } catch {
      // home not writable: try the next
    }
  }
  return join(tmpdir(), "cc-tools-sandbox-cache");
}

/** The session's $TMPDIR inside the sandbox goes with the session. */
const tmpDirSlot: SessionSlot<{ dir?: string }> = {
  key: "sandboxTmpDir",
  create: () => ({}),
  dispose: (state) => {
    if (state.dir) removeTree(state.dir);
  },
};

/** The session's $TMPDIR inside the sandbox, created on first use. */
export function sandboxTmpDir(ctx: ToolContext): string {
  const state = ctx.session.get(tmpDirSlot);
  const dir = join(ctx.session.dir, "tmp");
  mkdirSync(dir, { recursive: true });
  state.dir = dir;
  return real(dir);
}

/** Works out, from the session's settings and rules, what a sandboxed command may touch. */
export function buildPolicy(ctx: ToolContext): SandboxPolicy {
  const fs = ctx.config.sandbox.filesystem;
  const tmpDir = sandboxTmpDir(ctx);
  const cacheDir = sandboxCacheDir();
  const workspaces = [...new Set([ctx.workingDir, ...ctx.additionalDirectories].map(real))].filter((d) =>
    existsSync(d),
  );
  const writable = new Set<string>([...workspaces, real(ctx.session.dir), tmpDir, cacheDir]);
  for (const path of fs.allowWrite) if (existsSync(path)) writable.add(real(path));
  // Edit allow rules for whole directories (`Edit(~/.npm/**)`) open them too, as in Claude Code.
  for (const { entry, spec } of pathRules(ctx, WRITE_RULE_TOOLS, "allow")) {
    const target = literalTarget(spec, ctx, entry.source.root);
    if (target?.whole && existsSync(target.path)) writable.add(target.path);
  }
  const b: Builder = {
    writableRoots: [...writable],
    forbidden: new Set(),
    pinned: new Set(),
    readOnly: new Set(),
    placeholders: new Set(),
  };
  for (const workspace of workspaces) {
    for (const { name, kind } of CONTROL_PATHS) protect(b, join(workspace, name), kind);
    protectGit(b, workspace, writable);
  }
  protect(b, real(userConfigDir()), "dir");
  for (const command of hookCommands(ctx)) {
    for (const script of hookScripts(command, ctx.config.projectDir)) protect(b, real(script), "file");
  }
  for (const path of fs.denyWrite) if (existsSync(path)) b.readOnly.add(real(path));
  for (const { entry, spec } of pathRules(ctx, WRITE_RULE_TOOLS, "deny")) {
    const target = literalTarget(spec, ctx, entry.source.root);
    if (target && existsSync(target.path)) b.readOnly.add(target.path);
  }
  noteSandboxWritable(writable);
  const rules = ctx.rules();
  // A place inside another writable one needs no mount of its own ($TMPDIR inside the session dir).
  const roots = [...writable].filter((p) => ![...writable].some((o) => o !== p && isWithin(p, o)));
  return {
    writable: roots,
    // A writable root or a read-only bind is a mount point already.
    pinned: [...b.pinned].filter((p) => !writable.has(p) && ![...b.readOnly].some((r) => isWithin(p, r))),
    readOnly: [...b.readOnly],
    placeholders: [...b.placeholders],
    forbidden: [...b.forbidden],
    masked: readMasks(ctx),
    unmasked: fs.allowRead.filter((p) => existsSync(p)).map(real),
    network: {
      allowedDomains: [
        ...new Set([...ctx.config.sandbox.network.allowedDomains, ...domainRules(rules, "allow")]),
      ],
      deniedDomains: [
        ...new Set([...ctx.config.sandbox.network.deniedDomains, ...domainRules(rules, "deny")]),
      ],
    },
    tmpDir,
    cacheDir,
  };
}
