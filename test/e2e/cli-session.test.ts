import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/context.js";
import { cli } from "./cli.js";

/** A workspace and a private home (user settings, session state) for one test. */
function workspace() {
  const dir = tempDir();
  const home = tempDir("cc-tools-home-");
  mkdirSync(join(dir, ".claude"));
  const env = { CLAUDE_CONFIG_DIR: home, CC_TOOLS_STATE_DIR: join(home, "state"), CI: "1" };
  const run = (tool: string, input: object, ...flags: string[]) =>
    cli(["run", tool, JSON.stringify(input), ...flags], { cwd: dir, env });
  const settings = (file: "user" | "project" | "local", value: object) =>
    writeFileSync(
      file === "user"
        ? join(home, "settings.json")
        : join(dir, ".claude", file === "project" ? "settings.json" : "settings.local.json"),
      JSON.stringify(value),
    );
  return { dir, home, env, run, settings };
}

describe("cc-tools run: usage errors exit 2", () => {
  it("for an unknown tool and a missing --cwd directory, saying what to do", () => {
    const { run, dir } = workspace();
    const unknown = run("Raed", {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No tool named "Raed". Did you mean Read?');
    const missing = run("Read", { file_path: "x" }, "--cwd", join(dir, "nope"));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--cwd ${join(dir, "nope")} is not an existing directory`);
  });
});

describe("cc-tools run --session", () => {
  it("keeps the shell's directory and the files read between runs, per session name", () => {
    const { dir, run } = workspace();
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "src", "a.txt"), "old\n");
    const allow = ["--allow", "Bash(cd:*)", "--allow", "Bash(pwd)"];
    expect(run("Bash", { command: "cd src" }, "--session", "s1", ...allow).code).toBe(0);
    expect(run("Bash", { command: "pwd" }, "--session", "s1", ...allow).stdout.trim()).toBe(join(dir, "src"));
    expect(run("Bash", { command: "pwd" }, "--session", "s2", ...allow).stdout.trim()).toBe(dir);

    expect(run("Read", { file_path: "src/a.txt" }, "--session", "s1").code).toBe(0);
    const edit = { file_path: "src/a.txt", old_string: "old", new_string: "new" };
    const unread = run("Edit", edit, "--session", "s2", "--permission-mode", "acceptEdits");
    expect(unread.code).toBe(1);
    expect(unread.stderr).toContain("has not been read in this session");
    expect(run("Edit", edit, "--session", "s1", "--permission-mode", "acceptEdits").code).toBe(0);
    expect(readFileSync(join(dir, "src", "a.txt"), "utf8")).toBe("new\n");
  });

  it("keeps a named session per workspace: what was read in one does not count in another", () => {
    const { run } = workspace();
    const other = tempDir();
    const shared = join(tempDir(), "shared.txt");
    writeFileSync(shared, "one\n");
    const mode = ["--permission-mode", "bypassPermissions"];
    expect(run("Read", { file_path: shared }, "--session", "s", ...mode).code).toBe(0);
    const edit = { file_path: shared, old_string: "one", new_string: "two" };
    const elsewhere = run("Edit", edit, "--session", "s", "--cwd", other, ...mode);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain("has not been read in this session");
    expect(run("Edit", edit, "--session", "s", ...mode).code).toBe(0);
  });

  it("does not carry a shell directory into a session run in another workspace", () => {
    const { dir, run } = workspace();
    const other = tempDir();
    mkdirSync(join(dir, "src"));
    const allow = ["--allow", "Bash(cd:*)", "--allow", "Bash(pwd)"];
    run("Bash", { command: "cd src" }, "--session", "s", ...allow);
    const moved = run("Bash", { command: "pwd" }, "--session", "s", "--cwd", other, ...allow);
    expect(moved.stdout.split("\n")[0]).toBe(other);
  });
});

describe("cc-tools run: settings files and flags", () => {
  it("merges user, project and local rules (lists concatenate, deny wins) with --allow/--deny", () => {
    const { run, settings } = workspace();
    settings("user", { permissions: { allow: ["Bash(echo:*)"] } });
    // The rules alone: with the OS sandbox on, `ls` would run without asking (test/sandbox covers that).
    settings("project", { permissions: { deny: ["Bash(echo secret:*)"] }, sandbox: { enabled: false } });
    settings("local", { permissions: { allow: ["Bash(printf:*)"] } });
    expect(run("Bash", { command: "echo hi && printf x" }).code).toBe(0);
    const denied = run("Bash", { command: "echo secret" });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain("denied by the deny rule Bash(echo secret:*)");
    expect(denied.stderr).toContain(join(".claude", "settings.json"));
    expect(run("Bash", { command: "echo hi" }, "--deny", "Bash(echo:*)").code).toBe(1);
    const asked = run("Bash", { command: "ls" });
    expect(asked.code).toBe(1);
    expect(asked.stderr).toContain("Bash(ls)");
    expect(run("Bash", { command: "ls" }, "--allow", "Bash(ls)").code).toBe(0);
  });

  it("takes defaultMode from settings; --permission-mode overrides it", () => {
    const { run, settings } = workspace();
    settings("project", { permissions: { defaultMode: "plan" } });
    const write = { file_path: "new.txt", content: "x" };
    expect(run("Write", write).stderr).toContain("plan mode");
    expect(run("Write", write, "--permission-mode", "acceptEdits").code).toBe(0);
  });
});

describe("cc-tools run: hooks from settings", () => {
  function hook(env: ReturnType<typeof workspace>, script: string, extra: object = {}) {
    const path = join(env.dir, "hook.sh");
    writeFileSync(path, `#!/bin/sh\n${script}\n`);
    chmodSync(path, 0o755);
    env.settings("project", {
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: path, ...extra }] }] },
      // The rules alone judge the rewritten input here; a sandboxed command would need no approval.
      sandbox: { enabled: false },
    });
  }
  const decision = (d: string) =>
    `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"${d}","permissionDecisionReason":"hook says ${d}"}}'`;

  it("block with exit 2, allow, deny and rewrite the input", () => {
    const ws = workspace();
    hook(ws, "echo 'not today' >&2; exit 2");
    const blocked = ws.run("Bash", { command: "echo hi" }, "--allow", "Bash(echo:*)");
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain("A PreToolUse hook blocked this call: not today");

    hook(ws, decision("allow"));
    expect(ws.run("Bash", { command: "echo allowed" }).stdout).toBe("allowed\n");
    expect(ws.run("Bash", { command: "echo x" }, "--deny", "Bash(echo:*)").code).toBe(1);

    hook(ws, decision("deny"));
    expect(ws.run("Bash", { command: "echo x" }, "--allow", "Bash").stderr).toContain("hook says deny");

    hook(ws, `echo '{"hookSpecificOutput":{"updatedInput":{"command":"echo rewritten"}}}'`);
    expect(ws.run("Bash", { command: "echo original" }, "--allow", "Bash(echo:*)").stdout).toBe(
      "rewritten\n",
    );
    // The rewritten input is judged, not the original.
    hook(ws, `echo '{"hookSpecificOutput":{"updatedInput":{"command":"rm -rf x"}}}'`);
    expect(ws.run("Bash", { command: "echo original" }, "--allow", "Bash(echo:*)").code).toBe(1);
  });

  it("a hook that times out, prints garbage or cannot run does not decide the call", () => {
    const ws = workspace();
    hook(ws, "sleep 30", { timeout: 1 });
    const slow = ws.run("Bash", { command: "echo ran" }, "--allow", "Bash(echo:*)");
    expect(slow.stdout).toBe("ran\n");
    hook(ws, "echo 'this is {not json'");
    expect(ws.run("Bash", { command: "echo ran" }, "--allow", "Bash(echo:*)").stdout).toBe("ran\n");
    writeFileSync(join(ws.dir, "hook.sh"), "#!/bin/sh\nexit 2\n");
    chmodSync(join(ws.dir, "hook.sh"), 0o644);
    expect(ws.run("Bash", { command: "echo ran" }, "--allow", "Bash(echo:*)").stdout).toBe("ran\n");
  });
});

