import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { hookMatches } from "../../src/hooks/run.js";
import { emptySettings, type HookMatcher } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";
import { recordingTools } from "../helpers/tools.js";

function contextWithHooks(
  hooks: { PreToolUse?: HookMatcher[]; PostToolUse?: HookMatcher[] },
  mode = "bypassPermissions" as const,
) {
  const { tools, events } = recordingTools();
  const dir = tempDir();
  const config = emptySettings(dir);
  config.hooks = { PreToolUse: hooks.PreToolUse ?? [], PostToolUse: hooks.PostToolUse ?? [] };
  return { ctx: testContext({ tools, workingDir: dir, config, permissionMode: mode }), events, dir };
}

const command = (cmd: string, matcher = "Poke"): HookMatcher[] => [
  { matcher, hooks: [{ type: "command", command: cmd }] },
];

describe("hook matchers", () => {
  it("match like Claude Code's: empty or * for all, otherwise an anchored regex", () => {
    expect(hookMatches(undefined, "Bash")).toBe(true);
    expect(hookMatches("*", "Bash")).toBe(true);
    expect(hookMatches("Edit|Write", "Write")).toBe(true);
    expect(hookMatches("Edit", "NotebookEdit")).toBe(false);
    expect(hookMatches("mcp__.*", "mcp__github__search")).toBe(true);
    expect(hookMatches("(", "(")).toBe(true);
  });
});

describe("PreToolUse hooks", () => {
  it("receive the call as JSON on stdin", async () => {
    const { ctx, dir } = contextWithHooks({
      PreToolUse: command(`cat > "${"$"}CLAUDE_PROJECT_DIR/payload.json"`),
    });
    await runTool("Poke", { id: "a" }, ctx, { toolUseId: "toolu_1" });
    const payload = JSON.parse(readFileSync(join(dir, "payload.json"), "utf8"));
    expect(payload).toMatchObject({
      session_id: ctx.sessionId,
      cwd: dir,
      hook_event_name: "PreToolUse",
      tool_name: "Poke",
      tool_input: { id: "a" },
      tool_use_id: "toolu_1",
    });
  });

  it("block the call with exit code 2, showing stderr to the model", async () => {
    const { ctx, events } = contextWithHooks({
      PreToolUse: command("echo 'pokes are frozen today' >&2; exit 2"),
    });
    const result = await runTool("Poke", { id: "a" }, ctx);
    expect(result.isError).toBe(true);
    expect(ToolResult.text(result)).toContain("pokes are frozen today");
    expect(events).toEqual([]);
  });

  it("do not apply to tools their matcher does not match", async () => {
    const { ctx } = contextWithHooks({ PreToolUse: command("exit 2", "Write") });
    expect((await runTool("Poke", { id: "a" }, ctx)).isError).toBe(false);
  });

  it("can allow a call that permissions would otherwise refuse", async () => {
    const allow = `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`;
    const { ctx } = contextWithHooks({ PreToolUse: command(allow) }, "default" as never);
    const result = await runTool("Poke", { id: "a" }, ctx);
    expect(result).toEqual(ToolResult.success("poked a"));
  });

  it("allow skips the question but not the user's deny or ask rules", async () => {
    const allow = `echo '{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"fine"}}'`;
    for (const [behavior, expected] of [
      ["deny", "denied by the deny rule Poke"],
      ["ask", "needs approval under the ask rule Poke"],
    ] as const) {
      const { ctx, events } = contextWithHooks({ PreToolUse: command(allow) }, "default" as never);
      ctx.addRules([{ rule: "Poke", behavior, source: { scope: "session", root: ctx.workingDir } }]);
      const result = await runTool("Poke", { id: "a" }, ctx);
      expect(result.isError).toBe(true);
      expect(ToolResult.text(result)).toContain(expected);
      expect(events).toEqual([]);
    }
  });

  it("ask asks even when the mode would allow", async () => {
    const ask = `echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"look first"}}'`;
    const { ctx, events } = contextWithHooks({ PreToolUse: command(ask) });
    const result = await runTool("Poke", { id: "a" }, ctx);
    expect(result.isError).toBe(true);
    expect(ToolResult.text(result)).toContain("a PreToolUse hook asks for approval: look first");
    expect(events).toEqual([]);
  });

  it("can deny with a reason", async () => {
    const deny = `echo '{"permissionDecision":"deny","permissionDecisionReason":"not on Fridays"}'`;
    const { ctx, events } = contextWithHooks({ PreToolUse: command(deny) });
    const result = await runTool("Poke", { id: "a" }, ctx);
    expect(ToolResult.text(result)).toContain("not on Fridays");
    expect(events).toEqual([]);
  });

  it("can rewrite the input, which is validated again", async () => {
    const rewrite = `echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"id":"rewritten"}}}'`;
    const { ctx } = contextWithHooks({ PreToolUse: command(rewrite) });
    expect(ToolResult.text(await runTool("Poke", { id: "a" }, ctx))).toBe("poked rewritten");

    const bad = `echo '{"updatedInput":{"nope":1}}'`;
    const { ctx: ctx2 } = contextWithHooks({ PreToolUse: command(bad) });
    const result = await runTool("Poke", { id: "a" }, ctx2);
    expect(ToolResult.text(result)).toContain("A PreToolUse hook supplied invalid input");
  });

  it("are stopped at their timeout and do not block the call", async () => {
    const { ctx } = contextWithHooks({
      PreToolUse: [{ matcher: "Poke", hooks: [{ type: "command", command: "sleep 30", timeout: 0.3 }] }],
    });
    const started = Date.now();
    const result = await runTool("Poke", { id: "a" }, ctx);
    expect(result.isError).toBe(false);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe("PostToolUse hooks", () => {
  it("see the tool's response and can send feedback to the model", async () => {
    const post = `jq -r .tool_response.content[0].text >/dev/null 2>&1; cat > /dev/null; echo "lint: 2 warnings" >&2; exit 2`;
    const { ctx } = contextWithHooks({ PostToolUse: command(post) });
    const result = await runTool("Poke", { id: "a" }, ctx);
    expect(result.isError).toBe(false);
    expect(ToolResult.text(result)).toBe("poked a\nPostToolUse hook feedback:\nlint: 2 warnings");
  });
});
