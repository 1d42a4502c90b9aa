import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Session, type SessionSlot } from "../../src/core/session.js";

const counter: SessionSlot<{ n: number }> = {
  key: "counter",
  create: () => ({ n: 0 }),
  save: (v) => v.n,
  load: (data) => ({ n: Number(data) }),
};

describe("Session", () => {
  it("keeps each slot's state per session and restores saved state", () => {
    const a = new Session();
    const b = new Session();
    a.get(counter).n = 5;
    expect(b.get(counter).n).toBe(0);
    const restored = new Session({ saved: a.snapshot() });
    expect(restored.get(counter).n).toBe(5);
  });

  it("removes its own temp dir when nothing was left in it, and keeps files results point to", async () => {
    const empty = new Session();
    const emptyDir = empty.dir;
    await empty.dispose();
    expect(existsSync(emptyDir)).toBe(false);

    const used = new Session();
    writeFileSync(join(used.dir, "spilled.txt"), "output");
    await used.dispose();
    expect(existsSync(join(used.dir, "spilled.txt"))).toBe(true);
  });
});
