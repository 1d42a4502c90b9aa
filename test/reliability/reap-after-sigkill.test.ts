import { spawn, spawnSync } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/context.js";
import { eventually, survivors, uniqueSeconds } from "../process/ps.js";

const src = (path: string) => pathToFileURL(join(import.meta.dirname, "../../src", path)).href;
const ROOT = join(import.meta.dirname, "../..");

/** A host that starts background jobs (one leaves its group and session with setsid), then waits. */
function hostScript(secs: string): string {
  return `
import { runTool } from ${JSON.stringify(src("executor/run.ts"))};
import { createToolContext } from ${JSON.stringify(src("context.ts"))};
import { emptySettings } from ${JSON.stringify(src("settings/types.ts"))};
// Unsandboxed: inside the sandbox a command dies with its host (--die-with-parent), leaving nothing to reap.
const config = emptySettings(process.argv[2]);
config.sandbox.enabled = false;
const ctx = createToolContext({ workingDir: process.argv[2], permissionMode: "bypassPermissions", config });
await runTool("Bash", { command: "sleep ${secs}", run_in_background: true }, ctx);
await runTool("Bash", { command: "setsid sleep ${secs} >/dev/null 2>&1 & wait", run_in_background: true }, ctx);
process.stdout.write("ready\\n");
setInterval(() => {}, 1000);
`;
}

/** A later host that runs one command, which opens the registry and reaps. */
const laterHost = `
import { runTool } from ${JSON.stringify(src("executor/run.ts"))};
import { createToolContext } from ${JSON.stringify(src("context.ts"))};
import { emptySettings } from ${JSON.stringify(src("settings/types.ts"))};
// Unsandboxed: inside the sandbox a command dies with its host (--die-with-parent), leaving nothing to reap.
const config = emptySettings(process.argv[2]);
config.sandbox.enabled = false;
const ctx = createToolContext({ workingDir: process.argv[2], permissionMode: "bypassPermissions", config });
await runTool("Bash", { command: "true" }, ctx);
`;

describe("after a SIGKILL of the host", () => {
  it("the next host reaps the command trees the killed one left", async () => {
    const dir = tempDir();
    const runtime = tempDir("cc-tools-runtime-");
    const env = { ...process.env, CC_TOOLS_LOG: "silent", XDG_RUNTIME_DIR: runtime };
    const secs = uniqueSeconds();
    writeFileSync(join(dir, "host.mts"), hostScript(secs));
    writeFileSync(join(dir, "later.mts"), laterHost);
    const host = spawn(process.execPath, ["--import", "tsx", join(dir, "host.mts"), dir], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
      env,
    });
    await new Promise<void>((resolve) =>
      host.stdout.on("data", (d: Buffer) => d.includes("ready") && resolve()),
    );
    host.kill("SIGKILL");
    await new Promise((resolve) => host.on("exit", resolve));
    // No exit handler ran: the jobs live on, and the registry names them.
    expect(survivors(`sleep ${secs}`).length).toBeGreaterThanOrEqual(2);
    expect(readdirSync(join(runtime, "cc-tools", "groups"))).toHaveLength(1);

    const later = spawnSync(process.execPath, ["--import", "tsx", join(dir, "later.mts"), dir], {
      cwd: ROOT,
      env,
      timeout: 30_000,
    });
    expect(later.status).toBe(0);
    expect(await eventually(() => survivors(`sleep ${secs}`).length === 0)).toBe(true);
    expect(readdirSync(join(runtime, "cc-tools", "groups"))).toEqual([]);
  }, 60_000);

  it("a finished command's group leaves the registry on the next turn, and the file with the last one", () => {
    const dir = tempDir();
    const runtime = tempDir("cc-tools-runtime-");
    writeFileSync(
      join(dir, "host.mts"),
      `
import { readdirSync, readFileSync } from "node:fs";
import { runTool } from ${JSON.stringify(src("executor/run.ts"))};
import { createToolContext } from ${JSON.stringify(src("context.ts"))};
import { emptySettings } from ${JSON.stringify(src("settings/types.ts"))};
// Unsandboxed: the registry does not depend on it, and a background job in bwrap can fail to start when
// another test's socket in /tmp vanishes between the policy and the mount (only foreground runs retry).
const config = emptySettings(process.argv[2]);
config.sandbox.enabled = false;
const ctx = createToolContext({ workingDir: process.argv[2], permissionMode: "bypassPermissions", config });
const groups = ${JSON.stringify(join(runtime, "cc-tools", "groups"))};
const listed = () => readdirSync(groups).map((f) => readFileSync(groups + "/" + f, "utf8").split("\\n").length - 2);
await runTool("Bash", { command: "sleep 30", run_in_background: true }, ctx);
await runTool("Bash", { command: "true" }, ctx);
await new Promise((resolve) => setImmediate(resolve));
const withBackground = listed();
await ctx.session.dispose();
await new Promise((resolve) => setImmediate(resolve));
process.stdout.write(JSON.stringify([withBackground, listed()]));
process.kill(process.pid, "SIGKILL");
`,
    );
    const host = spawnSync(process.execPath, ["--import", "tsx", join(dir, "host.mts"), dir], {
      cwd: ROOT,
      env: { ...process.env, CC_TOOLS_LOG: "silent", XDG_RUNTIME_DIR: runtime },
      encoding: "utf8",
      timeout: 30_000,
    });
    // One group (the background job's) while it runs; no file once nothing runs, though no exit handler ran.
    expect({ signal: host.signal, stdout: host.stdout, stderr: host.stderr }).toMatchObject({
      signal: "SIGKILL",
      stdout: "[[1],[]]",
    });
  }, 60_000);
});
