import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { groupWaitsForInput } from "../../src/process/input-wait.js";

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("groupWaitsForInput", () => {
  it("tells a command reading a pipe from one that sleeps, and an ended group from an unknown one", async () => {
    const reading = spawn("bash", ["-c", "read -r x < <(sleep 30)"], { detached: true, stdio: "ignore" });
    const sleeping = spawn("bash", ["-c", "sleep 30; true"], { detached: true, stdio: "ignore" });
    try {
      await wait(400);
      expect(groupWaitsForInput(reading.pid!)).toBe(true);
      expect(groupWaitsForInput(sleeping.pid!)).toBe(false);
    } finally {
      process.kill(-reading.pid!, "SIGKILL");
      process.kill(-sleeping.pid!, "SIGKILL");
    }
    await wait(200);
    expect(groupWaitsForInput(reading.pid!)).toBe(false);
  });
});
