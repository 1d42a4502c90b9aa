import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ToolContext } from "../../src/core/context.js";
import { runTool } from "../../src/executor/run.js";
import { allTools } from "../../src/registry.js";
import { testContext } from "../helpers/context.js";

/**
 * Property: whatever input a tool gets (wrong shapes, huge strings, NUL bytes, lone surrogates, extreme
 * numbers, or its own schema's fields with hostile values), the executor answers with a result, within the
 * deadline, and never throws. Runs in "default" mode without a person to ask, so nothing outside the
 * workspace is written and no command needs approval to run. Fixed seed, bounded runs: FUZZ_RUNS per tool.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = Number(process.env.FUZZ_SEED ?? 20261101);
/** Longest one fuzzed call may take; the slowest legitimate case is a Grep over a small temp dir. */
const CALL_DEADLINE_MS = 10_000;

const hostileString = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.constantFrom(
    "",
    "\0",
    "a\0b",
    "\uD800",
    "/tmp/\uDC00x",
    "../../../../etc/passwd",
    "~",
    "*",
    "**/*",
    "\\",
    "(",
    "[",
    "$(",
    "x".repeat(1024 * 1024),
    "\n".repeat(10_000),
    "é".repeat(70_000),
  ),
);
const hostileNumber = fc.oneof(
  fc.double(),
  fc.constantFrom(0, -0, -1, 1.5, Number.NaN, Infinity, -Infinity, 2 ** 53 + 1, 1e308, -1e308, 5e-324),
  fc.integer(),
);
const hostileValue = fc.oneof(
  hostileString,
  hostileNumber,
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 5 }),
  fc.anything({ maxDepth: 3 }),
);

/** Inputs with the tool's own field names (so validation passes sometimes), or any shape at all. */
function inputsFor(fields: string[]) {
  const shaped = fc.dictionary(fc.constantFrom(...fields, "extra"), hostileValue, {
    maxKeys: fields.length + 1,
  });
  return fc.oneof(shaped, shaped, fc.anything({ maxDepth: 3 }), fc.dictionary(fc.string(), hostileValue));
}

function fieldsOf(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  const names = Object.keys(properties);
  return names.length > 0 ? names : ["x"];
}

async function callWithin(ctx: ToolContext, name: string, input: unknown) {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), CALL_DEADLINE_MS);
  });
  try {
    return await Promise.race([runTool(name, input, ctx), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe("fuzzed tool input through the executor", () => {
  for (const tool of allTools()) {
    it(`${tool.name} answers every input with a result, in time`, async () => {
      const ctx = testContext({ permissionMode: "default" });
      const fields = fieldsOf(tool.toDefinition().input_schema);
      await fc.assert(
        fc.asyncProperty(inputsFor(fields), async (input) => {
          const result = await callWithin(ctx, tool.name, input);
          expect(result).not.toBe("late");
          if (result === "late") return;
          expect(Array.isArray(result.content)).toBe(true);
          expect(typeof result.isError).toBe("boolean");
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    }, 120_000);
  }
});
