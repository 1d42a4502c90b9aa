import { describe, expect, it } from "vitest";
import { describeCall } from "../../src/mcp/elicit.js";
import type { PermissionRequest } from "../../src/permissions/types.js";

function request(toolName: string, input: unknown, subject: PermissionRequest["subject"]): PermissionRequest {
  return {
    toolName,
    input,
    level: "execute",
    subject,
    mode: "default",
    reason: "it needs approval",
    suggestedRules: [],
    prefixRules: [],
    workingDir: "/w",
  };
}

describe("a permission question, as a person reads it", () => {
  it("shows another server's tool and its arguments as lines, without JSON", () => {
    const text = describeCall(
      request(
        "mcp__github__create_issue",
        { title: "Crash on start", labels: ["bug", "p1"], meta: { repo: "o/r" } },
        { kind: "none" },
      ),
    );
    expect(text).toBe(
      "Use the tool create_issue of the MCP server github with\n" +
        "    title: Crash on start\n    labels: bug, p1\n    meta.repo: o/r",
    );
  });

  it("shows an edit as the file and a short diff, long texts cut with a count", () => {
    const old = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n");
    const text = describeCall(
      request(
        "Edit",
        { file_path: "/w/a.ts", old_string: old, new_string: "x" },
        { kind: "path", path: "/w/a.ts", access: "write" },
      ),
    );
    expect(text).toContain("Change /w/a.ts:");
    expect(text).toContain("- line 11");
    expect(text).not.toContain("- line 12");
    expect(text).toContain("- … 18 more lines");
    expect(text).toContain("+ x");
  });
});
