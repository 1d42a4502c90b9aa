import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { tempDir } from "../helpers/context.js";
import { bash, sandboxContext, sandboxSettings } from "./helpers.js";

/**
 * bubblewrap refuses to start a command when a mount point vanished between the policy and the mount (a
 * socket dir under /tmp, a placeholder another session removed); the command never ran, so one more start
 * is safe. A stand-in `bwrap` first on the PATH fails that way as many times as its count file says, then
 * runs the real one: the same refusal, at a moment the test chooses.
 */
function workspaceWithFlakyBwrap() {
  const ws = tempDir("cc-tools-sandbox-retry-ws-");
  const bin = tempDir("cc-tools-sandbox-retry-bin-");
  const failures = join(bin, "failures");
  const real = execFileSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).trim();
  writeFileSync(
    join(bin, "bwrap"),
    "#!/bin/sh\n" +
      `n=$(cat '${failures}' 2>/dev/null || echo 0)\n` +
      `if [ "$n" -gt 0 ]; then echo $((n - 1)) > '${failures}'; ` +
      'echo "bwrap: Can\'t mkdir /tmp/cc-tools-gone: No such file or directory" >&2; exit 1; fi\n' +
      `exec '${real}' "$@"\n`,
  );
  chmodSync(join(bin, "bwrap"), 0o755);
  const config = sandboxSettings(ws, {}, [], { env: { PATH: `${bin}:${process.env.PATH}` } });
  const ctx = sandboxContext(ws, config);
  const failNext = (times: number) => writeFileSync(failures, `${times}\n`);
  const runs = () => (existsSync(join(ws, "runs")) ? readFileSync(join(ws, "runs"), "utf8") : "");
  return { ctx, failNext, runs };
}

async function finished(ctx: ReturnType<typeof sandboxContext>, taskId: string) {
  const output = await runTool("TaskOutput", { task_id: taskId, block: true, timeout: 20_000 }, ctx);
  return { text: ToolResult.text(output), metadata: output.metadata as Record<string, unknown> };
}

