import { describe, expect, it } from "vitest";
import { fileTools } from "../../../src/tools/file/index.js";

/** The input shapes Claude Code's file tools have (descriptions aside): models are trained on them. */
const CLAUDE_CODE_SHAPES = {
  Read: {
    required: ["file_path"],
    properties: {
      file_path: { type: "string" },
      offset: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
      limit: { type: "integer", exclusiveMinimum: 0, maximum: Number.MAX_SAFE_INTEGER },
      pages: { type: "string" },
    },
  },
  Write: {
    required: ["file_path", "content"],
    properties: { file_path: { type: "string" }, content: { type: "string" } },
  },
  Edit: {
    required: ["file_path", "old_string", "new_string"],
    properties: {
      file_path: { type: "string" },
      old_string: { type: "string" },
      new_string: { type: "string" },
      replace_all: { default: false, type: "boolean" },
    },
  },
  NotebookEdit: {
    required: ["notebook_path", "new_source"],
    properties: {
      notebook_path: { type: "string" },
      cell_id: { type: "string" },
      new_source: { type: "string" },
      cell_type: { type: "string", enum: ["code", "markdown"] },
      edit_mode: { type: "string", enum: ["replace", "insert", "delete"] },
    },
  },
};

describe("file tool schemas", () => {
  for (const tool of fileTools) {
    it(`${tool.name} takes Claude Code's parameters, each described`, () => {
      const schema = tool.toDefinition().input_schema as {
        required: string[];
        properties: Record<string, { description?: string }>;
        additionalProperties: boolean;
      };
      const expected = CLAUDE_CODE_SHAPES[tool.name as keyof typeof CLAUDE_CODE_SHAPES];
      expect(schema.required).toEqual(expected.required);
      expect(schema.additionalProperties).toBe(false);
      const withoutDescriptions = Object.fromEntries(
        Object.entries(schema.properties).map(([k, { description, ...rest }]) => {
          expect(description?.length).toBeGreaterThan(20);
          return [k, rest];
        }),
      );
      expect(withoutDescriptions).toEqual(expected.properties);
    });
  }
});
