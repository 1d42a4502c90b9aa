import { execSync, spawnSync } from "node:child_process";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allTools } from "../../src/registry.js";
import { tempDir } from "../helpers/context.js";
import { CLI, cli } from "./cli.js";

function workspace() {
  const dir = tempDir();
  const home = tempDir("cc-tools-home-");
  return { dir, env: { CLAUDE_CONFIG_DIR: home, CC_TOOLS_STATE_DIR: join(home, "state") } };
}

describe("cc-tools CLI", () => {
  it("prints its version and help", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(cli(["--version"]).stdout.trim()).toBe(pkg.version);
    const help = cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/list[\s\S]*schema[\s\S]*run/);
    expect(cli(["run", "--help"]).stdout).toContain("--permission-mode");
  });

  it("lists every tool with its level", () => {
    const { stdout, code } = cli(["list"]);
    expect(code).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(allTools().length);
    for (const tool of allTools())
      expect(stdout).toMatch(new RegExp(`^${tool.name} +${tool.permissionLevel} `, "m"));
    // Tools the terminal cannot serve say so, with the reason.
    expect(stdout).toMatch(
      /^SendMessage +none +\(unavailable here\) it needs other conversations to message/m,
    );
    expect(stdout).toMatch(
      /^CronCreate +none +\(unavailable here\) it needs a conversation to run prompts in/m,
    );
    // Not at a terminal (the test's pipes), `run` has nobody to ask: AskUserQuestion is unavailable to it.
    expect(stdout).toMatch(/^AskUserQuestion +none +\(unavailable here\)/m);
    const asked = cli([
      "run",
      "AskUserQuestion",
      JSON.stringify({
        questions: [
          {
            question: "Pick?",
            header: "Pick",
            multiSelect: false,
            options: [
              { label: "A", description: "a" },
              { label: "B", description: "b" },
            ],
          },
        ],
      }),
    ]);
    expect(asked.code).toBe(1);
  });

  it("shows PowerShell as unavailable, with the reason, where pwsh is not on PATH", () => {
    const noPwsh = tempDir("cc-tools-path-");
    symlinkSync(process.execPath, join(noPwsh, "node"));
    for (const bin of ["bash", "sh"])
      symlinkSync(execSync(`command -v ${bin}`).toString().trim(), join(noPwsh, bin));
    const without = cli(["list", "--json"], { env: { PATH: noPwsh } });
    const row = (
      JSON.parse(without.stdout) as Array<{ name: string; available: boolean; unavailableReason?: string }>
    ).find((r) => r.name === "PowerShell")!;
    expect(row.available).toBe(false);
    expect(row.unavailableReason).toContain("PowerShell (pwsh) is not installed");
    expect(cli(["list"], { env: { PATH: noPwsh } }).stdout).toMatch(
      /^PowerShell +execute +\(unavailable here\)/m,
    );

    writeFileSync(join(noPwsh, "pwsh"), "#!/bin/sh\n", { mode: 0o755 });
    const withPwsh = JSON.parse(cli(["list", "--json"], { env: { PATH: noPwsh } }).stdout) as Array<{
      name: string;
      available: boolean;
    }>;
    expect(withPwsh.find((r) => r.name === "PowerShell")!.available).toBe(true);
  });

  it("stops quietly when its output pipe closes early", () => {
    const result = spawnSync("bash", ["-c", `"${process.execPath}" "${CLI}" list | head -1`], {
      encoding: "utf8",
    });
    expect(result.stdout.split("\n").filter(Boolean)).toHaveLength(1);
    expect(result.stderr).not.toContain("EPIPE");
  });

  it("prints a tool's JSON Schema and rejects unknown tools with exit code 2", () => {
    const tool = allTools()[0]!;
    const schema = cli(["schema", tool.name]);
    expect(JSON.parse(schema.stdout)).toEqual(tool.toDefinition().input_schema);
    const unknown = cli(["schema", tool.name.toLowerCase()]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`Did you mean ${tool.name}`);
  });

  it("exits 2 on bad usage: malformed JSON, unknown command, bad mode", () => {
    const badJson = cli(["run", "Read", "{nope"]);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain("not valid JSON");
    expect(cli(["frobnicate"]).code).toBe(2);
    const badRule = cli(["run", "Read", "{}", "--deny", "Read(./x"]);
    expect(badRule.code).toBe(2);
    expect(badRule.stderr).toContain("--deny: Invalid permission rule");
    const badMode = cli(["run", "Read", "{}", "--permission-mode", "yolo"]);
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toContain("yolo");
  });

  it("exits 1 with a clear message when the tool input is invalid", () => {
    const { dir, env } = workspace();
    const result = cli(["run", "Read", '{"file_path": 7, "colour": "red"}'], { cwd: dir, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Read input is invalid");
    expect(result.stderr).toContain("`file_path` must be string");
    expect(result.stderr).toContain("unexpected parameter `colour`");
  });

  it("runs Read end to end, with input from stdin too", () => {
    const { dir, env } = workspace();
    writeFileSync(join(dir, "hello.txt"), "one\ntwo\n");
    const inline = cli(["run", "Read", '{"file_path": "hello.txt"}'], { cwd: dir, env });
    expect(inline.code).toBe(0);
    expect(inline.stdout).toContain("1\tone\n2\ttwo");
    const piped = cli(["run", "Read", "-", "--cwd", dir, "--json"], {
      input: '{"file_path": "hello.txt"}',
      env,
    });
    expect(JSON.parse(piped.stdout)).toMatchObject({ isError: false });
  });

  it("shows the permission trace in --json: the decision and every rule that matched", () => {
    const { dir, env } = workspace();
    const input = JSON.stringify({ command: "echo hi && git status" });
    const result = cli(
      ["run", "Bash", input, "--json", "--allow", "Bash(echo:*)", "--allow", "Bash(git status)"],
      {
        cwd: dir,
        env,
      },
    );
    const trace = JSON.parse(result.stdout).metadata.permissionTrace;
    expect(trace.behavior).toBe("allow");
    expect(trace.matchedRules.map((r: { rule: string }) => r.rule)).toEqual([
      "Bash(echo:*)",
      "Bash(git status)",
    ]);
  });

  it("says that a background task ends with the one-shot command", () => {
    const { dir, env } = workspace();
    const input = JSON.stringify({ command: "sleep 30", run_in_background: true });
    const result = cli(["run", "Bash", input, "--permission-mode", "bypassPermissions"], { cwd: dir, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("running in the background as task shell_1");
    expect(result.stderr).toContain("background task shell_1 ends now, with this command");
  });

  it("reports a malformed settings file as a usage error naming the file", () => {
    const { dir, env } = workspace();
    writeFileSync(join(env.CLAUDE_CONFIG_DIR, "settings.json"), "{ permissions: }");
    const result = cli(["run", "Read", '{"file_path": "x"}'], { cwd: dir, env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/settings\.json is not valid JSON at line 1, column 3/);
  });
});
