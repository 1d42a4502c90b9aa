import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { PermissionSubject } from "../../src/core/tool.js";
import { evaluatePermission } from "../../src/permissions/evaluate.js";
import {
  allowAllHandler,
  autoHandler,
  createTerminalHandler,
  denyAllHandler,
} from "../../src/permissions/handlers.js";
import { localSettingsPath, persistRule } from "../../src/permissions/persist.js";
import { validateRule } from "../../src/permissions/rules.js";
import { suggestRules } from "../../src/permissions/suggest.js";
import type { EvaluationInput, PermissionRequest, PermissionRuleEntry } from "../../src/permissions/types.js";
import { tempDir } from "../helpers/context.js";

function input(
  workingDir: string,
  toolName: string,
  level: EvaluationInput["level"],
  subject: PermissionSubject,
) {
  return {
    toolName,
    level,
    subject,
    mode: "default",
    rules: [] as PermissionRuleEntry[],
    workingDir,
    additionalDirectories: [],
    homeDir: join(workingDir, "..", "home"),
  } satisfies EvaluationInput;
}

const allowing = (rules: string[], root: string): PermissionRuleEntry[] =>
  rules.map((rule) => ({ rule, behavior: "allow", source: { scope: "session", root } }));

describe("suggestRules: the narrowest rules, checked to allow the call", () => {
  it.each([
    ["npm run test:unit", ["Bash(npm run test:unit)"]],
    ["git commit -m 'fix bug'", ["Bash(git commit -m 'fix bug')"]],
    ["npm test && rm x", ["Bash(npm test)", "Bash(rm x)"]],
    ["ls | wc -l", ["Bash(ls)", "Bash(wc -l)"]],
    ["echo $(date)", ["Bash(date)", "Bash(echo $(date))"]],
  ])("%j → %j", (command, expected) => {
    const dir = tempDir();
    const call = input(dir, "Bash", "execute", { kind: "command", command, shell: "bash" });
    const rules = suggestRules(call);
    expect(rules).toEqual(expected);
    expect(evaluatePermission({ ...call, rules: allowing(rules, dir) }).behavior).toBe("allow");
  });

  it("suggests only the parts not already allowed, plus an exact Edit rule for a redirect target", () => {
    const dir = tempDir();
    const call = {
      ...input(dir, "Bash", "execute", {
        kind: "command",
        command: "npm test && echo x > out.txt",
        shell: "bash",
      }),
      rules: allowing(["Bash(npm test:*)"], dir),
    };
    expect(suggestRules(call)).toEqual(["Bash(echo x)", `Edit(/${dir}/out.txt)`]);
  });

  it("an exact path rule for files, escaping glob characters", () => {
    const dir = tempDir();
    const outside = join(dir, "..", `weird [1] *name!`);
    const read = input(dir, "Read", "readOnly", { kind: "path", path: outside, access: "read" });
    const [r] = suggestRules(read);
    expect(r).toMatch(/^Read\(\/\//);
    expect(evaluatePermission({ ...read, rules: allowing([r!], dir) }).behavior).toBe("allow");
    const sibling = {
      ...read,
      subject: { kind: "path", path: join(dir, "..", "weird 1 xname!"), access: "read" },
    };
    expect(evaluatePermission({ ...sibling, rules: allowing([r!], dir) } as EvaluationInput).behavior).toBe(
      "ask",
    );
    const write = input(dir, "Write", "write", { kind: "path", path: join(dir, "a.ts"), access: "write" });
    expect(suggestRules(write)).toEqual([`Edit(/${dir}/a.ts)`]);
  });

  it("URLs, MCP tools, specifiers and plain tools", () => {
    const dir = tempDir();
    expect(
      suggestRules(input(dir, "WebFetch", "execute", { kind: "url", url: "https://docs.x.io/a?b" })),
    ).toEqual(["WebFetch(domain:docs.x.io)"]);
    expect(suggestRules(input(dir, "mcp__github__create_issue", "execute", { kind: "none" }))).toEqual([
      "mcp__github__create_issue",
    ]);
    expect(suggestRules(input(dir, "Skill", "execute", { kind: "specifier", value: "pdf" }))).toEqual([
      "Skill(pdf)",
    ]);
    expect(suggestRules(input(dir, "Task", "execute", { kind: "none" }))).toEqual(["Task"]);
  });

  it("nothing when no rule can allow the call", () => {
    const dir = tempDir();
    expect(suggestRules(input(dir, "Nuke", "dangerous", { kind: "none" }))).toEqual([]);
    expect(
      suggestRules(input(dir, "Bash", "execute", { kind: "command", command: "eval x", shell: "bash" })),
    ).toEqual([]);
  });
});

describe("validateRule", () => {
  it.each([
    ["Bash", undefined],
    ["Bash(npm run test:*)", undefined],
    ["Bash(git * --dry-run)", undefined],
    ["Read(./secrets/**)", undefined],
    ["Edit(//etc/**)", undefined],
    ["WebFetch(domain:*.example.com)", undefined],
    ["mcp__github", undefined],
    ["mcp__github__*", undefined],
    ["mcp__github__create_issue", undefined],
    ["Bash(ls", /parentheses are unbalanced/],
    ["Bash)(", /parentheses are unbalanced/],
    ["Bash()", /specifier is empty/],
    ["Bash(npm:* test)", /":\*" may only appear at the end/],
    ["Skill(a:*b)", /":\*" may only appear at the end/],
    ["Bash(ls && rm x)", /one rule per command/],
    ["Bash(echo $(date))", undefined],
    ["Bash((ls))", /one rule per command/],
    ["PowerShell(echo $(Get-Date))", undefined],
    ["Bash(ls > out)", /redirection/],
    ["Bash(echo 'x)", /cannot be read/],
    ["WebFetch(https://x.io)", /domain:/],
    ["WebFetch(domain:a/b)", /not a host/],
    ["Read(!./x)", /negated/],
    ["mcp__github__tool(x)", /no specifier/],
    ["", /empty/],
    ["1Bash", /not a tool name/],
  ])("%j → %s", (rule, expected) => {
    const error = validateRule(rule);
    if (expected === undefined) expect(error).toBeUndefined();
    else {
      expect(error).toMatch(expected);
      expect(error).toContain(`"${rule}"`);
    }
  });
});

describe("persistRule", () => {
  it("creates the file and directories, keeps other keys, adds no duplicate", async () => {
    const dir = tempDir();
    await persistRule(dir, "Bash(npm test)");
    const path = localSettingsPath(dir);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ permissions: { allow: ["Bash(npm test)"] } });
    writeFileSync(
      path,
      JSON.stringify({ env: { A: "1" }, permissions: { deny: ["Read(.env)"], allow: ["Bash(npm test)"] } }),
    );
    await persistRule(dir, "Bash(npm test)");
    await persistRule(dir, "Read(//etc/hosts)");
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({
      env: { A: "1" },
      permissions: { deny: ["Read(.env)"], allow: ["Bash(npm test)", "Read(//etc/hosts)"] },
    });
    expect(readdirSync(join(dir, ".claude"))).toEqual(["settings.local.json"]);
  });

  it("never overwrites a malformed file, and names it", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, ".claude"));
    const path = localSettingsPath(dir);
    writeFileSync(path, "{ not json");
    await expect(persistRule(dir, "Bash(ls)")).rejects.toThrow(path);
    expect(readFileSync(path, "utf8")).toBe("{ not json");
    writeFileSync(path, JSON.stringify({ permissions: { allow: "Bash" } }));
    await expect(persistRule(dir, "Bash(ls)")).rejects.toThrow(/permissions.allow/);
  });

  it("refuses an invalid rule", async () => {
    await expect(persistRule(tempDir(), "Bash(")).rejects.toThrow(/unbalanced/);
  });

  it("changes only the list: the user's formatting, key order and comments stay", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, ".claude"));
    const path = localSettingsPath(dir);
    const original = [
      "{",
      "    // mine",
      '    "model": "x",',
      '    "permissions": {',
      '        "allow": ["Bash(ls)"]',
      "    }",
      "}",
      "",
    ].join("\n");
    writeFileSync(path, original);
    await persistRule(dir, "Bash(pwd)");
    const text = readFileSync(path, "utf8");
    // Everything before the list is as the user wrote it; the list is laid out in the file's own indentation.
    expect(text.startsWith(original.slice(0, original.indexOf('"allow"')))).toBe(true);
    expect(text).toContain('\n            "Bash(pwd)"\n');
    expect(text.endsWith("    }\n}\n")).toBe(true);
  });
});

