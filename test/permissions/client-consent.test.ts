import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { PermissionLevel, PermissionMode } from "../../src/core/permission-level.js";
import type { PermissionSubject } from "../../src/core/tool.js";
import { clientApproval } from "../../src/permissions/client-consent.js";
import type { EvaluationInput, PermissionRuleEntry } from "../../src/permissions/types.js";
import { tempDir } from "../helpers/context.js";

function input(
  workingDir: string,
  toolName: string,
  level: PermissionLevel,
  subject: PermissionSubject,
  options: { mode?: PermissionMode; rules?: Array<[string, PermissionRuleEntry["behavior"]]> } = {},
): EvaluationInput {
  return {
    toolName,
    level,
    subject,
    mode: options.mode ?? "default",
    rules: (options.rules ?? []).map(([rule, behavior]) => ({
      rule,
      behavior,
      source: { scope: "cli", root: workingDir },
    })),
    workingDir,
    additionalDirectories: [],
    homeDir: "/nonexistent-home",
  };
}

const bash = (command: string): PermissionSubject => ({ kind: "command", command, shell: "bash" });
const write = (path: string): PermissionSubject => ({ kind: "path", path, access: "write" });

describe("what the MCP client's approval covers", () => {
  // A fresh workspace per test: temp dirs are removed after each one.
  let dir = "";
  beforeEach(() => {
    dir = tempDir();
    mkdirSync(join(dir, "src"));
  });
  const covered = (i: EvaluationInput) => clientApproval(i)?.decision.behavior === "allow";

  it.each([
    ["a plain command", bash("npm test")],
    ["a compound command", bash("npm run build && npm test | tail -5")],
    ["a redirection inside the workspace", bash("echo x > src/out.txt")],
  ])("covers %s", (_, subject) => {
    expect(covered(input(dir, "Bash", "execute", subject))).toBe(true);
  });

  it("covers an edit inside the workspace and another server's tool", () => {
    expect(covered(input(dir, "Edit", "write", write(join(dir, "src", "a.ts"))))).toBe(true);
    expect(covered(input(dir, "mcp__github__create_issue", "execute", { kind: "none" }))).toBe(true);
  });

  it.each([
    ["a redirection outside", bash("echo x > /tmp/elsewhere.txt")],
    ["a redirection into .mcp.json", bash("echo {} > .mcp.json")],
    ["a redirection into settings", bash("echo {} > .claude/settings.json")],
    ["a write after cd, to a place unknown", bash("cd src && echo x > out.txt")],
  ])("does not cover %s", (_, subject) => {
    expect(covered(input(dir, "Bash", "execute", subject))).toBe(false);
  });

  it("does not cover writes outside or to control files, ask rules, unchecked commands, or Dangerous", () => {
    expect(covered(input(dir, "Write", "write", write("/tmp/outside.txt")))).toBe(false);
    expect(covered(input(dir, "Write", "write", write(join(dir, ".git", "config"))))).toBe(false);
    expect(covered(input(dir, "Edit", "write", write(join(dir, ".claude", "settings.local.json"))))).toBe(
      false,
    );
    const askRule = { rules: [["Bash(git push:*)", "ask"]] as Array<[string, "ask"]> };
    expect(covered(input(dir, "Bash", "execute", bash("git push origin main"), askRule))).toBe(false);
    // With a deny rule about commands in force, a command whose parts cannot all be seen needs a person.
    const denyRule = { rules: [["Bash(rm:*)", "deny"]] as Array<[string, "deny"]> };
    expect(covered(input(dir, "Bash", "execute", bash('eval "$CMD"'), denyRule))).toBe(false);
    expect(covered(input(dir, "Danger", "dangerous", { kind: "none" }))).toBe(false);
  });

  it("judges a path where it really leads: a link inside the workspace to a directory outside is outside", () => {
    const outside = tempDir("cc-tools-outside-");
    symlinkSync(outside, join(dir, "linked"));
    expect(covered(input(dir, "Write", "write", write(join(dir, "linked", "x.txt"))))).toBe(false);
    expect(covered(input(dir, "Bash", "execute", bash("echo x > linked/x.txt")))).toBe(false);
  });

  it("applies only where the mode would ask: not in plan, dontAsk or bypassPermissions", () => {
    for (const mode of ["plan", "dontAsk", "bypassPermissions"] as const)
      expect(clientApproval(input(dir, "Bash", "execute", bash("ls"), { mode }))).toBeUndefined();
    expect(covered(input(dir, "Bash", "execute", bash("ls"), { mode: "acceptEdits" }))).toBe(true);
  });

  it("what it leaves to ask is explained, and judged without the approval it did give", () => {
    const left = clientApproval(input(dir, "Bash", "execute", bash("echo x > /tmp/elsewhere.txt")))!;
    expect(left.decision.behavior).toBe("ask");
    expect(left.decision.reason).toContain("/tmp/elsewhere.txt");
    expect(left.decision.reason).toContain("outside the workspace");
  });
});
