import { statSync } from "node:fs";
import { resolve } from "node:path";
import { canonicalPath, expandTilde } from "../fs/canonical.js";
import { nestedRepository } from "./control-files.js";
import { describeRule, type Evaluation, type LoadedRule } from "./evaluation.js";
import { askReason, byRule, defaultAllowReason, finish, planDenial } from "./outcomes.js";
import { splitPowerShell } from "./powershell-split.js";
import { READ_RULE_TOOLS, type Shell, WRITE_RULE_TOOLS } from "./rules.js";
import { commandText, type SimpleCommand, splitBash } from "./shell-split.js";
import {
  allowText,
  DIRECTORY_CHANGERS,
  emptyView,
  expandGlob,
  PATH_CHANGERS,
  restrictiveView,
  shellPath,
} from "./shell-wrappers.js";
import type { PermissionDecision } from "./types.js";

const SHELL_TOOL: Record<Shell, string> = { bash: "Bash", powershell: "PowerShell" };

/**
 * When part of a command cannot be seen, a deny or ask rule about commands or files might be hiding
 * behind it: then the command asks rather than being allowed by the mode or a whole-tool rule.
 */
function uncheckableRule(
  ev: Evaluation,
  shell: Shell,
  why: string,
  only?: "reads",
): PermissionDecision | undefined {
  // A read that cannot be followed hides only from Read rules; a hidden command from every rule.
  const found = [...ev.rules.deny, ...ev.rules.ask].find(({ rule }) =>
    only === "reads"
      ? rule.kind === "path" && READ_RULE_TOOLS.has(rule.tool)
      : (rule.kind === "command" && rule.shell === shell) ||
        (rule.kind === "path" && (READ_RULE_TOOLS.has(rule.tool) || WRITE_RULE_TOOLS.has(rule.tool))),
  );
  if (!found) return undefined;
  return {
    behavior: "ask",
    reason: `this command cannot be checked against ${describeRule(found.entry)}: ${why}; only a person can approve it`,
  };
}

/**
 * Decides a shell command: every simple command in it and every file it redirects into must be
 * allowed; any part matching a deny rule denies the whole command.
 */
