import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/context.js";
import { bash, sandboxContext, sandboxSettings } from "./helpers.js";

/** Hooks are the user's own commands: outside the sandbox unless sandbox.sandboxHooks says otherwise. */
describe("hooks and the sandbox", () => {
  function withHook(sandboxHooks: boolean) {
    const ws = tempDir();
    const outside = tempDir("cc-tools-hook-outside-");
    const marker = join(outside, "hook-ran");
    const config = sandboxSettings(ws, { sandboxHooks }, [], {
      hooks: {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `touch ${marker}` }] }],
        PostToolUse: [],
      },
    });
    return { ctx: sandboxContext(ws, config), marker };
  }

  it("run outside the sandbox by default: a hook may write where commands may not", async () => {
    const { ctx, marker } = withHook(false);
    const { result } = await bash(ctx, "echo hi");
    expect(result.isError).toBe(false);
    expect(existsSync(marker)).toBe(true);
  });

  it("run inside it with sandbox.sandboxHooks", async () => {
    const { ctx, marker } = withHook(true);
    await bash(ctx, "echo hi");
    expect(existsSync(marker)).toBe(false);
  });
});