describe("a sandbox that could not be set up", () => {
  it("is set up once more for a foreground command, which then runs once", async () => {
    const { ctx, failNext, runs } = workspaceWithFlakyBwrap();
    // The first command probes the sandbox through the stand-in, which passes it through.
    expect((await bash(ctx, "echo ready")).text).toBe("ready");
    failNext(1);
    const { result, text } = await bash(ctx, "echo ran >> runs; echo done");
    expect(result.isError).toBe(false);
    expect(text).toBe("done");
    expect(result.metadata).toMatchObject({ sandboxed: true });
    expect(runs()).toBe("ran\n");
  });

  it("is set up once more for a background command, whose output holds only its own run", async () => {
    const { ctx, failNext, runs } = workspaceWithFlakyBwrap();
    expect((await bash(ctx, "echo ready")).text).toBe("ready");
    failNext(1);
    const started = await bash(ctx, "echo ran >> runs; echo bg-done", { run_in_background: true });
    expect(started.result.isError).toBe(false);
    const { taskId, outputFile } = started.result.metadata as { taskId: string; outputFile: string };
    const { text, metadata } = await finished(ctx, taskId);
    expect(text).toContain("bg-done");
    expect(text).not.toContain("bwrap:");
    expect(metadata).toMatchObject({ status: "completed", exitCode: 0 });
    expect(readFileSync(outputFile, "utf8")).toBe("bg-done\n");
    expect(runs()).toBe("ran\n");
  });

  it("fails closed when the second start fails too: the command did not run, and the result says why", async () => {
    const { ctx, failNext, runs } = workspaceWithFlakyBwrap();
    expect((await bash(ctx, "echo ready")).text).toBe("ready");
    failNext(2);
    const foreground = await bash(ctx, "echo ran >> runs");
    expect(foreground.result.isError).toBe(true);
    expect(foreground.text).toContain("bwrap: Can't mkdir");
    expect(foreground.text).toContain("The sandbox could not be set up for this command");
    failNext(2);
    const started = await bash(ctx, "echo ran >> runs", { run_in_background: true });
    const { taskId } = started.result.metadata as { taskId: string };
    const { text, metadata } = await finished(ctx, taskId);
    expect(text).toContain("bwrap: Can't mkdir");
    expect(metadata).toMatchObject({ status: "failed", exitCode: 1 });
    expect(runs()).toBe("");
  });

  it("is told apart from a command that printed a bwrap line itself: that command ran, and runs once", async () => {
    const { ctx, runs } = workspaceWithFlakyBwrap();
    const own = 'echo ran >> runs; echo "bwrap: Can\'t mkdir /x: No such file or directory" >&2; exit 1';
    const foreground = await bash(ctx, own);
    expect(foreground.result.isError).toBe(true);
    expect(foreground.text).toContain("bwrap: Can't mkdir /x");
    expect(foreground.text).not.toContain("could not be set up");
    expect(runs()).toBe("ran\n");
    const started = await bash(ctx, own, { run_in_background: true });
    const { taskId } = started.result.metadata as { taskId: string };
    const { metadata } = await finished(ctx, taskId);
    expect(metadata).toMatchObject({ status: "failed", exitCode: 1 });
    expect(runs()).toBe("ran\nran\n");
  });

  it("still runs a command whose start mark cannot be written, in a POSIX shell too", async () => {
    const ws = tempDir("cc-tools-sandbox-retry-ws-");
    const config = sandboxSettings(ws, {}, [], { env: { POSIXLY_CORRECT: "1" } });
    const ctx = sandboxContext(ws, config);
    // The session's temp dir, where the mark goes, read-only inside the sandbox.
    config.sandbox.filesystem.denyWrite.push(ctx.session.dir);
    const { result, text } = await bash(ctx, "echo ran >> runs; echo done");
    expect(result.isError).toBe(false);
    expect(text).toBe("done");
    expect(readFileSync(join(ws, "runs"), "utf8")).toBe("ran\n");
  });
});

describe("a sandbox whose check does not finish in time", () => {
  it("refuses the command, which does not run, and is checked again a little later", async () => {
    const ws = tempDir("cc-tools-sandbox-probe-ws-");
    const bin = tempDir("cc-tools-sandbox-probe-bin-");
    const hang = join(bin, "hang");
    const calls = join(bin, "calls");
    const real = execFileSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).trim();
    // A stand-in bwrap that hangs, as one on a machine too busy to answer would, while `hang` exists.
    writeFileSync(
      join(bin, "bwrap"),
      `#!/bin/sh\necho "$1" >> '${calls}'\n[ "$1" != --version ] && [ -e '${hang}' ] && exec sleep 30\nexec '${real}' "$@"\n`,
    );
    chmodSync(join(bin, "bwrap"), 0o755);
    writeFileSync(hang, "");
    const ctx = sandboxContext(
      ws,
      sandboxSettings(ws, {}, [], { env: { PATH: `${bin}:${process.env.PATH}` } }),
    );
    const probes = () =>
      readFileSync(calls, "utf8")
        .split("\n")
        .filter((line) => line === "--version").length;
    const refused = await bash(ctx, "touch made");
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/not run: the check that the OS sandbox works did not finish within 5 s/);
    expect(existsSync(join(ws, "made"))).toBe(false);
    expect(probes()).toBe(1);
    // Right after, the answer stands: refused again, without another probe's wait.
    rmSync(hang);
    expect((await bash(ctx, "touch made")).text).toMatch(/did not finish within 5 s/);
    expect(existsSync(join(ws, "made"))).toBe(false);
    expect(probes()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const { result, text } = await bash(ctx, "touch made && echo ran");
    expect(text).toBe("ran");
    expect(result.metadata).toMatchObject({ sandboxed: true });
    expect(existsSync(join(ws, "made"))).toBe(true);
    expect(probes()).toBe(2);
  });
});