describe("cc-tools run --session: the state on disk", () => {
  it("holds hashes, never the text read, in a file only the user can read; sessions reset forgets it", () => {
    const { dir, home, env, run } = workspace();
    writeFileSync(join(dir, "secret.txt"), "the-password-is-swordfish\n");
    expect(run("Read", { file_path: "secret.txt" }, "--session", "s").code).toBe(0);
    const listed = cli(["sessions", "list", "--json"], { cwd: dir, env });
    const [session] = (JSON.parse(listed.stdout) as { sessions: Array<{ name: string; file: string }> })
      .sessions;
    expect(session!.name).toBe("s");
    expect(session!.file.startsWith(join(home, "state", "sessions", "s"))).toBe(true);
    expect(readFileSync(session!.file, "utf8")).not.toContain("swordfish");
    expect(statSync(session!.file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(session!.file)).mode & 0o777).toBe(0o700);

    const reset = cli(["sessions", "reset", "s"], { cwd: dir, env });
    expect(reset.code).toBe(0);
    expect(existsSync(session!.file)).toBe(false);
    expect(cli(["sessions"], { cwd: dir, env }).stdout).toContain("No named sessions");
    const edit = { file_path: "secret.txt", old_string: "swordfish", new_string: "x" };
    const after = run("Edit", edit, "--session", "s", "--permission-mode", "acceptEdits");
    expect(after.stderr).toContain("has not been read in this session");
  });
});
