import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PermissionMode } from "../../src/core/permission-level.js";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";

/**
 * Attacks on the bash splitter, run through the executor with real bash under narrow allow rules, and
 * judged by their effect: a file outside the workspace keeps its content, a marker file never appears.
 */
function setup(allow: string[], mode: PermissionMode = "default") {
  // The rules alone judge here: with the OS sandbox on, a sandboxed command would need no approval (and the
  // kernel would hold the boundary anyway; test/sandbox covers that layer).
  const workingDir = tempDir();
  const config = emptySettings(workingDir);
  config.sandbox.enabled = false;
  const ctx = testContext({ permissionMode: mode, workingDir, config });
  ctx.addRules(
    allow.map((rule) => ({ rule, behavior: "allow", source: { scope: "cli", root: ctx.workingDir } })),
  );
  const outside = join(tempDir(), "outside.txt");
  writeFileSync(outside, "precious\n");
  return { ctx, outside, marker: join(ctx.workingDir, "marker") };
}

async function bash(ctx: ReturnType<typeof setup>["ctx"], command: string) {
  const result = await runTool("Bash", { command }, ctx);
  return {
    denied: result.isError && /denied|approval/i.test(ToolResult.text(result)),
    text: ToolResult.text(result),
  };
}

describe("root cause 1: /dev/stdout and friends re-open what the descriptor points at", () => {
  it.each([
    "echo pwned 1<OUT >/dev/stdout",
    "echo pwned 2<OUT >/dev/stderr",
    "echo pwned 1<OUT >/dev/fd/1",
    "echo pwned 2\\\n<OUT >/dev/stderr",
    "echo pwned 1<OUT >/proc/self/fd/1",
    "echo pwned 3<OUT 1>&3 >/dev/stdout",
    "exec 1<OUT; echo pwned >/dev/stdout",
    "{ echo pwned >/dev/stdout; } 1<OUT",
    "f() { echo pwned >/dev/stdout; }; f 1<OUT",
  ])("%j under Bash(echo:*) leaves the outside file alone", async (template) => {
    const { ctx, outside } = setup(["Bash(echo:*)", "Bash(exec:*)", "Bash(f:*)"], "acceptEdits");
    const { denied } = await bash(ctx, template.replaceAll("OUT", outside));
    expect(denied).toBe(true);
    expect(readFileSync(outside, "utf8")).toBe("precious\n");
  });

  it("does not rewrite .git/config through a descriptor under acceptEdits", async () => {
    const { ctx } = setup(["Bash(echo:*)"], "acceptEdits");
    mkdirSync(join(ctx.workingDir, ".git"));
    const config = join(ctx.workingDir, ".git", "config");
    writeFileSync(config, "[core]\n");
    const { denied } = await bash(ctx, "echo '[core] fsmonitor = touch pwned' 1<.git/config >/dev/stdout");
    expect(denied).toBe(true);
    expect(readFileSync(config, "utf8")).toBe("[core]\n");
  });
});

describe("root cause 2: what the splitter does not model is asked, not allowed", () => {
  it.each([
    ["printf -v 'a[$(touch marker)]' x", "Bash(printf:*)"],
    ["read 'a[$(touch marker)]' <<< x", "Bash(read:*)"],
    ["test -v 'a[$(touch marker)]'", "Bash(test:*)"],
    ["[ -v 'a[$(touch marker)]' ]", "Bash([:*)"],
    ["declare 'a[$(touch marker)]=1'", "Bash(declare:*)"],
    ["unset 'a[$(touch marker)]'", "Bash(unset:*)"],
    ["mapfile -C 'touch marker' -c 1 m <<< x", "Bash(mapfile:*)"],
    ["let 'x=a[$(touch marker)]'", "Bash(let:*)"],
    ["x='a[$(touch marker)]'; [[ x -eq 1 ]]", "Bash(echo:*)"],
    ["echo 'a[$(touch marker)]'; echo $(( $_ ))", "Bash(echo:*)"],
    ["cat <(echo)#; touch marker", "Bash(cat:*)"],
    [`echo "$'"; touch marker; "'"`, "Bash(echo:*)"],
    ["x=$(cat <<E\nE)\ntouch marker\nE\n)", "Bash(cat:*)"],
  ])("%j under %s does not run the hidden command", async (command, rule) => {
    const { ctx, marker } = setup([rule, "Bash(echo:*)"]);
    const { denied } = await bash(ctx, command);
    expect(denied).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });
});

describe("variables set where no rule sees them", () => {
  // A workspace file `0/ls`: with PATH=0, `ls` runs it instead of /bin/ls.
  it.each([
    "for PATH in 0; do ls; done",
    "echo $(( PATH = 0 )); ls",
    "(( PATH = 0 )); ls",
    "read PATH <<< 0; ls",
    "select PATH in 0; do ls; break; done <<< 1",
  ])("%j under Bash(ls:*), Bash(echo:*), Bash(read:*) does not run a workspace program", async (command) => {
    const { ctx, marker } = setup(["Bash(ls:*)", "Bash(echo:*)", "Bash(read:*)", "Bash(cd:*)"]);
    mkdirSync(join(ctx.workingDir, "0", "x"), { recursive: true });
    writeFileSync(join(ctx.workingDir, "0", "ls"), `#!/bin/sh\n: > '${marker}'\n`, { mode: 0o755 });
    const { denied } = await bash(ctx, command);
    expect(denied).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });
});

describe("constructs modelled completely are judged part by part", () => {
  it.each([
    ["x=$(echo hi); echo $x", ["Bash(echo:*)"], "hi"],
    ["case a in a) echo yes;; *) echo no;; esac", ["Bash(echo:*)"], "yes"],
    ["for ((i=0; i<2; i++)); do echo n$i; done", ["Bash(echo:*)"], "n1"],
    ["if [[ -d . && $((1 + 1)) -eq 2 ]]; then echo dir; fi", ["Bash(echo:*)"], "dir"],
    ["f() { echo in-f; }; f", ["Bash(echo:*)", "Bash(f)"], "in-f"],
    [
      "while read -r l; do echo got-$l; done < <(printf 'a\\n')",
      ["Bash(echo:*)", "Bash(read:*)", "Bash(printf:*)"],
      "got-a",
    ],
    ["time ( echo timed )", ["Bash(echo:*)"], "timed"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash parameter expansion, not a template
    ["a=(x y); echo ${a[1]}", ["Bash(echo:*)"], "y"],
  ])("%j runs under %j", async (command, allow, output) => {
    const { ctx } = setup(allow);
    const result = await runTool("Bash", { command }, ctx);
    expect(result.isError, ToolResult.text(result)).toBe(false);
    expect(ToolResult.text(result)).toContain(output);
  });

  it("still asks for a command hidden inside a modelled construct", async () => {
    const { ctx, marker } = setup(["Bash(echo:*)"]);
    const { denied } = await bash(ctx, "case a in a) touch marker;; esac; x=$(touch marker)");
    expect(denied).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });
});