export function evaluateCommand(
  ev: Evaluation,
  command: string,
  shell: Shell,
  cwd?: string,
): PermissionDecision {
  const { input } = ev;
  const shellTool = SHELL_TOOL[shell];
  const toolWide = ({ rule }: LoadedRule) =>
    rule.kind === "tool" && (rule.tool === input.toolName || rule.tool === shellTool);
  const commandRule =
    (texts: string[]) =>
    ({ rule }: LoadedRule) =>
      rule.kind === "command" && rule.shell === shell && texts.some((text) => rule.pattern.matches(text));
  const split = shell === "bash" ? splitBash(command) : splitPowerShell(command);
  const cell = ev.cell(true);

  if (!split.ok) {
    const raw = [command.trim().replace(/\s+/g, " ")];
    const speaks = (loaded: LoadedRule) => toolWide(loaded) || commandRule(raw)(loaded);
    const [denied, asked] = [ev.find("deny", speaks), ev.find("ask", speaks)];
    const allowed = ev.find("allow", toolWide);
    if (denied) return byRule("deny", denied, "this command");
    if (cell === "deny") return planDenial(input);
    if (asked) return finish(input, byRule("ask", asked, "this command"));
    const unchecked = uncheckableRule(ev, shell, split.reason);
    if (unchecked) return finish(input, unchecked);
    if (cell === "allow") return { behavior: "allow", reason: defaultAllowReason(input, true) };
    if (allowed && input.level !== "dangerous") return byRule("allow", allowed, "every command");
    return finish(input, {
      behavior: "ask",
      reason: `this command cannot be checked part by part (${split.reason}), so only a person can approve it`,
    });
  }

  const parts = split.commands;
  const base = cwd ?? input.workingDir;
  const changesDirectory = parts.some(({ words }) =>
    DIRECTORY_CHANGERS.has((words[0] === "builtin" || words[0] === "command" ? words[1] : words[0]) ?? ""),
  );
  const writes = parts
    .flatMap((part) => part.writes)
    .map((target) => ({ target, where: shellPath(target, base) }))
    .map(({ target, where }) => ({
      target,
      // After a `cd` in the same line, /proc/self/cwd is wherever the shell went.
      unknown:
        where.unknown ??
        (changesDirectory && /^\/proc\/(self|thread-self)\/cwd(\/|$)/.test(target)
          ? `${target} is the shell's directory after it changed directory`
          : undefined),
      view: ev.pathView(where.path, cwd),
    }));
  // After a `cd` in the same line, a relative target is somewhere we cannot know.
  const unknownWrites = changesDirectory ? writes.filter((w) => !/^([/~]|\.\/~)/.test(w.target)) : [];
  const views = parts.map((part) => {
    const view = emptyView();
    restrictiveView(part, shell, view);
    // `<` targets come as written when only known at run time (`$F`, `*.env`).
    const runTime = view.reads.filter((target) => /[$`]/.test(target));
    view.globReads.push(...view.reads.filter((target) => !/[$`]/.test(target) && /[*?[]/.test(target)));
    view.unknownReads.push(...runTime);
    view.reads = view.reads.filter((target) => !/[$`*?[]/.test(target));
    const reads = [...view.reads, ...view.globReads.flatMap((glob) => expandGlob(glob, base) ?? [])];
    // What a read goes through that cannot be followed: a variable, a glob too complex to expand here,
    // a directory descriptor (`/dev/fd/3/x`) or another process's directory.
    const unknown = [
      ...view.unknownReads.map((word) => `it reads ${word}, a file only known at run time`),
      ...view.globReads
        .filter((glob) => expandGlob(glob, base) === undefined)
        .map((glob) => `it reads ${glob}, a pattern this check cannot expand`),
      ...view.reads
        .map((target) => shellPath(target, base).unknown)
        .filter((why): why is string => why !== undefined),
      // A directory read whole (`grep -r x dir`, `cp -r dir`) may hold files Read rules cover.
      ...view.treeReads
        .filter((target) => isDirectory(resolve(base, expandTilde(target, input.homeDir))))
        .map((target) => `it reads the directory ${target}, whose files this check does not list`),
    ];
    // A write through a descriptor or another process's directory hides its target from Edit rules.
    const unwritable = view.writes.map((target) => shellPath(target, base).unknown).find((why) => why);
    return {
      part,
      ...view,
      hidden: view.hidden ?? unwritable,
      unreadable: unknown[0],
      reads: reads.map((target) => shellPath(target, base).path),
      writes: view.writes.map((target) => shellPath(target, base).path),
      texts: [...view.texts],
    };
  });

  // Every rule is matched before anything is decided, so the trace holds all that speak to the command.
  const hits: Record<"deny" | "ask", Array<{ found: LoadedRule; what: string }>> = { deny: [], ask: [] };
  for (const behavior of ["deny", "ask"] as const) {
    for (const found of ev.all(behavior, toolWide)) hits[behavior].push({ found, what: "every command" });
    for (const { part, texts, writes: written, reads } of views) {
      for (const found of ev.all(behavior, commandRule(texts)))
        hits[behavior].push({ found, what: `\`${commandText(part)}\`` });
      for (const [access, targets] of [
        ["write", written],
        ["read", reads],
      ] as const) {
        for (const target of targets) {
          const view = ev.pathView(target, cwd);
          const what = `${access === "write" ? "writing" : "reading"} ${view.canonical}`;
          for (const found of ev.all(behavior, (loaded) =>
            ev.pathRuleMatches(loaded, input.toolName, access, view),
          ))
            hits[behavior].push({ found, what });
        }
      }
    }
  }
  const wideAllow = ev.find("allow", toolWide);
  const partAllows = parts
    .map((part) => allowText(part))
    .filter((text) => text !== "")
    .map((text) => ({ text, found: ev.find("allow", commandRule([text])) }));
  const writeAllows = writes.map(({ view }) => {
    const control = ev.isControl(view);
    const found = ev
      .all("allow", (loaded) => ev.pathRuleMatches(loaded, input.toolName, "write", view))
      .find((loaded) => !control || ev.namesFile(loaded));
    return { view, found };
  });
  const repository = gitRepositoryIn(ev, parts, views, base);

  const denied = hits.deny[0];
  if (denied) return finish(input, byRule("deny", denied.found, denied.what));
  if (cell === "deny") return planDenial(input);
  const asked = hits.ask[0];
  if (asked) return finish(input, byRule("ask", asked.found, asked.what));
  const hidden = views.find((view) => view.hidden)?.hidden;
  const unchecked = hidden === undefined ? undefined : uncheckableRule(ev, shell, hidden);
  if (unchecked) return finish(input, unchecked);
  const unreadable = views.find((view) => view.unreadable)?.unreadable;
  const uncheckedRead =
    unreadable === undefined ? undefined : uncheckableRule(ev, shell, unreadable, "reads");
  if (uncheckedRead) return finish(input, uncheckedRead);
  if (cell === "allow") return { behavior: "allow", reason: defaultAllowReason(input, true) };
  if (input.level === "dangerous") {
    return finish(input, { behavior: "ask", reason: askReason(ev, input.toolName, true, undefined) });
  }
  if (wideAllow) return byRule("allow", wideAllow, "every command");
  if (repository) {
    return finish(input, {
      behavior: "ask",
      reason: `git would run in ${repository}, a repository inside the workspace whose configuration can make git run programs, so it needs approval`,
    });
  }

  const used = new Set<string>();
  for (const { text, found } of partAllows) {
    if (!found) {
      return finish(input, { behavior: "ask", reason: `\`${text}\` is not covered by any allow rule` });
    }
    used.add(found.entry.rule);
  }
  if (unknownWrites.length > 0) {
    return finish(input, {
      behavior: "ask",
      reason: `the command changes directory before writing ${unknownWrites[0]!.target}, so where it writes cannot be checked`,
    });
  }
  const lost = writes.find((w) => w.unknown !== undefined);
  if (lost)
    return finish(input, {
      behavior: "ask",
      reason: `where the command writes cannot be checked: ${lost.unknown}`,
    });
  // `ln -s OUT lnk && echo x > lnk/f`: a write through a path another part of the line may create or
  // change lands where no check looked.
  const changer = views.flatMap((view) => [...view.programs]).find((name) => PATH_CHANGERS.has(name));
  if (changer && writes.length > 0) {
    return finish(input, {
      behavior: "ask",
      reason: `the command writes ${writes[0]!.target} while \`${changer}\` in the same line may create or change the path it goes through, so where it lands cannot be checked`,
    });
  }
  for (const { view, found } of writeAllows) {
    if (found) used.add(found.entry.rule);
    else if (ev.cell(ev.insideForWrite(view), "write") !== "allow") {
      const where = ev.insideForWrite(view)
        ? `and ${input.mode} mode asks before edits`
        : ev.inside(view)
          ? "and it decides what may run here, so changing it always needs approval"
          : "outside the workspace";
      return finish(input, {
        behavior: "ask",
        reason: `the command writes ${view.canonical} (a redirection) ${where}; no Edit rule allows it`,
      });
    }
  }
  return {
    behavior: "allow",
    reason:
      used.size > 0
        ? `every part is allowed (by ${[...used].join(", ")})`
        : "the command runs nothing that needs a rule",
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The repository a git command in this line would use when it is not the workspace's own: a bare
 * repository or a nested `.git` at or above where git runs (the shell's directory, a `cd` target, a
 * `git -C` directory). Its config is not a file the workspace's rules protect, and `git status` obeys it.
 */
function gitRepositoryIn(
  ev: Evaluation,
  parts: readonly SimpleCommand[],
  views: ReadonlyArray<{ programs: Set<string> }>,
  base: string,
): string | undefined {
  if (!views.some((view) => view.programs.has("git"))) return undefined;
  const dirs = [base];
  for (const { words, literals } of parts) {
    words.forEach((word, i) => {
      const next = literals[i + 1];
      if (
        next !== undefined &&
        ((i === 0 && DIRECTORY_CHANGERS.has(word)) || (word === "-C" && words[0] === "git"))
      )
        dirs.push(resolve(base, expandTilde(next, ev.input.homeDir)));
    });
  }
  for (const dir of dirs) {
    const canonical = canonicalPath(dir, "/");
    const root = ev.workspaceOf(canonical);
    const found = root === undefined ? undefined : nestedRepository(canonical, root);
    if (found) return found;
  }
  return undefined;
}
