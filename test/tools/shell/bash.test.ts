import { mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createToolContext } from "../../../src/context.js";
import type { Progress } from "../../../src/core/context.js";
import { ToolResult } from "../../../src/core/result.js";
import { Session } from "../../../src/core/session.js";
import { runTool } from "../../../src/executor/run.js";
import { findTool } from "../../../src/registry.js";
import { emptySettings } from "../../../src/settings/types.js";
import { tempDir, testContext } from "../../helpers/context.js";
import { eventually, survivors, uniqueSeconds } from "../../process/ps.js";

async function bash(input: Record<string, unknown>, ctx = testContext()) {
  const result = await runTool("Bash", input, ctx);
  return { result, text: ToolResult.text(result) };
}

describe("Bash", () => {
  it("returns stdout and stderr interleaved in order", async () => {
    const { result, text } = await bash({ command: "echo one; echo two >&2; echo three; echo four >&2" });
    expect(result.isError).toBe(false);
    expect(text).toBe("one\ntwo\nthree\nfour");
  });

  it("reports a non-zero exit as an error that starts with the exit code", async () => {
    const { result, text } = await bash({ command: "echo failing; exit 7" });
    expect(result.isError).toBe(true);
    expect(text).toBe("Exit code 7\nfailing");
    expect(result.metadata).toMatchObject({ exitCode: 7 });
  });

  it("says so when there is no output, and trims blank leading lines and trailing newlines", async () => {
    expect((await bash({ command: "true" })).text).toMatch(/no output/);
    expect((await bash({ command: "printf '\\n\\n  \\nbody\\n\\n\\n'" })).text).toBe("body");
  });

  it("closes stdin, so reads return at once", async () => {
    const { text } = await bash({ command: 'read x; echo "read returned: [$x]"' });
    expect(text).toBe("read returned: []");
  });

  it("runs with a non-interactive environment", async () => {
    const { text } = await bash({ command: "echo $GIT_TERMINAL_PROMPT $PAGER $CI $DEBIAN_FRONTEND" });
    expect(text).toBe("0 cat 1 noninteractive");
  });

  it("keeps the working directory between calls but not variables", async () => {
    const ctx = testContext();
    mkdirSync(join(ctx.workingDir, "src"));
    await bash({ command: "cd src && export FOO=bar" }, ctx);
    expect((await bash({ command: 'pwd; echo "foo=$FOO"' }, ctx)).text).toBe(
      `${join(ctx.workingDir, "src")}\nfoo=`,
    );
  });

  it("keeps the directory even when the command exits early, with its exit code", async () => {
    const ctx = testContext();
    mkdirSync(join(ctx.workingDir, "a"));
    const { result } = await bash({ command: "cd a; exit 3" }, ctx);
    expect(result.metadata).toMatchObject({ exitCode: 3, cwd: join(ctx.workingDir, "a") });
    expect((await bash({ command: "pwd" }, ctx)).text).toBe(join(ctx.workingDir, "a"));
  });

  it("undoes a cd out of the allowed directories and says so", async () => {
    const ctx = testContext();
    const { text } = await bash({ command: "cd / && pwd" }, ctx);
    expect(text).toMatch(/^\/\n/);
    expect(text).toMatch(/outside the allowed directories/);
    expect((await bash({ command: "pwd" }, ctx)).text).toBe(ctx.workingDir);
  });

  it("judges a cd by where it really leads: `..name` dirs are inside, links out are outside", async () => {
    const ctx = testContext();
    mkdirSync(join(ctx.workingDir, "..cache"));
    symlinkSync(tempDir(), join(ctx.workingDir, "out"));
    expect((await bash({ command: "cd ..cache && pwd" }, ctx)).text).toBe(join(ctx.workingDir, "..cache"));
    await bash({ command: "cd .." }, ctx);
    expect((await bash({ command: "cd out" }, ctx)).text).toMatch(/outside the allowed directories/);
    expect((await bash({ command: "pwd" }, ctx)).text).toBe(ctx.workingDir);
  });

  it("allows a cd into an additional directory", async () => {
    const extra = tempDir();
    const workingDir = tempDir();
    const ctx = testContext({
      workingDir,
      config: { ...emptySettings(workingDir), additionalDirectories: [extra] },
    });
    await bash({ command: `cd ${extra}` }, ctx);
    expect((await bash({ command: "pwd" }, ctx)).text).toBe(extra);
  });

  it("saves the directory with the session, so the next process of a named session keeps it", async () => {
    const workingDir = tempDir();
    mkdirSync(join(workingDir, "sub"));
    const first = testContext({ workingDir });
    await bash({ command: "cd sub" }, first);
    const saved = first.session.snapshot();
    const second = testContext({ workingDir, session: new Session({ saved, dir: join(tempDir(), "s") }) });
    expect((await bash({ command: "pwd" }, second)).text).toBe(join(workingDir, "sub"));
  });

  it("falls back to the workspace when the remembered directory is gone", async () => {
    const ctx = testContext();
    mkdirSync(join(ctx.workingDir, "tmp"));
    await bash({ command: "cd tmp" }, ctx);
    const { text } = await bash({ command: "rmdir ../tmp; true" }, ctx);
    expect(text).toMatch(/no output/);
    const after = await bash({ command: "pwd" }, ctx);
    expect(after.text).toMatch(new RegExp(`^${ctx.workingDir}\\n`));
    expect(after.text).toMatch(/is gone or no longer allowed/);
  });

  it("kills a command at its time-out, with everything it started, and keeps the output so far", async () => {
    const secs = uniqueSeconds();
    const { result, text } = await bash({
      command: `echo begun; sleep ${secs} & sleep ${secs}`,
      timeout: 500,
    });
    expect(result.isError).toBe(true);
    expect(text).toMatch(/timed out after 500 ms/);
    expect(text).toMatch(/Output so far:\nbegun/);
    expect(text).toMatch(/run_in_background/);
    expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
  });

  it("takes its default time-out from BASH_DEFAULT_TIMEOUT_MS in the settings' env", async () => {
    const workingDir = tempDir();
    const ctx = testContext({
      workingDir,
      config: { ...emptySettings(workingDir), env: { BASH_DEFAULT_TIMEOUT_MS: "300" } },
    });
    const { text } = await bash({ command: "sleep 20" }, ctx);
    expect(text).toMatch(/timed out after 300 ms/);
  });

  it("caps the time-out at BASH_MAX_TIMEOUT_MS", async () => {
    const workingDir = tempDir();
    const ctx = testContext({
      workingDir,
      config: { ...emptySettings(workingDir), env: { BASH_MAX_TIMEOUT_MS: "300" } },
    });
    const { text } = await bash({ command: "sleep 20", timeout: 600_000 }, ctx);
    expect(text).toMatch(/timed out after 300 ms/);
  });

  it("says when the requested time-out was above the maximum and the maximum was used", async () => {
    const workingDir = tempDir();
    const ctx = testContext({
      workingDir,
      config: { ...emptySettings(workingDir), env: { BASH_MAX_TIMEOUT_MS: "5000" } },
    });
    const { result, text } = await bash({ command: "echo quick", timeout: 9_000 }, ctx);
    expect(result.isError).toBe(false);
    expect(text).toMatch(/^quick\n\nThe requested timeout of 9 s is above the maximum of 5 s/);
    expect((await bash({ command: "echo quick", timeout: 4_000 }, ctx)).text).toBe("quick");
  });

  it("reports progress while a command runs: elapsed time, output size and its last line", async () => {
    const secs = uniqueSeconds();
    const controller = new AbortController();
    const reports: Progress[] = [];
    const result = await runTool(
      "Bash",
      { command: `printf 'compiling module 3 of 9\\n'; sleep ${secs}` },
      testContext(),
      {
        signal: controller.signal,
        onProgress: (progress) => {
          reports.push(progress);
          controller.abort();
        },
      },
    );
    expect(result.isError).toBe(true);
    expect(reports[0]!.progress).toBeGreaterThanOrEqual(1);
    expect(reports[0]!.message).toMatch(
      /^running for \d+ s, 24 chars of output; last line: compiling module 3 of 9$/,
    );
    expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
  });

  it("stops a command waiting at a prompt within seconds and says how to avoid it", async () => {
    const secs = uniqueSeconds();
    // The answer is read from a FIFO nobody writes: blocked on input from outside, as a real prompt is.
    const command = `sleep ${secs} & f=$(mktemp -u); mkfifo "$f"; printf 'Continue? [y/N] '; read -r answer < "$f"`;
    const { result, text } = await bash({ command });
    expect(result.isError).toBe(true);
    expect(result.metadata).toMatchObject({ endedBy: "stalled" });
    expect(text).toMatch(/Continue\? \[y\/N\]/);
    expect(text).toMatch(/--yes/);
    expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
  });

  it("stops a full-screen program (like vim without a terminal) within seconds, not at the time limit", async () => {
    const secs = uniqueSeconds();
    // What vim does with no terminal: switch to the alternate screen, then nap between polls of stdin.
    const command = `printf '\\033[?1049h\\033[H~'; sleep ${secs}`;
    const { result, text } = await bash({ command });
    expect(result.isError).toBe(true);
    expect(result.metadata).toMatchObject({ endedBy: "stalled" });
    expect(text).toMatch(/full-screen program/);
    expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
  });

  it("lets a quiet command that left the full screen it opened finish its work", async () => {
    const command = "printf '\\033[?1049hpage\\033[?1049l'; sleep 4; echo finished";
    const { result, text } = await bash({ command });
    expect(result.isError, text).toBe(false);
    expect(text).toContain("finished");
  });

  it("lets a pipeline whose reader is fed by its own writer finish, prompt-like line or not", async () => {
    const { result, text } = await bash({ command: '(echo "Migrate? [y/N]"; sleep 4; echo done) | cat' });
    expect(result.isError, text).toBe(false);
    expect(text).toContain("done");
  });

  it("lets a quiet command that printed a prompt-like line but is not reading finish its work", async () => {
    const ctx = testContext();
    const command = 'echo "Proceed with the migration [y/N]"; sleep 4; echo done > done.txt; echo finished';
    const { result, text } = await bash({ command }, ctx);
    expect(result.isError, text).toBe(false);
    expect(text).toContain("finished");
  });

  it("spills long output to a file and shows head, tail and the path", async () => {
    const ctx = testContext();
    const { result, text } = await bash({ command: "seq 1 20000" }, ctx);
    expect(result.isError).toBe(false);
    const file = result.metadata?.spilledTo as string;
    expect(file.startsWith(ctx.session.dir)).toBe(true);
    expect(text).toContain(file);
    expect(text.startsWith("1\n2\n3\n")).toBe(true);
    expect(text.endsWith("19999\n20000")).toBe(true);
    expect(text.length).toBeLessThan(15_000);
    expect(readFileSync(file, "utf8")).toBe(`${Array.from({ length: 20000 }, (_, i) => i + 1).join("\n")}\n`);
  });

  it("keeps memory bounded while a command floods its output", async () => {
    global.gc?.();
    const before = process.memoryUsage().rss;
    const { result, text } = await bash({ command: "yes | head -c 50000000" });
    const grown = process.memoryUsage().rss - before;
    expect(result.isError).toBe(false);
    expect(result.metadata).toMatchObject({ fullLength: 50_000_000 });
    expect(text.length).toBeLessThan(15_000);
    expect(grown).toBeLessThan(64 * 1024 * 1024);
  });

  it("stops processes a foreground command leaves behind, and says so", async () => {
    const secs = uniqueSeconds();
    const { text } = await bash({ command: `sleep ${secs} & echo started` });
    expect(text).toMatch(/^started\n\n.*left running were stopped/);
    expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
  });

  it("stops the command when the call is cancelled", async () => {
    const secs = uniqueSeconds();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const result = await runTool("Bash", { command: `sleep ${secs}` }, testContext(), {
      signal: controller.signal,
    });
    expect(result.isError).toBe(true);
    expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
  });

  it("runs a command longer than one argument may be (a big heredoc), keeping its exit code and cwd", async () => {
    const ctx = testContext();
    mkdirSync(join(ctx.workingDir, "sub"));
    const body = "x".repeat(200_000);
    const { result, text } = await bash(
      { command: `cd sub\ncat > big.txt <<'EOF'\n${body}\nEOF\nwc -c < big.txt\nexit 5` },
      ctx,
    );
    expect(text).toBe("Exit code 5\n200001");
    expect(result.metadata).toMatchObject({ exitCode: 5, cwd: join(ctx.workingDir, "sub") });
    expect(readFileSync(join(ctx.workingDir, "sub", "big.txt"), "utf8")).toBe(`${body}\n`);
    expect(readdirSync(ctx.session.dir).filter((f) => f.startsWith("command-"))).toEqual([]);
  });

  it("rejects an empty command before running anything", async () => {
    const { result, text } = await bash({ command: "   " });
    expect(result.isError).toBe(true);
    expect(text).toMatch(/<tool_use_error>.*command is empty/);
  });

  it("accepts dangerouslyDisableSandbox and description", async () => {
    const { text } = await bash({
      command: "echo ok",
      description: "say ok",
      dangerouslyDisableSandbox: true,
    });
    expect(text).toBe("ok");
  });

  it("exposes the command for permission rules and never runs concurrently", () => {
    const tool = findTool("Bash")!;
    const ctx = testContext();
    expect(tool.permissionSubject({ command: "ls && rm x" }, ctx)).toEqual({
      kind: "command",
      command: "ls && rm x",
      shell: "bash",
      cwd: ctx.workingDir,
    });
    expect(tool.isConcurrencySafe({ command: "ls" })).toBe(false);
  });

  it("goes through the permission check with the command", async () => {
    const workingDir = tempDir();
    const ctx = createToolContext({
      workingDir,
      permissionMode: "default",
      rules: [{ rule: "Bash(rm:*)", behavior: "deny", source: { scope: "cli", root: workingDir } }],
    });
    const { result } = await bash({ command: "rm -rf nothing" }, ctx);
    expect(result.isError).toBe(true);
    expect(ToolResult.text(result)).toMatch(/denied/);
    await ctx.session.dispose();
  });

  it("resolves symlinked workspaces when checking the directory", async () => {
    const ctx = testContext();
    mkdirSync(join(ctx.workingDir, "deep"));
    await bash({ command: "cd deep" }, ctx);
    expect((await bash({ command: "pwd -P" }, ctx)).text).toBe(realpathSync(join(ctx.workingDir, "deep")));
  });
});
