import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { createToolContext, type ToolContextOptions } from "../../src/context.js";
import type { ToolContext } from "../../src/core/context.js";
import { Session } from "../../src/core/session.js";

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** A fresh real directory (realpath'd, so /tmp symlinks do not confuse path checks), removed after the test. */
export function tempDir(prefix = "cc-tools-test-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A context on a temp workspace. Tool tests default to bypassPermissions so they test the tool; permission
 * tests pass their own mode. The session is disposed (jobs killed) after the test.
 */
export function testContext(options: Partial<ToolContextOptions> = {}): ToolContext {
  const session = options.session ?? new Session({ dir: join(tempDir("cc-tools-session-"), "s") });
  const ctx = createToolContext({
    workingDir: options.workingDir ?? tempDir(),
    permissionMode: "bypassPermissions",
    ...options,
    session,
  });
  cleanups.push(() => session.dispose());
  return ctx;
}
