import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { groupWaitsForInput } from "../../src/process/input-wait.js";
import { eventually } from "./ps.js";

function group(script: string) {
  return spawn("bash", ["-c", script], { detached: true, stdio: "ignore" });
}

describe("groupWaitsForInput", () => {
  it("tells input nobody will send from sleeping, busy work and a pipeline feeding itself", async () => {
    const fifo = group('f=$(mktemp -u); mkfifo "$f"; read -r x < "$f"');
    const sleeping = group("sleep 30; true");
    const busy = group("exec node -e 'for (;;) {}'");
    const pipeline = group("(sleep 30; echo x) | cat");
    const all = [fifo, sleeping, busy, pipeline];
    try {
      // The FIFO's group needs bash, mktemp and mkfifo before it blocks: seconds under load.
      expect(await eventually(() => groupWaitsForInput(fifo.pid!) === true, 10_000)).toBe(true);
      // The others are never waiting for input once the kernel can tell. Until then the answer may be
      // undefined, and it can be again while one changes program (bash exec'ing node sleeps in its start).
      for (const child of [sleeping, busy, pipeline]) {
        expect(await eventually(() => groupWaitsForInput(child.pid!) === false, 10_000)).toBe(true);
      }
      for (const child of [sleeping, busy, pipeline]) expect(groupWaitsForInput(child.pid!)).not.toBe(true);
    } finally {
      for (const child of all) process.kill(-child.pid!, "SIGKILL");
    }
    expect(await eventually(() => groupWaitsForInput(fifo.pid!) === false)).toBe(true);
  });
});
