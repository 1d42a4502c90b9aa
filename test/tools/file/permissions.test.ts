import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir, testContext } from "../../helpers/context.js";
import { call } from "./util.js";

describe("file tools and permissions", () => {
  it("match path rules on the resolved path: a denied Read never runs, an allowed one does", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "secret"));
    writeFileSync(join(dir, "secret", "key.txt"), "k\n");
    writeFileSync(join(dir, "open.txt"), "o\n");
    const ctx = testContext({
      workingDir: dir,
      permissionMode: "default",
      rules: [{ rule: "Read(./secret/**)", behavior: "deny", source: { scope: "cli", root: dir } }],
    });
    const denied = await call(ctx, "Read", { file_path: "secret/key.txt" });
    expect(denied.isError).toBe(true);
    expect(denied.text).toMatch(/denied/i);
    expect((await call(ctx, "Read", { file_path: "open.txt" })).text).toBe("1\to");
  });

  it("ask before writing in default mode, and refuse when nobody can be asked", async () => {
    const ctx = testContext({ permissionMode: "default" });
    const result = await call(ctx, "Write", { file_path: "new.txt", content: "x" });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/Permission to use Write was denied/);
  });
});
