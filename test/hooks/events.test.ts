import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { HookMatcher, Settings } from "../../src/core/settings.js";
import { runHooks } from "../../src/hooks/run.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";

function contextWith(hooks: Settings["hooks"]) {
  const dir = tempDir();
  const config = emptySettings(dir);
  config.hooks = hooks;
  return { ctx: testContext({ workingDir: dir, config }), dir };
}

const cmd = (command: string, matcher?: string, timeout?: number): HookMatcher => ({
  ...(matcher !== undefined ? { matcher } : {}),
  hooks: [{ type: "command", command, ...(timeout ? { timeout } : {}) }],
});

const signal = () => new AbortController().signal;

describe("hooks by event", () => {
  it("run every matching hook at once: a hook that waits for another's file does not wait in vain", async () => {
    // Run one after another, the first would wait out its 5 s time-out for a file only the second writes.
    const { ctx, dir } = contextWith({
      PreToolUse: [
        cmd(
          `for i in $(seq 50); do [ -f "$CLAUDE_PROJECT_DIR/b" ] && { touch "$CLAUDE_PROJECT_DIR/a"; exit 0; }; sleep 0.1; done; exit 1`,
          "",
          5,
        ),
        cmd(`touch "$CLAUDE_PROJECT_DIR/b"`),
      ],
    });
    await runHooks("PreToolUse", { tool_name: "Bash", tool_input: {}, tool_use_id: "t" }, ctx, signal());
    expect(() => readFileSync(join(dir, "a"))).not.toThrow();
  });

  it("run an identical command once, however many matchers name it", async () => {
    const count = `echo x >> "$CLAUDE_PROJECT_DIR/count"`;
    const { ctx, dir } = contextWith({ PreToolUse: [cmd(count, "Bash"), cmd(count, "Ba.*"), cmd(count)] });
    await runHooks("PreToolUse", { tool_name: "Bash", tool_input: {}, tool_use_id: "t" }, ctx, signal());
    expect(readFileSync(join(dir, "count"), "utf8")).toBe("x\n");
  });

  it("combine permission decisions: deny wins over ask and allow, whatever the order", async () => {
    const decide = (d: string) =>
      cmd(
        `echo '{"hookSpecificOutput":{"permissionDecision":"${d}","permissionDecisionReason":"${d} says"}}'`,
      );
    const { ctx } = contextWith({ PreToolUse: [decide("allow"), decide("deny"), decide("ask")] });
    const out = await runHooks(
      "PreToolUse",
      { tool_name: "Bash", tool_input: {}, tool_use_id: "t" },
      ctx,
      signal(),
    );
    expect(out.permissionDecision).toBe("deny");
    expect(out.permissionReason).toBe("deny says");
  });

  it("UserPromptSubmit: standard output becomes context, exit code 2 drops the prompt", async () => {
    const { ctx } = contextWith({
      UserPromptSubmit: [cmd(`grep -o '"prompt":"[^"]*"' | cut -d'"' -f4 | sed 's/^/seen: /'`)],
    });
    const seen = await runHooks("UserPromptSubmit", { prompt: "fix the bug" }, ctx, signal());
    expect(seen.feedback).toEqual(["seen: fix the bug"]);
    expect(seen.blocked).toBeUndefined();

    const { ctx: strict } = contextWith({
      UserPromptSubmit: [cmd(`echo 'no secrets in prompts' >&2; exit 2`)],
    });
    const blocked = await runHooks("UserPromptSubmit", { prompt: "my password is x" }, strict, signal());
    expect(blocked.blocked).toBe("no secrets in prompts");
  });

  it("SessionStart hooks match on the source; Stop hooks can make the agent go on", async () => {
    const { ctx } = contextWith({
      SessionStart: [cmd("echo fresh start", "startup"), cmd("echo resumed", "resume")],
      Stop: [cmd(`echo '{"decision":"block","reason":"tests still fail"}'`)],
    });
    const start = await runHooks("SessionStart", { source: "startup" }, ctx, signal());
    expect(start.feedback).toEqual(["fresh start"]);
    const stop = await runHooks("Stop", { stop_hook_active: false }, ctx, signal());
    expect(stop.blocked).toBe("tests still fail");
  });

  it("continue: false stops the turn and the call, with the hook's reason", async () => {
    const { ctx } = contextWith({
      PreToolUse: [
        cmd(`echo '{"continue":false,"stopReason":"budget spent","systemMessage":"over budget"}'`),
      ],
    });
    const out = await runHooks(
      "PreToolUse",
      { tool_name: "Bash", tool_input: {}, tool_use_id: "t" },
      ctx,
      signal(),
    );
    expect(out.stopped).toBe("budget spent");
    expect(out.blocked).toBe("budget spent");
    expect(out.systemMessages).toEqual(["over budget"]);
  });

  it("give every event its payload with the common fields", async () => {
    const { ctx, dir } = contextWith({ PreCompact: [cmd(`cat > "$CLAUDE_PROJECT_DIR/p.json"`, "auto")] });
    await runHooks("PreCompact", { trigger: "auto", custom_instructions: "" }, ctx, signal());
    const payload = JSON.parse(readFileSync(join(dir, "p.json"), "utf8"));
    expect(payload).toMatchObject({
      hook_event_name: "PreCompact",
      session_id: ctx.sessionId,
      cwd: dir,
      trigger: "auto",
      permission_mode: ctx.permissionMode,
    });
  });
});
