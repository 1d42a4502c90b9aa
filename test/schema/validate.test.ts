import { describe, expect, it } from "vitest";
import { coerceScalars } from "../../src/schema/validate.js";

describe("coerceScalars", () => {
  const schema = {
    type: "object",
    properties: {
      limit: { type: "integer" },
      ratio: { type: "number" },
      flag: { type: "boolean" },
      name: { type: "string" },
      either: { anyOf: [{ type: "number" }, { type: "null" }] },
    },
  };

  it("turns numeric and boolean strings into numbers and booleans where the schema wants them", () => {
    expect(coerceScalars({ limit: "2", ratio: "0.5", flag: "true", either: "3" }, schema)).toEqual({
      limit: 2,
      ratio: 0.5,
      flag: true,
      either: 3,
    });
  });

  it("leaves strings alone where a string is wanted or the value is not unambiguous", () => {
    const input = { name: "42", limit: "two", flag: "yes", ratio: "" };
    expect(coerceScalars(input, schema)).toBe(input);
  });
});
