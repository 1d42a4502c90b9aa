import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The built CLI, as `npx cc-tools` runs it. `npm test` builds before the tests run. */
export const CLI = fileURLToPath(new URL("../../dist/bin/cc-tools.js", import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function cli(
  args: string[],
  options: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {},
): CliRun {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    input: options.input ?? "",
    encoding: "utf8",
    env: { ...process.env, CC_TOOLS_LOG: "silent", ...options.env },
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
