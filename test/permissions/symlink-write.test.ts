import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { tempDir, testContext } from "../helpers/context.js";

describe("a write through symlinks lands where its permission was judged", () => {
  it("applies `..` after a link to the link's target, for the check and the write alike", async () => {
    // ws/x -> d1/d2 and ws/link -> x/../../escaped.txt. The kernel takes x/.. as d1 (the parent of x's
    // target), so the link names ws/escaped.txt; read lexically it would name outer/escaped.txt.
    const outer = tempDir();
    const ws = join(outer, "ws");
    mkdirSync(join(ws, "d1", "d2"), { recursive: true });
    symlinkSync("d1/d2", join(ws, "x"));
    symlinkSync("x/../../escaped.txt", join(ws, "link"));
    const ctx = testContext({ workingDir: ws, permissionMode: "acceptEdits" });
    const result = await runTool("Write", { file_path: "link", content: "data\n" }, ctx);
    expect(result.isError, ToolResult.text(result)).toBe(false);
    expect(existsSync(join(outer, "escaped.txt"))).toBe(false);
    expect(readFileSync(join(ws, "escaped.txt"), "utf8")).toBe("data\n");
  });

  it("asks before writing through a link that leads outside the workspace", async () => {
    const outer = tempDir();
    const ws = join(outer, "ws");
    mkdirSync(ws);
    symlinkSync("../outside.txt", join(ws, "link"));
    const ctx = testContext({ workingDir: ws, permissionMode: "acceptEdits" });
    const result = await runTool("Write", { file_path: "link", content: "data\n" }, ctx);
    expect(result.isError).toBe(true);
    expect(ToolResult.text(result)).toContain("denied");
    expect(existsSync(join(outer, "outside.txt"))).toBe(false);
  });
});
