import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadAgentTypes } from "../../src/agent/agent-types.js";
import { builtinTools } from "../../src/registry.js";
import { tempDir } from "../helpers/context.js";

describe("custom agent definitions", () => {
  it("warn about a tools: name that is no tool, with the nearest names, and keep the agent", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, ".claude", "agents"), { recursive: true });
    writeFileSync(
      join(dir, ".claude", "agents", "reviewer.md"),
      "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grpe, mcp__github__get_issue, Bash\n---\nReview it.\n",
    );
    const { types, skipped, warnings } = await loadAgentTypes(dir, tempDir());
    expect(skipped).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /reviewer\.md: tools names "Grpe", which is no tool \(did you mean Grep.*\?\); the agent runs without it/,
    );
    const reviewer = types.find((t) => t.name === "reviewer")!;
    expect(reviewer.tools(builtinTools()).names().sort()).toEqual(["Bash", "Read"]);
  });
});
