import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { groupAlive } from "../../src/process/groups.js";
import { supervise } from "../../src/process/supervise.js";
import { tempDir } from "../helpers/context.js";
import { eventually, survivors, uniqueSeconds } from "./ps.js";

function run(script: string, extra: Partial<Parameters<typeof supervise>[0]> = {}) {
  let out = "";
  const collect = (b: Buffer) => {
    out += b.toString();
  };
  const supervised = supervise({
    file: "bash",
    args: ["-c", script],
    cwd: tempDir(),
    env: process.env,
    onStdout: collect,
    onStderr: collect,
    ...extra,
  });
  return { supervised, output: () => out };
}

describe("supervise", () => {
  it("reports the exit code and the output", async () => {
    const { supervised, output } = run("echo out; exit 4");
    expect(await supervised.done).toMatchObject({ reason: "exited", exitCode: 4 });
    expect(output()).toBe("out\n");
  });

  it("gives the child stdin text, then end of file", async () => {
    const { supervised, output } = run("cat; echo end", { stdin: "from stdin\n" });
    await supervised.done;
    expect(output()).toBe("from stdin\nend\n");
  });

  it("gives the child its go-ahead on a descriptor of its own, stdin staying empty", async () => {
    const { supervised, output } = run(
      'IFS= read -r -n 1 go <&3; echo "go=$go"; read -r x; echo "stdin=$?"',
      {
        gated: true,
      },
    );
    expect(await supervised.done).toMatchObject({ reason: "exited", exitCode: 0 });
    expect(output()).toBe("go=g\nstdin=1\n");
  });

  it("starts nothing for a call cancelled before it started", async () => {
    const dir = tempDir();
    const controller = new AbortController();
    controller.abort();
    const { supervised } = run("touch started", { cwd: dir, signal: controller.signal });
    expect(await supervised.done).toMatchObject({ reason: "aborted", exitCode: null });
    expect(supervised.pid).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(join(dir, "started"))).toBe(false);
  });

  it("on time-out kills the whole group, grandchildren included", async () => {
    const secs = uniqueSeconds();
    const { supervised } = run(`sleep ${secs} & sleep ${secs}; wait`, { timeoutMs: 300 });
    const outcome = await supervised.done;
    expect(outcome.reason).toBe("timeout");
    expect(groupAlive(supervised.pid!)).toBe(false);
    expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
  });

  it("returns a time-out at its time, then escalates to SIGKILL when the group ignores SIGTERM", async () => {
    const { supervised } = run("trap '' TERM; echo ready; while :; do sleep 0.05; done", {
      // Long enough for bash to start and set the trap under load: SIGTERM before it would end it.
      timeoutMs: 1_000,
    });
    const outcome = await supervised.done;
    expect(outcome).toMatchObject({ reason: "timeout", stillStopping: true });
    expect(groupAlive(supervised.pid!)).toBe(true);
    expect((await supervised.finished).reason).toBe("timeout");
    expect(groupAlive(supervised.pid!)).toBe(false);
  });

  it("stops on abort", async () => {
    const controller = new AbortController();
    const { supervised } = run("sleep 30", { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect((await supervised.done).reason).toBe("aborted");
  });

  it("kills what a finished command left running and says so", async () => {
    const secs = uniqueSeconds();
    const { supervised } = run(`sleep ${secs} & echo started`);
    const outcome = await supervised.done;
    expect(outcome).toMatchObject({ reason: "exited", exitCode: 0, straysKilled: true });
    expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
  });

  it("kills what left the group with setsid, whether or not it kept the output pipes", async () => {
    const secs = uniqueSeconds();
    const { supervised } = run(
      `setsid sleep ${secs} & setsid bash -c 'sleep ${secs} & sleep ${secs}' >/dev/null 2>&1 </dev/null & echo started`,
    );
    const outcome = await supervised.done;
    expect(outcome).toMatchObject({ reason: "exited", exitCode: 0, straysKilled: true });
    expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
  });

  it("reports arguments the system refuses as too long instead of throwing", async () => {
    const { supervised } = run(`echo ${"x".repeat(200_000)}`);
    expect(await supervised.done).toMatchObject({
      reason: "spawnFailed",
      spawnError: expect.stringMatching(/E2BIG/),
    });
  });

  it("reports a program that cannot start", async () => {
    const supervised = supervise({
      file: "/nonexistent/program",
      args: [],
      cwd: tempDir(),
      env: process.env,
      onStdout: () => {},
      onStderr: () => {},
    });
    const outcome = await supervised.done;
    expect(outcome.reason).toBe("spawnFailed");
    expect(outcome.spawnError).toMatch(/ENOENT/);
  });
});
