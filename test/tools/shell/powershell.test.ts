import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../../src/core/result.js";
import { runTool } from "../../../src/executor/run.js";
import { locateExecutable } from "../../../src/process/shells.js";
import { findTool } from "../../../src/registry.js";
import { emptySettings } from "../../../src/settings/types.js";
import { tempDir, testContext } from "../../helpers/context.js";

const hasPwsh = locateExecutable("pwsh") !== undefined;

async function pwsh(input: Record<string, unknown>, ctx = testContext()) {
  const result = await runTool("PowerShell", input, ctx);
  return { result, text: ToolResult.text(result) };
}

describe("PowerShell", () => {
  it("says clearly when pwsh is not installed", async () => {
    const workingDir = tempDir();
    const ctx = testContext({
      workingDir,
      config: { ...emptySettings(workingDir), env: { PATH: tempDir() } },
    });
    const { result, text } = await pwsh({ command: "Get-Date" }, ctx);
    expect(result.isError).toBe(true);
    expect(text).toMatch(/pwsh\) is not installed/);
  });

  it("exposes the command as a powershell permission subject", () => {
    expect(findTool("PowerShell")!.permissionSubject({ command: "Remove-Item x" }, testContext())).toEqual({
      kind: "command",
      command: "Remove-Item x",
      shell: "powershell",
      cwd: expect.any(String),
    });
  });

  it.skipIf(!hasPwsh)("runs a command and reports exit codes", async () => {
    expect((await pwsh({ command: "Write-Output hello" })).text).toBe("hello");
    const failed = await pwsh({ command: "exit 5" });
    expect(failed.result.isError).toBe(true);
    expect(failed.text).toMatch(/^Exit code 5/);
  });

  it.skipIf(!hasPwsh)(
    "fails when the last cmdlet fails, and passes a native command's exit code through",
    async () => {
      const cmdlet = await pwsh({ command: "Get-Item ./does-not-exist" });
      expect(cmdlet.result.isError).toBe(true);
      expect(cmdlet.text).toMatch(/^Exit code 1\n.*does-not-exist/s);
      const native = await pwsh({ command: "bash -c 'exit 4'" });
      expect(native.text).toMatch(/^Exit code 4/);
      const recovered = await pwsh({ command: "bash -c 'exit 4'; Write-Output fine" });
      expect(recovered.result.isError).toBe(false);
      expect(recovered.text).toBe("fine");
    },
  );

  it.skipIf(!hasPwsh)("keeps the working directory between calls", async () => {
    const ctx = testContext();
    mkdirSync(join(ctx.workingDir, "src"));
    await pwsh({ command: "Set-Location src" }, ctx);
    expect((await pwsh({ command: "(Get-Location).Path" }, ctx)).text).toBe(join(ctx.workingDir, "src"));
  });

  it.skipIf(!hasPwsh)("times out and stops the command", async () => {
    const { text } = await pwsh({ command: "Start-Sleep -Seconds 30", timeout: 500 });
    expect(text).toMatch(/timed out/);
  });
});
