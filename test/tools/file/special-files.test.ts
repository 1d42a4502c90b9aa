import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, fileContext } from "./util.js";

describe("files that are not regular files", () => {
  it("Read refuses devices and named pipes at once instead of hanging or filling memory", async () => {
    const ctx = fileContext();
    const fifo = join(ctx.workingDir, "pipe");
    execFileSync("mkfifo", [fifo]);
    const zero = await call(ctx, "Read", { file_path: "/dev/zero" });
    expect(zero.isError).toBe(true);
    expect(zero.text).toContain("/dev/zero is a character device, not a regular file");
    const pipe = await call(ctx, "Read", { file_path: "pipe" });
    expect(pipe.text).toContain("is a named pipe (FIFO), not a regular file");
  });

  it("Read still reads files whose size stat underreports, like those in /proc", async () => {
    const ctx = fileContext();
    const status = await call(ctx, "Read", { file_path: "/proc/self/status" });
    expect(status.isError).toBe(false);
    expect(status.text).toMatch(/^1\tName:/);
  });

  it("Write refuses to replace a device or a pipe", async () => {
    const ctx = fileContext();
    const fifo = join(ctx.workingDir, "pipe");
    execFileSync("mkfifo", [fifo]);
    const pipe = await call(ctx, "Write", { file_path: "pipe", content: "x" });
    expect(pipe.text).toContain(
      "is a named pipe (FIFO); Write, Edit and NotebookEdit change regular files only",
    );
    const devNull = await call(ctx, "Write", { file_path: "/dev/null", content: "x" });
    expect(devNull.text).toContain("/dev/null is a character device");
  });
});

describe("file names with a backslash", () => {
  it("are one name on Linux, for the permission check and the write alike", async () => {
    const ctx = fileContext();
    const result = await call(ctx, "Write", { file_path: "new\\file.txt", content: "x\n" });
    expect(result.isError, result.text).toBe(false);
    expect(readdirSync(ctx.workingDir)).toContain("new\\file.txt");
    expect((await call(ctx, "Read", { file_path: "new\\file.txt" })).text).toBe("1\tx");
  });
});
