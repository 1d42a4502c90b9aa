import { describe, expect, it } from "vitest";
import { KILL_GRACE_MS } from "../../src/process/groups.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";
import { eventually, survivors, uniqueSeconds } from "../process/ps.js";
import { call } from "../tools/file/util.js";

describe("a Bash time-out", () => {
  it("returns at its time even when the command ignores SIGTERM, and the kill finishes in the background", async () => {
    // The supervisor's own time-out (the sandbox's launcher has its own quick teardown, covered in test/sandbox).
    const dir = tempDir();
    const config = emptySettings(dir);
    config.sandbox.enabled = false;
    const ctx = testContext({ workingDir: dir, config });
    const marker = uniqueSeconds();
    const started = performance.now();
    const result = await call(ctx, "Bash", { command: `trap '' TERM; sleep ${marker}`, timeout: 1000 });
    const took = performance.now() - started;
    expect(result.isError).toBe(true);
    expect(result.text).toContain("timed out after 1 s and is still being stopped");
    // It did not wait out the kill grace, which a TERM-proof command would otherwise cost.
    expect(took).toBeLessThan(1000 + KILL_GRACE_MS);
    expect(await eventually(() => survivors(`sleep ${marker}`).length === 0, KILL_GRACE_MS + 5_000)).toBe(
      true,
    );
  });

  it("says 'was stopped' when the command dies at the SIGTERM", async () => {
    const ctx = testContext();
    const result = await call(ctx, "Bash", { command: `sleep ${uniqueSeconds()}`, timeout: 500 });
    expect(result.text).toContain("timed out after 500 ms and was stopped");
  });
});
