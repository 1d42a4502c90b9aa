import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { evaluatePermission } from "../../src/permissions/evaluate.js";
import type { EvaluationInput, PermissionRuleEntry, RuleBehavior } from "../../src/permissions/types.js";
import { loadSettings } from "../../src/settings/load.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";

function entry(rule: string, behavior: RuleBehavior, root: string, agent?: string): PermissionRuleEntry {
  return { rule, behavior, source: { scope: "project", root }, ...(agent ? { agent } : {}) };
}

function bash(
  dir: string,
  command: string,
  rules: PermissionRuleEntry[],
  agentType?: string,
): EvaluationInput {
  return {
    toolName: "Bash",
    level: "execute",
    subject: { kind: "command", command, shell: "bash" },
    mode: "default",
    rules,
    workingDir: dir,
    additionalDirectories: [],
    homeDir: dir,
    agentType,
  };
}

describe("a decision carries every rule that matched", () => {
  it("lists deciding and non-deciding matches of every part of a command", () => {
    const dir = tempDir();
    const rules = [
      entry("Bash(git:*)", "allow", dir),
      entry("Bash(git status)", "allow", dir),
      entry("Bash(npm test:*)", "allow", dir),
      entry("Bash(rm:*)", "deny", dir),
      entry("Bash(curl:*)", "ask", dir),
    ];
    const allowed = evaluatePermission(bash(dir, "git status && npm test", rules));
    expect(allowed.behavior).toBe("allow");
    expect(allowed.matchedRules?.map((r) => r.rule)).toEqual([
      "Bash(git:*)",
      "Bash(git status)",
      "Bash(npm test:*)",
    ]);
    const denied = evaluatePermission(bash(dir, "git status; sudo rm -rf x", rules));
    expect(denied.behavior).toBe("deny");
    expect(denied.matchedRules?.map((r) => r.rule)).toEqual([
      "Bash(rm:*)",
      "Bash(git:*)",
      "Bash(git status)",
    ]);
  });

  it("is in the result metadata of a call that ran, and of one that was refused", async () => {
    const dir = tempDir();
    const config = emptySettings(dir);
    config.rules.push(entry("Bash(echo:*)", "allow", dir), entry("Read(./secret.txt)", "deny", dir));
    writeFileSync(join(dir, "secret.txt"), "decoy-secret-5521\n");
    const ctx = testContext({ workingDir: dir, config, permissionMode: "default" });
    const ran = await runTool("Bash", { command: "echo traced" }, ctx);
    expect(ToolResult.text(ran)).toContain("traced");
    expect(ran.metadata?.permissionTrace).toMatchObject({
      behavior: "allow",
      matchedRules: [{ rule: "Bash(echo:*)", behavior: "allow", scope: "project" }],
    });
    const refused = await runTool("Read", { file_path: "secret.txt" }, ctx);
    expect(refused.isError).toBe(true);
    expect(ToolResult.text(refused)).not.toContain("decoy-secret-5521");
    expect(refused.metadata?.permissionTrace).toMatchObject({
      behavior: "deny",
      matchedRules: [{ rule: "Read(./secret.txt)", behavior: "deny" }],
    });
  });
});

describe("rules scoped to a sub-agent type", () => {
  it("apply to that agent's calls only", () => {
    const dir = tempDir();
    const rules = [
      entry("Bash(npm test:*)", "allow", dir),
      entry("Bash(npm test:*)", "deny", dir, "Explore"),
    ];
    expect(evaluatePermission(bash(dir, "npm test", rules)).behavior).toBe("allow");
    expect(evaluatePermission(bash(dir, "npm test", rules, "Plan")).behavior).toBe("allow");
    const explore = evaluatePermission(bash(dir, "npm test", rules, "Explore"));
    expect(explore.behavior).toBe("deny");
    expect(explore.rule?.agent).toBe("Explore");
  });

  it("load from permissions.agents in settings, and a bad rule there names its key", () => {
    const dir = tempDir();
    mkdirSync(join(dir, ".claude"));
    const write = (settings: unknown) =>
      writeFileSync(join(dir, ".claude", "settings.json"), JSON.stringify(settings));
    write({ permissions: { allow: ["Read"], agents: { Explore: { deny: ["Bash"], allow: ["Grep"] } } } });
    const env = { CLAUDE_CONFIG_DIR: join(dir, "user-config") };
    const loaded = loadSettings(dir, env).rules.map(({ rule, behavior, agent }) => ({
      rule,
      behavior,
      agent,
    }));
    expect(loaded).toEqual([
      { rule: "Read", behavior: "allow", agent: undefined },
      { rule: "Bash", behavior: "deny", agent: "Explore" },
      { rule: "Grep", behavior: "allow", agent: "Explore" },
    ]);
    write({ permissions: { agents: { Explore: { deny: ["Bash(:*)"] } } } });
    expect(() => loadSettings(dir, env)).toThrow(/permissions\.agents\.Explore\.deny/);
  });
});
