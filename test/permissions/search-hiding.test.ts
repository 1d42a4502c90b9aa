import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import type { RuleBehavior } from "../../src/permissions/types.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";
import { MODES, useSearchMode } from "../search/fixture.js";

/** A workspace with secrets in several spellings and a rule about them. */
function setup(rule: string, behavior: RuleBehavior = "deny") {
  const dir = tempDir();
  writeFileSync(join(dir, ".env"), "SECRET=hunter2\n");
  mkdirSync(join(dir, "sub"));
  writeFileSync(join(dir, "sub", ".env"), "SECRET=nested\n");
  writeFileSync(join(dir, "notes.txt"), "SECRET is a word\n");
  symlinkSync(join(dir, ".env"), join(dir, "alias.txt"));
  const config = emptySettings(dir);
  config.rules.push({ rule, behavior, source: { scope: "project", root: dir } });
  return testContext({ workingDir: dir, config, permissionMode: "bypassPermissions" });
}

describe.each(MODES)("Read rules also hold for directory-wide searches ($mode)", ({ env }) => {
  useSearchMode(env);

  it.each(["deny", "ask"] as const)(
    "Grep leaves out files a Read %s rule covers, in every output mode",
    async (behavior) => {
      const ctx = setup("Read(.env)", behavior);
      for (const output_mode of ["content", "files_with_matches", "count"]) {
        const text = ToolResult.text(await runTool("Grep", { pattern: "SECRET", output_mode }, ctx));
        expect(text).not.toMatch(/hunter2|nested|\.env/);
        expect(text).toContain("notes.txt");
        expect(text).toContain("(Files covered by Read deny or ask rules were not searched.)");
      }
    },
  );

  it("says the same whether or not a denied file matches: Grep is no oracle on its content", async () => {
    const ctx = setup("Read(.env)");
    const outputs = new Set<string>();
    // hunter2 is in the denied .env only; notes.txt holds neither guess.
    for (const pattern of ["hunter2", "hunter3", "SECRET=h", "SECRET=x"]) {
      for (const output_mode of ["content", "files_with_matches", "count"]) {
        const text = ToolResult.text(await runTool("Grep", { pattern, output_mode }, ctx));
        outputs.add(`${output_mode}: ${text}`);
      }
    }
    expect(outputs.size).toBe(3);
    for (const text of outputs) expect(text).not.toMatch(/hunter2|\.env/);
  });

  it("is no oracle through where a long search stops, for a rule rg's globs cannot express", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "Private Keys"));
    writeFileSync(join(dir, "Private Keys", "db.txt"), "TOKEN=hunter2\n");
    // One line short of the record limit: a denied line counted with them would cut the search short.
    writeFileSync(join(dir, "notes.txt"), "nothing here\n".repeat(49_999));
    const config = emptySettings(dir);
    config.rules.push({
      rule: "Read(**/Private Keys/**)",
      behavior: "deny",
      source: { scope: "project", root: dir },
    });
    const ctx = testContext({ workingDir: dir, config, permissionMode: "bypassPermissions" });
    const notes = new Set<string>();
    for (const pattern of ["nothing|TOKEN=h", "nothing|TOKEN=x"]) {
      const text = ToolResult.text(await runTool("Grep", { pattern, output_mode: "content" }, ctx));
      expect(text).not.toContain("hunter2");
      // What it says about the search (how many lines, where it stopped), past the lines it shows.
      notes.add(
        text
          .split("\n")
          .filter((line) => line.startsWith("("))
          .join("\n"),
      );
    }
    expect(notes.size).toBe(1);
  });

  it("holds rules written for a sub-agent's type in that agent's searches", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, ".env"), "SECRET=hunter2\n");
    writeFileSync(join(dir, "notes.txt"), "nothing\n");
    const config = emptySettings(dir);
    const rule = { rule: "Read(.env)", behavior: "deny", source: { scope: "project", root: dir } } as const;
    config.rules.push({ ...rule, agent: "Explore" });
    const explore = testContext({
      workingDir: dir,
      config,
      permissionMode: "bypassPermissions",
      agentType: "Explore",
    });
    expect(ToolResult.text(await runTool("Read", { file_path: ".env" }, explore))).toMatch(/denied/);
    const grep = ToolResult.text(
      await runTool("Grep", { pattern: "SECRET", output_mode: "content" }, explore),
    );
    expect(grep).not.toContain("hunter2");
    expect(ToolResult.text(await runTool("Glob", { pattern: "**/*" }, explore))).not.toContain(".env");
    // Another agent type, or the main session, is not bound by it.
    const other = testContext({
      workingDir: dir,
      config,
      permissionMode: "bypassPermissions",
      agentType: "Plan",
    });
    expect(ToolResult.text(await runTool("Glob", { pattern: "**/*" }, other))).toContain(".env");
  });

  it("answers a search whose every file is hidden as it answers one of an empty directory", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, ".env"), "SECRET=hunter2\n");
    const config = emptySettings(dir);
    config.rules.push({ rule: "Read(.env)", behavior: "deny", source: { scope: "project", root: dir } });
    const hidden = testContext({ workingDir: dir, config, permissionMode: "bypassPermissions" });
    const empty = testContext({ workingDir: tempDir(), permissionMode: "bypassPermissions" });
    for (const output_mode of ["content", "files_with_matches", "count"]) {
      const input = { pattern: "SECRET", output_mode };
      const all = await runTool("Grep", input, hidden);
      const none = await runTool("Grep", input, empty);
      expect(all.isError, output_mode).toBe(false);
      expect(none.isError, output_mode).toBe(false);
      expect(ToolResult.text(all)).toBe(
        `${ToolResult.text(none)}\n\n(Files covered by Read deny or ask rules were not searched.)`,
      );
    }
  });

  it("leaves denied files out when the search is narrowed by a glob that names them", async () => {
    const ctx = setup("Read(./sub/**)");
    const text = ToolResult.text(
      await runTool("Grep", { pattern: "SECRET", glob: "**/.env", output_mode: "content" }, ctx),
    );
    expect(text).not.toContain("nested");
    expect(text).toContain("hunter2");
  });

  it("Glob does not list them", async () => {
    const ctx = setup("Read(.env)");
    const text = ToolResult.text(await runTool("Glob", { pattern: "**/*" }, ctx));
    expect(text).not.toContain(".env");
    expect(text).toContain("notes.txt");
    expect(text).toContain("left out");
  });

  it("an Edit allow rule or an unrelated rule hides nothing", async () => {
    const ctx = setup("Read(./other/**)");
    const text = ToolResult.text(await runTool("Grep", { pattern: "hunter2", output_mode: "content" }, ctx));
    expect(text).toContain(".env:1:SECRET=hunter2");
    expect(text).not.toContain("left out");
  });
});