function request(overrides: Partial<PermissionRequest> = {}): PermissionRequest {
  return {
    toolName: "Bash",
    input: { command: "rm x" },
    level: "execute",
    subject: { kind: "command", command: "rm x", shell: "bash" },
    mode: "default",
    reason: "`rm x` is not covered by any allow rule",
    suggestedRules: ["Bash(rm x)"],
    prefixRules: [],
    workingDir: "/w",
    ...overrides,
  };
}

describe("handlers", () => {
  const signal = new AbortController().signal;

  it("auto and deny-all deny with the reason and the rule that would allow it; allow-all allows once", async () => {
    for (const handler of [autoHandler, denyAllHandler]) {
      const answer = await handler.ask(request(), signal);
      expect(answer.behavior).toBe("deny");
      if (answer.behavior === "deny") {
        expect(answer.message).toContain("not covered");
        expect(answer.message).toContain("Bash(rm x)");
      }
    }
    expect(await allowAllHandler.ask(request(), signal)).toEqual({ behavior: "allow", scope: "once" });
    const none = await autoHandler.ask(request({ suggestedRules: [] }), signal);
    expect(none.behavior === "deny" && none.message).toMatch(/No rule can allow/);
  });

  function terminal() {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = "";
    output.on("data", (chunk) => {
      shown += String(chunk);
    });
    const handler = createTerminalHandler({ input, output });
    const until = async (text: string) => {
      while (!shown.includes(text)) await new Promise((r) => setTimeout(r, 5));
    };
    return { input, handler, shown: () => shown, until };
  }

  it.each([
    ["1", { behavior: "allow", scope: "once" }],
    ["2", { behavior: "allow", scope: "session" }],
    ["3", { behavior: "allow", scope: "always" }],
  ])("terminal: choice %s", async (choice, expected) => {
    const t = terminal();
    const answer = t.handler.ask(request(), signal);
    await t.until("Choose 1-4");
    expect(t.shown()).toContain("Permission needed: Bash");
    expect(t.shown()).toContain("Command: rm x");
    expect(t.shown()).toContain("Why: `rm x` is not covered");
    expect(t.shown()).toContain("settings.local.json");
    t.input.write(`${choice}\n`);
    expect(await answer).toEqual(expected);
  });

  it("terminal: deny with feedback, re-asks on nonsense, denies when input ends or the call is cancelled", async () => {
    const t = terminal();
    const answer = t.handler.ask(request(), signal);
    await t.until("Choose 1-4");
    t.input.write("7\n");
    await t.until("type a number");
    t.input.write("4\n");
    await t.until("Reason");
    t.input.write("use trash instead\n");
    expect(await answer).toEqual({ behavior: "deny", message: "The user declined Bash: use trash instead" });

    const controller = new AbortController();
    const cancelled = t.handler.ask(request(), controller.signal);
    await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    expect((await cancelled).behavior).toBe("deny");

    const ended = t.handler.ask(request(), signal);
    t.input.end();
    expect(await ended).toMatchObject({ behavior: "deny" });
  });

  it("terminal: a Dangerous call without rules offers only once or deny; concurrent asks queue", async () => {
    const t = terminal();
    const first = t.handler.ask(request({ level: "dangerous", suggestedRules: [] }), signal);
    const second = t.handler.ask(request(), signal);
    await t.until("Choose 1-2");
    expect(t.shown()).not.toContain("Choose 1-4");
    t.input.write("1\n");
    expect(await first).toEqual({ behavior: "allow", scope: "once" });
    await t.until("Choose 1-4");
    t.input.write("2\n");
    expect(await second).toEqual({ behavior: "allow", scope: "session" });
  });
});
