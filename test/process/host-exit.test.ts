import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/context.js";
import { eventually, survivors, uniqueSeconds } from "./ps.js";

const src = (path: string) => pathToFileURL(join(import.meta.dirname, "../../src", path)).href;

/**
 * A real host process: starts background jobs (one of them leaves its process group with setsid) and a
 * foreground command through runTool, then waits.
 */
function hostScript(secs: string, ending: string): string {
  return `
import { runTool } from ${JSON.stringify(src("executor/run.ts"))};
import { createToolContext } from ${JSON.stringify(src("context.ts"))};
const ctx = createToolContext({ workingDir: process.argv[2], permissionMode: "bypassPermissions" });
for (let i = 0; i < 2; i++) await runTool("Bash", { command: "sleep ${secs}", run_in_background: true }, ctx);
await runTool("Bash", { command: "setsid sleep ${secs} >/dev/null 2>&1 & wait", run_in_background: true }, ctx);
void runTool("Bash", { command: "sleep ${secs}; echo never" }, ctx);
setTimeout(() => { process.stdout.write("ready\\n"); ${ending} }, 300);
setInterval(() => {}, 1000);
`;
}

function startHost(secs: string, ending = "") {
  const dir = tempDir();
  const file = join(dir, "host.mts");
  writeFileSync(file, hostScript(secs, ending));
  // From the repository root, so `--import tsx` resolves to its node_modules.
  const child = spawn(process.execPath, ["--import", "tsx", file, dir], {
    cwd: join(import.meta.dirname, "../.."),
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, CC_TOOLS_LOG: "silent" },
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
    child.on("exit", (code) => reject(new Error(`host exited early (${code})`)));
  });
  ready.catch(() => {});
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return { child, ready, exited };
}

describe("host exit", () => {
  it.each(["SIGTERM", "SIGINT", "SIGHUP"] as const)(
    "on %s kills every job the host started",
    async (signal) => {
      const secs = uniqueSeconds();
      const host = startHost(secs);
      await host.ready;
      expect(survivors(`sleep ${secs}`).length).toBeGreaterThanOrEqual(4);
      host.child.kill(signal);
      await host.exited;
      expect(host.child.signalCode).toBe(signal);
      expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
    },
  );

  it("on process.exit kills every job the host started", async () => {
    const secs = uniqueSeconds();
    const host = startHost(secs, "process.exit(0);");
    await host.exited;
    expect(await eventually(() => survivors(secs).length === 0)).toBe(true);
  });
});
