import { type ChildProcess, execFileSync, spawnSync } from "node:child_process";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { atomicWrite } from "../../src/fs/atomic-write.js";
import { tempDir } from "../helpers/context.js";

/**
 * Through the helper (which every process uses), a write still carries the file's extended attributes over to
 * its new content, and keeps doing so after the helper was killed. Node cannot set or read xattrs, so
 * python3 does it; without python3, or on a file system without user xattrs, the attribute checks are skipped.
 */

const python = (code: string, ...args: string[]) =>
  spawnSync("python3", ["-c", code, ...args], { encoding: "utf8" });
const setXattr = (path: string) =>
  python("import os,sys; os.setxattr(sys.argv[1], 'user.cc_tools_test', b'kept')", path).status === 0;
const getXattr = (path: string) =>
  python("import os,sys; print(os.getxattr(sys.argv[1], 'user.cc_tools_test').decode())", path).stdout.trim();

/** Pids of this process's children whose command line contains `text`. */
function childrenRunning(text: string): number[] {
  const pids = readdirSync(`/proc/${process.pid}/task`).flatMap((tid) =>
    readFileSync(`/proc/${process.pid}/task/${tid}/children`, "utf8").trim().split(" ").filter(Boolean),
  );
  return pids.map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text);
    } catch {
      return false;
    }
  });
}

