import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type StandIn, type Step, startStandIn, text, toolCall } from "../agent/standin.js";
import { tempDir } from "../helpers/context.js";
import { eventually, survivors, uniqueSeconds } from "../process/ps.js";
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

  it("exits 1 when the model cannot be reached, 2 without an API key; takes ANTHROPIC_AUTH_TOKEN instead of a key", async () => {
    const dir = gitRepo();
    const { env } = await standIn([{ status: 401, message: "invalid x-api-key" }]);
    const failed = await agentCli(["-p", "hi"], env, dir);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/invalid x-api-key/);
    const { env: gateway } = await standIn([text("via the gateway")]);
    const bearer = await agentCli(
      ["-p", "hi"],
      { ...gateway, ANTHROPIC_API_KEY: "", ANTHROPIC_AUTH_TOKEN: "gateway-token" },
      dir,
    );
    expect(bearer.stdout.trim()).toBe("via the gateway");
    const noKey = await agentCli(
      ["-p", "hi"],
      { ANTHROPIC_API_KEY: "", ANTHROPIC_AUTH_TOKEN: "", OPENAI_BASE_URL: "" },
      dir,
    );
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/ANTHROPIC_API_KEY/);
  });
});

describe("cc-tools agent -p: flags, settings and providers", () => {
  it("sends --model and stops at --max-turns, exiting 1 with the error_max_turns result", async () => {
    const dir = gitRepo();
    // A model that never stops calling tools.
    const { stand, env } = await standIn([toolCall("Glob", { pattern: "*.py" })]);
    const run = await agentCli(
      ["-p", "loop", "--model", "opus", "--max-turns", "3", "--output-format", "json"],
      env,
      dir,
    );
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({
      subtype: "error_max_turns",
      is_error: true,
      num_turns: 3,
    });
    expect(stand.requests.length).toBe(3);
    expect(stand.requests.map((r) => r.model)).toEqual(Array(3).fill("claude-opus-5-5"));
  });

  it("chooses the model as Claude Code does: --model, else ANTHROPIC_MODEL, else the model setting", async () => {
    const dir = gitRepo();
    mkdirSync(join(dir, ".claude"));
    writeFileSync(join(dir, ".claude", "settings.json"), JSON.stringify({ model: "claude-from-settings" }));
    const { stand, env } = await standIn([text("ok")]);
    const run = await agentCli(["-p", "hi"], env, dir);
    expect(run.code).toBe(0);
    expect(stand.requests[0].model).toBe("claude-from-settings");
    const { stand: viaEnv, env: env3 } = await standIn([text("ok")]);
    await agentCli(["-p", "hi"], { ...env3, ANTHROPIC_MODEL: "claude-from-env" }, dir);
    expect(viaEnv.requests[0].model).toBe("claude-from-env");
    const { stand: again, env: env2 } = await standIn([text("ok")]);
    await agentCli(["-p", "hi", "--model", "haiku"], { ...env2, ANTHROPIC_MODEL: "claude-from-env" }, dir);
    expect(again.requests[0].model).toBe("claude-haiku-5-5");
  });

  it("puts the CLAUDE.md files in the system prompt: the user's (CLAUDE_CONFIG_DIR), then from the root down", async () => {
    const dir = gitRepo();
    mkdirSync(join(dir, "pkg", ".claude"), { recursive: true });
    mkdirSync(join(dir, ".home"));
    writeFileSync(join(dir, ".home", "CLAUDE.md"), "USER-MEMORY\n");
    writeFileSync(join(dir, "CLAUDE.md"), "REPO-MEMORY\n");
    writeFileSync(join(dir, "pkg", ".claude", "CLAUDE.md"), "PKG-MEMORY\n");
    const { stand, env } = await standIn([text("ok")]);
    const run = await agentCli(["-p", "hi", "--cwd", join(dir, "pkg")], env, dir);
    expect(run.code).toBe(0);
    const system: string = stand.requests[0].system;
    const order = ["USER-MEMORY", "REPO-MEMORY", "PKG-MEMORY"].map((m) => system.indexOf(m));
    expect(order.every((i) => i > 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(system).toContain(`Working directory: ${join(dir, "pkg")}`);
  });

  it("reports a compaction: a compact_boundary line in stream-json, a note on stderr in text", async () => {
    const dir = gitRepo();
    writeFileSync(join(dir, "big.txt"), `${"z".repeat(90)}\n`.repeat(1_900));
    const steps = (): Step[] => [
      // The API reports many more tokens than the request's characters suggest, as a dense language would.
      {
        content: [
          { type: "tool_use", id: "r1", name: "Read", input: { file_path: "big.txt", limit: 900 } },
          {
            type: "tool_use",
            id: "r2",
            name: "Read",
            input: { file_path: "big.txt", offset: 901, limit: 900 },
          },
        ],
        usage: { input_tokens: 190_000 },
      },
      (request) =>
        JSON.stringify(request.messages).includes("Summarise this conversation")
          ? text("SUMMARY: read big.txt")
          : text("answered"),
      text("answered"),
    ];
    const { env } = await standIn(steps());
    const stream = await agentCli(["-p", "read big.txt", "--output-format", "stream-json"], env, dir);
    const lines = stream.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.find((l) => l.subtype === "compact_boundary")).toMatchObject({
      type: "system",
      compact_metadata: { trigger: "auto", how: "summarized" },
    });
    expect(lines.at(-1)).toMatchObject({ type: "result", result: "answered" });
    const { env: env2 } = await standIn(steps());
    const plain = await agentCli(["-p", "read big.txt"], env2, dir);
    expect(plain.stderr).toMatch(/neared the context window; the history was summarised/);
  });

  it("compacts below a smaller --context-window, as a local model needs", async () => {
    const dir = gitRepo();
    writeFileSync(join(dir, "big.txt"), `${"z".repeat(90)}\n`.repeat(900));
    const steps = (): Step[] => [
      {
        content: [{ type: "tool_use", id: "r1", name: "Read", input: { file_path: "big.txt" } }],
        // Far below the default window, and near a 24k one.
        usage: { input_tokens: 23_000 },
      },
      (request) =>
        JSON.stringify(request.messages).includes("Summarise this conversation")
          ? text("SUMMARY: read big.txt")
          : text("answered"),
      text("answered"),
    ];
    const { stand, env } = await standIn(steps());
    const small = await agentCli(["-p", "read big.txt", "--context-window", "24000"], env, dir);
    expect(small.code).toBe(0);
    expect(small.stderr).toMatch(/neared the context window; the history was summarised/);
    expect(JSON.stringify(stand.requests)).toContain("Summarise this conversation");
    const { stand: stand2, env: env2 } = await standIn(steps());
    const standard = await agentCli(["-p", "read big.txt"], env2, dir);
    expect(standard.code).toBe(0);
    expect(JSON.stringify(stand2.requests)).not.toContain("Summarise this conversation");
    const bad = await agentCli(["-p", "x", "--context-window", "lots"], env2, dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--context-window");
  });

  it("drives the tools through an OpenAI-compatible server with --provider openai", async () => {
    const dir = gitRepo();
    const stand = await startStandIn([
      toolCall("Read", { file_path: "greet.py" }),
      toolCall("Edit", { file_path: "greet.py", old_string: "helo", new_string: "hello" }),
      text("fixed"),
    ]);
    stands.push(stand);
    const run = await agentCli(
      [
        "-p",
        "fix greet.py",
        "--provider",
        "openai",
        "--model",
        "qwen3-coder",
        "--permission-mode",
        "acceptEdits",
      ],
      { ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${stand.url}/v1`, OPENAI_API_KEY: "" },
      dir,
    );
    expect(run.stderr).toContain("qwen3-coder");
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe("fixed");
    expect(readFileSync(join(dir, "greet.py"), "utf8")).toBe('print("hello")\n');
    expect(stand.requests[0].model).toBe("qwen3-coder");
    expect(stand.requests[0].messages[0].role).toBe("system");
    // The tool's result came back as a chat-completions `tool` message.
    expect(stand.requests[1].messages.at(-1)).toMatchObject({
      role: "tool",
      content: expect.stringContaining("helo"),
    });
  });

  it("on SIGTERM cancels the run, kills the tool's processes, still prints the result, and exits 1", async () => {
    const dir = gitRepo();
    const seconds = uniqueSeconds();
    const { env } = await standIn([
      toolCall("Bash", { command: `sleep ${seconds} & sleep ${seconds}; echo never` }),
      text("not reached"),
    ]);
    const child = spawn(
      process.execPath,
      [CLI, "agent", "-p", "sleep", "--output-format", "json", "--permission-mode", "bypassPermissions"],
      {
        cwd: dir,
        env: { ...process.env, CC_TOOLS_LOG: "silent", CLAUDE_CONFIG_DIR: join(dir, ".home"), ...env },
      },
    );
    let stdout = "";
    child.stdout.on("data", (d) => (stdout += d));
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(await eventually(() => survivors(`sleep ${seconds}`).length >= 2, 15_000)).toBe(true);
    child.kill("SIGTERM");
    expect(await closed).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ subtype: "error_during_execution", is_error: true });
    expect(await eventually(() => survivors(`sleep ${seconds}`).length === 0)).toBe(true);
  });

  it("on SIGINT also stops a background sub-agent and its tools' processes", async () => {
    const dir = gitRepo();
    const main = uniqueSeconds();
    const sub = uniqueSeconds();
    const { env } = await standIn([
      (request) => {
        const first = JSON.stringify(request.messages[0]);
        if (first.includes("SUBTASK")) return toolCall("Bash", { command: `sleep ${sub}` });
        return request.messages.length === 1
          ? toolCall("Task", { description: "bg", prompt: "SUBTASK", run_in_background: true })
          : toolCall("Bash", { command: `sleep ${main}` });
      },
    ]);
    const child = spawn(
      process.execPath,
      [CLI, "agent", "-p", "go", "--permission-mode", "bypassPermissions"],
      {
        cwd: dir,
        env: { ...process.env, CC_TOOLS_LOG: "silent", CLAUDE_CONFIG_DIR: join(dir, ".home"), ...env },
      },
    );
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    const running = () => survivors(`sleep ${main}`).length > 0 && survivors(`sleep ${sub}`).length > 0;
    expect(await eventually(running, 15_000)).toBe(true);
    child.kill("SIGINT");
    expect(await closed).toBe(1);
    expect(
      await eventually(() => survivors(`sleep ${main}`).length + survivors(`sleep ${sub}`).length === 0),
    ).toBe(true);
  });
});
