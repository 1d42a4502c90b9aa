import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createHost, type PlanDecision } from "../../../src/core/host.js";
import { ToolResult } from "../../../src/core/result.js";
import { runTool } from "../../../src/executor/run.js";
import { autoHandler } from "../../../src/permissions/handlers.js";
import { testContext } from "../../helpers/context.js";

type Ctx = ReturnType<typeof testContext>;

async function call(ctx: Ctx, name: string, input: Record<string, unknown>) {
  const result = await runTool(name, input, ctx);
  return { result, text: ToolResult.text(result) };
}

function approving(decision: PlanDecision, shown: string[] = []) {
  return createHost(
    {
      approvePlan: async (plan) => {
        shown.push(plan);
        return decision;
      },
    },
    autoHandler,
  );
}

describe("EnterPlanMode and ExitPlanMode", () => {
  it("plan mode blocks a real Write; an approved plan restores the mode before it and the Write goes through", async () => {
    const shown: string[] = [];
    const ctx = testContext({ permissionMode: "acceptEdits", host: approving({ approved: true }, shown) });
    const file = join(ctx.workingDir, "out.txt");
    const entered = await call(ctx, "EnterPlanMode", {});
    expect(entered.text).toContain("Entered plan mode (was acceptEdits)");
    expect(ctx.permissionMode).toBe("plan");

    const blocked = await call(ctx, "Write", { file_path: file, content: "x\n" });
    expect(blocked.result.isError).toBe(true);
    expect(blocked.text).toContain("plan mode is on");
    expect(blocked.text).toContain("ExitPlanMode");
    expect(existsSync(file)).toBe(false);
    // Reads still run.
    expect((await call(ctx, "Glob", { pattern: "*" })).result.isError).toBe(false);

    const exited = await call(ctx, "ExitPlanMode", {
      plan: "1. Write out.txt",
      allowedPrompts: [{ tool: "Bash", prompt: "run the tests" }],
    });
    expect(exited.result.isError).toBe(false);
    expect(exited.text).toContain("acceptEdits mode now");
    expect(shown[0]).toContain("1. Write out.txt");
    expect(shown[0]).toContain("Bash: run the tests");
    expect(ctx.permissionMode).toBe("acceptEdits");
    expect((await call(ctx, "Write", { file_path: file, content: "x\n" })).result.isError).toBe(false);
    expect(readFileSync(file, "utf8")).toBe("x\n");
  });

  it("a rejected plan keeps plan mode and passes the feedback on", async () => {
    const ctx = testContext({
      permissionMode: "default",
      host: approving({ approved: false, feedback: "add tests" }),
    });
    await call(ctx, "EnterPlanMode", {});
    const rejected = await call(ctx, "ExitPlanMode", { plan: "do it" });
    expect(rejected.result.isError).toBe(true);
    expect(rejected.text).toContain("Their feedback: add tests");
    expect(ctx.permissionMode).toBe("plan");
  });

  it("the approver may pick the mode to continue in", async () => {
    const ctx = testContext({
      permissionMode: "default",
      host: approving({ approved: true, mode: "acceptEdits" }),
    });
    await call(ctx, "EnterPlanMode", {});
    await call(ctx, "ExitPlanMode", { plan: "p" });
    expect(ctx.permissionMode).toBe("acceptEdits");
  });

  it("with nobody to ask it is denied, naming the flag and the rule that allow it", async () => {
    const ctx = testContext({ permissionMode: "plan" });
    const denied = await call(ctx, "ExitPlanMode", { plan: "p" });
    expect(denied.result.isError).toBe(true);
    expect(denied.text).toContain("--permission-mode default");
    expect(denied.text).toContain('"ExitPlanMode" to permissions.allow');
    expect(ctx.permissionMode).toBe("plan");
  });

  it("an allow rule naming ExitPlanMode approves without asking; a session that started in plan mode goes to default", async () => {
    const ctx = testContext({
      permissionMode: "plan",
      rules: [{ rule: "ExitPlanMode", behavior: "allow", source: { scope: "cli", root: "/" } }],
    });
    const approved = await call(ctx, "ExitPlanMode", { plan: "p" });
    expect(approved.result.isError).toBe(false);
    expect(ctx.permissionMode).toBe("default");
  });

  it("says so when the session is not in plan mode, or already is", async () => {
    const ctx = testContext({ permissionMode: "default" });
    const notIn = await call(ctx, "ExitPlanMode", { plan: "p" });
    expect(notIn.result.isError).toBe(true);
    expect(notIn.text).toContain("not in plan mode");
    await call(ctx, "EnterPlanMode", {});
    const again = await call(ctx, "EnterPlanMode", {});
    expect(again.text).toContain("already in plan mode");
  });
});
