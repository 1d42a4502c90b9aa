/**
 * Regression tests for the permission holes of issue 9 (root causes 3, 4 and 7), each an attempt run
 * through the executor with real bash and checked by its effect: a decoy secret absent from the output,
 * a marker file still there, a file outside the workspace never written.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PermissionMode } from "../../src/core/permission-level.js";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import type { RuleBehavior } from "../../src/permissions/types.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";

const DECOY = "decoy-secret-7f3a91";

function workspace(rules: Array<[string, RuleBehavior]>, mode: PermissionMode = "default") {
  const base = tempDir();
  const dir = join(base, "work");
  const outside = join(base, "outside");
  mkdirSync(dir);
  mkdirSync(outside);
  writeFileSync(join(dir, ".env"), `TOKEN=${DECOY}\n`);
  writeFileSync(join(outside, "secret.txt"), `${DECOY}\n`);
  writeFileSync(join(dir, "marker"), "still here\n");
  const config = emptySettings(dir);
  // The rules alone judge here; with the OS sandbox on, a sandboxed command would need no approval.
  config.sandbox.enabled = false;
  for (const [rule, behavior] of rules)
    config.rules.push({ rule, behavior, source: { scope: "project", root: dir } });
  const ctx = testContext({ workingDir: dir, config, permissionMode: mode });
  const bash = async (command: string) => ToolResult.text(await runTool("Bash", { command }, ctx));
  return { dir, outside, ctx, bash };
}

describe("root cause 3: input redirections and reading commands obey Read deny rules", () => {
  const rules: Array<[string, RuleBehavior]> = [
    ["Read(./.env)", "deny"],
    ["Read(//**/outside/secret.txt)", "deny"],
    ["Bash(echo:*)", "allow"],
    ["Bash(cat:*)", "allow"],
    ["Bash(head:*)", "allow"],
    ["Bash(grep:*)", "allow"],
    ["Bash(sed:*)", "allow"],
    ["Bash(base64:*)", "allow"],
    ["Bash(F=.env)", "allow"],
    ["Bash(git diff:*)", "allow"],
    ["Bash(source:*)", "allow"],
    ["Bash(xargs:*)", "allow"],
    ["Bash(find:*)", "allow"],
    ["Bash(dd:*)", "allow"],
  ];

  it.each([
    'echo "$(< .env)"',
    "x=$(< .env); echo $x",
    "cat .env",
    "cat ./.env",
    "head -n 5 .env",
    "grep TOKEN .env",
    "grep -e TOKEN .env",
    "sed -n p .env",
    "base64 .env",
    "cat .e*",
    "cat *env",
    "F=.env; cat < $F",
    'F=.env; cat "$F"',
    "grep -r TOKEN .",
    "git diff --no-index /dev/null .env",
    "source .env; echo $TOKEN",
    "echo .env | xargs cat",
    "find . -name .env -exec cat {} ;",
    "dd if=.env",
    "cat < /dev/fd/3/secret.txt 3< ../outside",
    "cat /dev/fd/3/secret.txt 3< ../outside",
  ])("%s is refused and shows no secret", async (command) => {
    const { bash } = workspace(rules);
    const text = await bash(command);
    expect(text).toContain("Permission to use Bash was denied");
    expect(text).not.toContain(DECOY);
  });

  it("a reader of other files still runs", async () => {
    const { dir, bash } = workspace(rules);
    writeFileSync(join(dir, "notes.txt"), "hello notes\n");
    expect(await bash("cat notes.txt")).toContain("hello notes");
    expect(await bash("grep -e .env notes.txt; echo done")).toContain("done");
  });
});

describe("root cause 7: deny rules see through wrappers and -c runners", () => {
  it.each([
    "flock /tmp/cc-tools-flock-test -c 'rm marker'",
    "script -qc 'rm marker' /dev/null",
    "bash --rcfile /dev/null -c 'rm marker'",
    "setarch x86_64 rm marker",
    "setarch $(uname -m) -R rm marker",
    "prlimit --nofile=64 rm marker",
    "setpriv --no-new-privs rm marker",
    "runuser -u root -- rm marker",
    "su root -c 'rm marker'",
    "git -c alias.x='!rm marker' x",
    "git -c core.pager='rm marker' log",
    "GIT_PAGER='rm marker' git log",
    "mytool -c 'rm marker'",
  ])("%s leaves the marker", async (command) => {
    const { dir, bash } = workspace([["Bash(rm:*)", "deny"]], "bypassPermissions");
    const text = await bash(command);
    expect(text).toContain("Permission to use Bash was denied");
    expect(existsSync(join(dir, "marker"))).toBe(true);
  });
});

describe("root cause 4: a write is judged where it lands", () => {
  it("/proc/self/cwd after a cd is not the directory the check saw", async () => {
    const { outside, bash } = workspace(
      [
        ["Bash(cd:*)", "allow"],
        ["Bash(echo:*)", "allow"],
      ],
      "acceptEdits",
    );
    const text = await bash(`cd ${outside} && echo pwned > /proc/self/cwd/out.txt`);
    expect(text).toContain("Permission to use Bash was denied");
    expect(existsSync(join(outside, "out.txt"))).toBe(false);
  });

  it("/proc/self/cwd is not followed: the splitter fails closed on paths through a process's descriptors", async () => {
    const { dir, bash } = workspace([["Bash(echo:*)", "allow"]], "acceptEdits");
    const text = await bash("echo inside > /proc/self/cwd/in.txt");
    expect(text).toContain("Permission to use Bash was denied");
    expect(existsSync(join(dir, "in.txt"))).toBe(false);
  });

  it("a link made earlier in the same line is not written through", async () => {
    const { outside, bash } = workspace(
      [
        ["Bash(ln:*)", "allow"],
        ["Bash(echo:*)", "allow"],
      ],
      "acceptEdits",
    );
    const text = await bash(`ln -s ${outside} lnk && echo pwned > lnk/f.txt`);
    expect(text).toContain("Permission to use Bash was denied");
    expect(existsSync(join(outside, "f.txt"))).toBe(false);
  });

  it("a removed session directory is not where a command is judged", async () => {
    const { dir, ctx, bash } = workspace(
      [
        ["Bash(cd:*)", "allow"],
        ["Bash(echo:*)", "allow"],
        ["Edit(./sub/**)", "allow"],
      ],
      "default",
    );
    mkdirSync(join(dir, "sub"));
    await bash("cd sub");
    rmSync(join(dir, "sub"), { recursive: true });
    const text = ToolResult.text(await runTool("Bash", { command: "echo x > note.txt" }, ctx));
    expect(text).toContain("Permission to use Bash was denied");
    expect(existsSync(join(dir, "note.txt"))).toBe(false);
  });
});
