import { execFileSync, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type StandIn, type Step, startStandIn, text, toolCall } from "../agent/standin.js";
import { tempDir } from "../helpers/context.js";
import { CLI } from "./cli.js";

const stands: StandIn[] = [];
afterEach(async () => {
  while (stands.length > 0) await stands.pop()!.close();
});

/** Runs the built CLI without blocking this process (the stand-in answers from it). */
function agentCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  input = "",
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "agent", ...args], {
      cwd,
      env: { ...process.env, CC_TOOLS_LOG: "silent", CLAUDE_CONFIG_DIR: join(cwd, ".home"), ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.stdin.end(input);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function gitRepo(): string {
  const dir = tempDir("cc-tools-agent-e2e-");
  execFileSync("git", ["init", "-q"], { cwd: dir });
  writeFileSync(join(dir, "greet.py"), 'print("helo")\n');
  execFileSync("git", ["add", "."], { cwd: dir });
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], { cwd: dir });
  return dir;
}

async function standIn(steps: Step[]) {
  const stand = await startStandIn(steps);
  stands.push(stand);
  return { stand, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: stand.url } };
}

describe("cc-tools agent -p", () => {
  it("reads, edits and checks a file in a git repository, then prints the final answer", async () => {
    const dir = gitRepo();
    const { stand, env } = await standIn([
      toolCall("Read", { file_path: "greet.py" }),
      toolCall("Edit", { file_path: "greet.py", old_string: "helo", new_string: "hello" }),
      toolCall("Bash", { command: "python3 greet.py" }),
      text("Fixed the typo: greet.py now prints hello."),
    ]);
    const run = await agentCli(
      [
        "-p",
        "fix the typo in greet.py",
        "--permission-mode",
        "acceptEdits",
        "--allow",
        "Bash(python3 greet.py)",
      ],
      env,
      dir,
    );
    expect(run.stderr).toContain("Total: $");
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe("Fixed the typo: greet.py now prints hello.");
    expect(readFileSync(join(dir, "greet.py"), "utf8")).toBe('print("hello")\n');
    expect(execFileSync("git", ["diff", "--stat"], { cwd: dir, encoding: "utf8" })).toContain("greet.py");
    // The command's output went back to the model.
    expect(JSON.stringify(stand.requests.at(-1).messages.at(-1))).toContain("hello");
    // The system prompt carries the environment and git status.
    expect(stand.requests[0].system).toContain(dir);
    expect(stand.requests[0].system).toContain("Branch:");
  });

  it("prints one JSON result with --output-format json, and every message with stream-json", async () => {
    const dir = gitRepo();
    const { env } = await standIn([text("just text")]);
    const json = await agentCli(["-p", "hi", "--output-format", "json"], env, dir);
    const result = JSON.parse(json.stdout);
    expect(result).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "just text",
      num_turns: 1,
    });
    expect(result.total_cost_usd).toBeGreaterThan(0);

    const { env: env2 } = await standIn([toolCall("Glob", { pattern: "*.py" }), text("one file")]);
    const stream = await agentCli(
      ["-p", "-", "--output-format", "stream-json"],
      env2,
      dir,
      "list python files",
    );
    const lines = stream.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: "system", subtype: "init" });
    expect(lines.map((l) => l.type)).toEqual(["system", "user", "assistant", "user", "assistant", "result"]);
    expect(lines.at(-1).result).toBe("one file");
  });

  it("refuses what the rules do not allow, and the model hears why", async () => {
    const dir = gitRepo();
    const { stand, env } = await standIn([
      toolCall("Bash", { command: "rm greet.py" }),
      text("I was not allowed to delete it."),
    ]);
    // A deny rule holds whatever the mode and the sandbox allow.
    const run = await agentCli(["-p", "delete greet.py", "--deny", "Bash(rm:*)"], env, dir);
    expect(run.code).toBe(0);
    expect(readFileSync(join(dir, "greet.py"), "utf8")).toContain("helo");
    expect(JSON.stringify(stand.requests[1].messages.at(-1))).toMatch(/denied/);
  });

  it("exits 1 when the model cannot be reached, 2 without an API key", async () => {
    const dir = gitRepo();
    const { env } = await standIn([{ status: 401, message: "invalid x-api-key" }]);
    const failed = await agentCli(["-p", "hi"], env, dir);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/invalid x-api-key/);
    const noKey = await agentCli(["-p", "hi"], { ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: "" }, dir);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/ANTHROPIC_API_KEY/);
  });
});
