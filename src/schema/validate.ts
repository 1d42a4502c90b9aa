import type * as z from "zod";
import type { AnyTool, JsonSchema } from "../core/tool.js";

export type Validation = { ok: true; value: unknown } | { ok: false; message: string };

const NUMERIC = /^\s*-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;

function typesOf(schema: unknown): string[] {
  if (!schema || typeof schema !== "object") return [];
  const s = schema as { type?: unknown; anyOf?: unknown[]; oneOf?: unknown[] };
  if (typeof s.type === "string") return [s.type];
  if (Array.isArray(s.type)) return s.type.filter((t): t is string => typeof t === "string");
  return [...(s.anyOf ?? []), ...(s.oneOf ?? [])].flatMap(typesOf);
}

/**
 * Models often send numbers and booleans as strings (`"limit": "2"`). Where the schema wants a number
 * or boolean and the string is unambiguously one, convert it; anything else is left for zod to reject.
 */
export function coerceScalars(input: Record<string, unknown>, schema: JsonSchema): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(input)) {
    if (typeof value !== "string") continue;
    const types = typesOf(properties[key]);
    if (types.includes("string")) continue;
    let coerced: unknown;
    if ((types.includes("number") || types.includes("integer")) && NUMERIC.test(value))
      coerced = Number(value);
    else if (types.includes("boolean") && (value === "true" || value === "false")) coerced = value === "true";
    else continue;
    out ??= { ...input };
    out[key] = coerced;
  }
  return out ?? input;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const key of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join("");
}

function describeIssue(issue: z.core.$ZodIssue, input: unknown): string[] {
  const name = formatPath(issue.path);
  const value = valueAt(input, issue.path);
  switch (issue.code) {
    case "unrecognized_keys":
      return issue.keys.map((k) => {
        const full = name ? `${name}.${k}` : k;
        return `unexpected parameter \`${full}\`: this tool does not take it; remove it`;
      });
    case "invalid_type":
      if (value === undefined) return [`missing required parameter \`${name}\` (${issue.expected})`];
      return [`parameter \`${name}\` must be ${issue.expected}, but got ${describeType(value)}`];
    case "too_small": {
      const bound = `${issue.inclusive ? "at least" : "more than"} ${String(issue.minimum)}`;
      const what = issue.origin === "string" ? "length" : issue.origin === "array" ? "item count" : "value";
      return [
        `parameter \`${name}\` is too small: its ${what} must be ${bound} (got ${JSON.stringify(value)})`,
      ];
    }
    case "too_big": {
      const bound = `${issue.inclusive ? "at most" : "less than"} ${String(issue.maximum)}`;
      const what = issue.origin === "string" ? "length" : issue.origin === "array" ? "item count" : "value";
      return [
        `parameter \`${name}\` is too large: its ${what} must be ${bound} (got ${JSON.stringify(value)})`,
      ];
    }
    case "invalid_value":
      return [
        `parameter \`${name}\` must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")} (got ${JSON.stringify(value)})`,
      ];
    case "invalid_format":
      return [`parameter \`${name}\` must be a valid ${issue.format} (got ${JSON.stringify(value)})`];
    default:
      return [`parameter \`${name || "(input)"}\`: ${issue.message}`];
  }
}

/**
 * Validates a call's input against the tool's schema. The error names the tool and every offending
 * parameter in one message, so the model can fix them all in its next try.
 */
export function validateInput(tool: AnyTool, input: unknown): Validation {
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    return {
      ok: false,
      message: `${tool.name} was called with ${describeType(input)} input; it takes a JSON object of parameters.`,
    };
  }
  const coerced = coerceScalars(input as Record<string, unknown>, tool.toDefinition().input_schema);
  const parsed = tool.inputSchema.safeParse(coerced);
  if (parsed.success) return { ok: true, value: parsed.data };
  const problems = parsed.error.issues.flatMap((issue: z.core.$ZodIssue) => describeIssue(issue, coerced));
  const lines = [...new Set(problems)];
  return {
    ok: false,
    message:
      lines.length === 1
        ? `${tool.name} input is invalid: ${lines[0]}.`
        : `${tool.name} input is invalid (${lines.length} problems):\n${lines.map((l) => `- ${l}`).join("\n")}`,
  };
}
