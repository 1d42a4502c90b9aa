import { describe, expect, it } from "vitest";
import { eventually, survivors, uniqueSeconds } from "../process/ps.js";
import { call, fileContext } from "../tools/file/util.js";

describe("a process that drops the clean-up marker", () => {
  it("is still found by its session when it also left the process group", async () => {
    const ctx = fileContext();
    const secs = uniqueSeconds();
    // set -m puts the background job in a group of its own; env -u removes the marker variable.
    const result = await call(ctx, "Bash", {
      command: `set -m; env -u CC_TOOLS_RUN sleep ${secs} >/dev/null 2>&1 & echo started`,
    });
    expect(result.text).toContain("started");
    expect(await eventually(() => survivors(`sleep ${secs}`).length === 0)).toBe(true);
  });
});
