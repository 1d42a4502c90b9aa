import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createToolContext } from "../../src/context.js";
import { evaluatePermission } from "../../src/permissions/evaluate.js";
import { localSettingsPath } from "../../src/permissions/persist.js";
import { suggestPrefixRules, suggestRules } from "../../src/permissions/suggest.js";
import type { EvaluationInput, PermissionRequest } from "../../src/permissions/types.js";
import { emptySettings } from "../../src/settings/types.js";
import { bashTool } from "../../src/tools/shell/bash.js";
import { tempDir } from "../helpers/context.js";

function call(dir: string, command: string): EvaluationInput {
  return {
    toolName: "Bash",
    level: "execute",
    subject: { kind: "command", command, shell: "bash" },
    mode: "default",
    rules: [],
    workingDir: dir,
    additionalDirectories: [],
    homeDir: dir,
  };
}

const prefixes = (dir: string, command: string) => {
  const input = call(dir, command);
  return suggestPrefixRules(input, suggestRules(input));
};

describe("prefix rules offered beside the exact ones", () => {
  it.each([
    ["npm run dev --port 3", ["Bash(npm run dev:*)"]],
    ["npm test", ["Bash(npm test:*)"]],
    ["git push origin main", ["Bash(git push:*)"]],
    ["git stash pop", ["Bash(git stash pop:*)"]],
    ["ls -la src", ["Bash(ls:*)"]],
    ["cargo build --release && git status", ["Bash(cargo build:*)", "Bash(git status:*)"]],
    ["make test > out.log", ["Bash(make test:*)", "Edit(//{dir}/out.log)"]],
  ])("%s → %j", (command, expected) => {
    const dir = tempDir();
    expect(prefixes(dir, command)).toEqual(expected.map((r) => r.replace("{dir}", dir.slice(1))));
  });

  it.each([
    "python3 -c 'print(1)'",
    "bash -c 'ls'",
    "sudo ls",
    "env FOO=1 ls",
    "node -e 1",
    "xargs rm",
    "find . -exec rm {} ;",
    "npx some-package",
    "git config core.pager cat",
    "docker run alpine",
    "timeout 5 ls",
    "sed -i s/a/b/ f",
    "FOO=1 ls",
    "git -C sub status",
  ])("never a prefix that allows anything: %s", (command) => {
    expect(prefixes(tempDir(), command)).toEqual([]);
  });

  it("each offered set allows the call it was made for, and a sibling command", () => {
    const dir = tempDir();
    const rules = prefixes(dir, "npm run dev --port 3");
    const allowed = (command: string) =>
      evaluatePermission({
        ...call(dir, command),
        rules: rules.map((rule) => ({ rule, behavior: "allow", source: { scope: "session", root: dir } })),
      }).behavior;
    expect(allowed("npm run dev --port 3")).toBe("allow");
    expect(allowed("npm run dev")).toBe("allow");
    expect(allowed("npm run build")).toBe("ask");
  });

  it("an answer that picks the prefix rules saves those", async () => {
    const dir = tempDir();
    const asked: PermissionRequest[] = [];
    // The rules alone judge here; with the OS sandbox on, a sandboxed command would need no approval.
    const config = emptySettings(dir);
    config.sandbox.enabled = false;
    const ctx = createToolContext({
      workingDir: dir,
      permissionMode: "default",
      config,
      permissionHandler: {
        name: "prefix",
        async ask(request) {
          asked.push(request);
          return { behavior: "allow", scope: "always", remember: "prefix" };
        },
      },
    });
    expect((await ctx.checkPermission(bashTool, { command: "npm run dev --port 3" })).behavior).toBe("allow");
    expect(asked[0]!.prefixRules).toEqual(["Bash(npm run dev:*)"]);
    expect((await ctx.checkPermission(bashTool, { command: "npm run dev --port 4" })).behavior).toBe("allow");
    expect(asked).toHaveLength(1);
    expect(JSON.parse(readFileSync(localSettingsPath(dir), "utf8")).permissions.allow).toEqual([
      "Bash(npm run dev:*)",
    ]);
  });
});