describe.runIf(process.platform === "linux")("the attribute helper", () => {
  it("carries extended attributes over through one long-lived helper, and again after it was killed", async () => {
    const path = join(tempDir(), "f.txt");
    writeFileSync(path, "old\n");
    const canCheck = setXattr(path);
    await atomicWrite(path, Buffer.from("new\n"));
    expect(readFileSync(path, "utf8")).toBe("new\n");
    if (canCheck) expect(getXattr(path)).toBe("kept");
    const helpers = childrenRunning("--attributes-only");
    expect(helpers).toHaveLength(1);
    await atomicWrite(path, Buffer.from("newer\n"));
    expect(childrenRunning("--attributes-only")).toEqual(helpers);

    process.kill(helpers[0]!, "SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 100));
    await atomicWrite(path, Buffer.from("newest\n"));
    expect(readFileSync(path, "utf8")).toBe("newest\n");
    if (canCheck) expect(getXattr(path)).toBe("kept");
    const restarted = childrenRunning("--attributes-only");
    expect(restarted).toHaveLength(1);
    expect(restarted).not.toEqual(helpers);
  });

  it("is what every process uses: a library host's writes spawn no cp of their own, and one sh for all", async () => {
    // Each fork of a cp made the next Edit of a large file fault in a fresh buffer (148 ms against 45 for
    // 10 MiB in process): nothing has to be set up for the helper.
    const dir = tempDir();
    const spawned: string[] = [];
    const onSpawn = (message: unknown) =>
      spawned.push((message as { process: ChildProcess }).process.spawnfile);
    subscribe("child_process", onSpawn);
    try {
      for (const name of ["a.txt", "b.txt", "c.txt"]) {
        const path = join(dir, name);
        writeFileSync(path, "old\n");
        await atomicWrite(path, Buffer.from("new\n"));
        await atomicWrite(path, Buffer.from("newer\n"));
        expect(readFileSync(path, "utf8")).toBe("newer\n");
      }
    } finally {
      unsubscribe("child_process", onSpawn);
    }
    expect(spawned.filter((file) => file.endsWith("/cp"))).toEqual([]);
    // The helper may already run from an earlier test of this file; at most one start here.
    expect(spawned.length).toBeLessThanOrEqual(1);
  });

  /** Runs an ES module script in a fresh Node process from the repository root (so `tsx` resolves). */
  const inFreshProcess = (script: string, limits = "") =>
    execFileSync(
      "bash",
      ["-c", `${limits}exec "$0" --import tsx --input-type=module -e "$1"`, process.execPath, script],
      { encoding: "utf8", cwd: fileURLToPath(new URL("../..", import.meta.url)) },
    ).trim();
  const atomicWriteModule = JSON.stringify(new URL("../../src/fs/atomic-write.ts", import.meta.url).href);

  it("leaves no process behind a worker thread that wrote: workers spawn cp themselves", () => {
    // A child spawned from a worker's event loop is not reaped once the worker has ended: a helper per
    // worker stayed a zombie until the process exited.
    const dir = tempDir();
    const worker = join(dir, "worker.mjs");
    writeFileSync(
      worker,
      `import { workerData } from "node:worker_threads";
      (await import(workerData.tsx)).register();
      const { atomicWrite } = await import(workerData.module);
      await atomicWrite(workerData.path, Buffer.from("new\\n"));`,
    );
    const out = inFreshProcess(`
      import { Worker } from "node:worker_threads";
      import { readFileSync, writeFileSync } from "node:fs";
      const written = [];
      for (let i = 0; i < 4; i++) {
        const path = ${JSON.stringify(dir)} + "/f" + i;
        writeFileSync(path, "old\\n");
        const w = new Worker(${JSON.stringify(worker)}, { workerData: { module: ${atomicWriteModule}, path, tsx: import.meta.resolve("tsx/esm/api") }, execArgv: [] });
        await new Promise((resolve, reject) => { w.on("exit", resolve); w.on("error", reject); });
        written.push(readFileSync(path, "utf8"));
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      const children = readFileSync("/proc/" + process.pid + "/task/" + process.pid + "/children", "utf8").trim();
      console.log(JSON.stringify({ written, children }));`);
    expect(JSON.parse(out)).toEqual({ written: ["new\n", "new\n", "new\n", "new\n"], children: "" });
  });

  it("a write goes on where no process can be spawned: an environment too large for exec", () => {
    // spawn throws E2BIG at once, for the helper and for cp alike; attributes are carried on a best effort.
    const out = inFreshProcess(`
      import { readFileSync, writeFileSync } from "node:fs";
      const { atomicWrite } = await import(${atomicWriteModule});
      const path = ${JSON.stringify(join(tempDir(), "f.txt"))};
      writeFileSync(path, "old\\n");
      process.env.CC_TOOLS_TEST_HUGE = "x".repeat(200_000);
      await atomicWrite(path, Buffer.from("new\\n"));
      console.log(JSON.stringify(readFileSync(path, "utf8")));`);
    expect(JSON.parse(out)).toBe("new\n");
  });

  it("a process out of file descriptors still writes, and lives on", () => {
    // spawn gives no pipes at EMFILE: the helper is given up and the write goes on as without it.
    const out = inFreshProcess(
      `
      import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
      const { atomicWrite } = await import(${atomicWriteModule});
      const path = ${JSON.stringify(join(tempDir(), "f.txt"))};
      writeFileSync(path, "old\\n");
      const held = [];
      try { for (;;) held.push(openSync("/dev/null", "r")); } catch {}
      for (let i = 0; i < 3; i++) closeSync(held.pop());
      let outcome;
      try { await atomicWrite(path, Buffer.from("new\\n")); outcome = readFileSync(path, "utf8"); } catch (error) { outcome = String(error); }
      for (const fd of held) closeSync(fd);
      await new Promise((resolve) => setTimeout(resolve, 200));
      console.log(JSON.stringify(outcome));`,
      "ulimit -n 64; ",
    );
    expect(JSON.parse(out)).toBe("new\n");
  });

  it("hands it any path: one with newlines, backslashes, a final newline, spaces at either end", async () => {
    const dir = tempDir();
    for (const name of ["two\nlines.txt", "back\\slash\\n.txt", "ends in newline\n", " spaced \\c ", "\\"]) {
      const path = join(dir, name);
      writeFileSync(path, "old\n");
      const canCheck = setXattr(path);
      await atomicWrite(path, Buffer.from("new\n"));
      expect(readFileSync(path, "utf8")).toBe("new\n");
      if (canCheck) expect(getXattr(path)).toBe("kept");
    }
    expect(readdirSync(dir)).toHaveLength(5);
  });
});
