import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolResult } from "../../../src/core/result.js";
import { runTool } from "../../../src/executor/run.js";
import { splitArguments, substituteArguments } from "../../../src/skills/load.js";
import { tempDir, testContext } from "../../helpers/context.js";

type Ctx = ReturnType<typeof testContext>;

async function call(ctx: Ctx, input: Record<string, unknown>) {
  const result = await runTool("Skill", input, ctx);
  return { result, text: ToolResult.text(result), meta: result.metadata ?? {} };
}

function put(path: string, text: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

let userDir: string;
let saved: string | undefined;
beforeEach(() => {
  saved = process.env.CLAUDE_CONFIG_DIR;
  userDir = tempDir("cc-tools-user-");
  process.env.CLAUDE_CONFIG_DIR = userDir;
});
afterEach(() => {
  if (saved === undefined) delete process.env.CLAUDE_CONFIG_DIR;
  else process.env.CLAUDE_CONFIG_DIR = saved;
});

describe("Skill", () => {
  it("loads a project skill with its frontmatter and fills in the arguments", async () => {
    const ctx = testContext();
    put(
      join(ctx.workingDir, ".claude", "skills", "release", "SKILL.md"),
      "---\nname: release\ndescription: Cut a release\nallowed-tools: Bash, Read\n---\nRelease version $1 to $2.\nAll: $ARGUMENTS\n",
    );
    const run = await call(ctx, { skill: "release", args: '1.2.3 "staging env"' });
    expect(run.result.isError).toBe(false);
    expect(run.text).toContain(
      `Base directory for this skill: ${join(ctx.workingDir, ".claude", "skills", "release")}`,
    );
    expect(run.text).toContain("It expects to use: Bash, Read.");
    expect(run.text).toContain('Release version 1.2.3 to staging env.\nAll: 1.2.3 "staging env"');
    expect(run.meta.skill).toMatchObject({
      name: "release",
      description: "Cut a release",
      allowedTools: ["Bash", "Read"],
      scope: "project",
    });
  });

  it("loads commands (subfolders as folder:name), the project's before the user's", async () => {
    const ctx = testContext();
    put(join(ctx.workingDir, ".claude", "commands", "review.md"), "Project review of $ARGUMENTS\n");
    put(join(userDir, "commands", "review.md"), "User review\n");
    put(
      join(userDir, "commands", "git", "squash.md"),
      "---\ndescription: Squash commits\n---\nSquash now.\n",
    );
    expect((await call(ctx, { skill: "/review", args: "src/" })).text).toContain("Project review of src/");
    const nested = await call(ctx, { skill: "git:squash" });
    expect(nested.text).toContain('Command "/git:squash" (user).');
    expect(nested.text).toContain("Squash now.");
  });

  it("appends the arguments when the body uses none", () => {
    expect(substituteArguments("Do it.\n", "now")).toBe("Do it.\n\nARGUMENTS: now");
    expect(substituteArguments("Do it.\n", "")).toBe("Do it.\n");
    expect(substituteArguments("$1-$2-$3", "a 'b c'")).toBe("a-b c-");
    expect(splitArguments(`one "two \\"x\\"" 'three'`)).toEqual(["one", 'two "x"', "three"]);
  });

  it("lists the available skills for an unknown name, and names a malformed file", async () => {
    const ctx = testContext();
    const none = await call(ctx, { skill: "nope" });
    expect(none.result.isError).toBe(true);
    expect(none.text).toContain("No skills or commands are installed");
    put(
      join(ctx.workingDir, ".claude", "skills", "lint", "SKILL.md"),
      "---\ndescription: Run the linter\n---\nLint.\n",
    );
    put(join(ctx.workingDir, ".claude", "commands", "broken.md"), "---\n: : bad: [\n---\nx\n");
    const unknown = await call(ctx, { skill: "nope" });
    expect(unknown.text).toContain('No skill named "nope". Available: lint (Run the linter).');
    expect(unknown.text).toContain("broken.md: the frontmatter is not valid YAML");
  });

  it("follows Skill(name) permission rules", async () => {
    const ctx = testContext({
      permissionMode: "default",
      rules: [{ rule: "Skill(secret)", behavior: "deny", source: { scope: "cli", root: "/" } }],
    });
    put(join(ctx.workingDir, ".claude", "commands", "secret.md"), "x\n");
    const denied = await call(ctx, { skill: "secret" });
    expect(denied.result.isError).toBe(true);
    expect(denied.text).toContain("Skill(secret)");
  });
});
