import { describe, expect, it } from "vitest";
import { ToolError } from "../../src/core/errors.js";
import { lazyModule } from "../../src/core/lazy-module.js";

describe("lazyModule", () => {
  it("loads a dependency on first use, once", () => {
    const yaml = lazyModule<typeof import("yaml")>("yaml");
    expect(yaml().parse("a: 1")).toEqual({ a: 1 });
    expect(yaml()).toBe(yaml());
  });

  it("says which dependency is missing and what to do, at the call that needs it", () => {
    const missing = lazyModule<unknown>("cc-tools-no-such-dependency");
    expect(() => missing()).toThrow(ToolError);
    expect(() => missing()).toThrow(/cc-tools-no-such-dependency is not installed.*Reinstall cc-tools/);
  });
});
