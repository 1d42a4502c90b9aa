import { realpathSync } from "node:fs";
import { basename, isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { locateExecutable } from "../process/shells.js";
import type { McpServerConfig } from "../settings/types.js";

/**
 * cc-tools reads `.mcp.json` for its own downstream servers, and the same file is where a user lists
 * cc-tools for their client: without these checks it would start itself, which starts itself again. Three
 * lines of defence: a configured command that is recognisably cc-tools is not started at all; a server that
 * answers initialize as cc-tools (a wrapper script, an HTTP URL pointing back) is disconnected; and every
 * server cc-tools starts gets MCP_DEPTH_ENV, so a cc-tools started further down a chain starts no servers.
 */

/** Passed to every stdio server cc-tools starts: how many cc-tools are above it (inherited through others). */
export const MCP_DEPTH_ENV = "CC_TOOLS_MCP_DEPTH";

/** A cc-tools this many levels below another starts no MCP servers of its own. */
export const MCP_MAX_DEPTH = 1;

/** How many cc-tools started this process as (or through) an MCP server; 0 when none did. */
export function mcpDepth(env: NodeJS.ProcessEnv = process.env): number {
  const depth = Number(env[MCP_DEPTH_ENV]);
  return Number.isInteger(depth) && depth > 0 ? depth : 0;
}

/** Why this process starts no MCP servers, or undefined when it may. */
export function depthLimitReason(depth: number): string | undefined {
  if (depth < MCP_MAX_DEPTH) return undefined;
  return (
    `this cc-tools was itself started as an MCP server by a cc-tools (${MCP_DEPTH_ENV}=${depth}), so it ` +
    "starts no MCP servers of its own: that would let servers that list each other start without end"
  );
}

/** Our own CLI entry point: dist/bin/cc-tools.js, seen from dist/mcp and from the bundle's chunks alike. */
const OWN_ENTRY = fileURLToPath(new URL("../bin/cc-tools.js", import.meta.url));

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** `cc-tools`, `cc-tools.js`, `cc-tools.cmd`: what a global install or a checkout's bin is called. */
const OWN_COMMAND = /^cc-tools(\.c?m?js|\.cmd|\.ps1)?$/i;
/** A package spec naming cc-tools for npx and friends: `cc-tools`, `cc-tools@1.2.0`. */
const OWN_PACKAGE = /^cc-tools(@.*)?$/;
const SCRIPT_RUNNERS = new Set(["node", "nodejs", "bun", "tsx"]);
const PACKAGE_RUNNERS = new Set(["npx", "pnpx", "bunx"]);
/** `pnpm dlx`, `yarn dlx`, `npm exec` and `npm x` run a package like npx does. */
const RUNNER_SUBCOMMANDS = new Set(["dlx", "exec", "x"]);

function isOwnProgram(path: string, cwd: string): boolean {
  if (OWN_COMMAND.test(basename(path))) return true;
  const full = isAbsolute(path) || path.includes("/") ? resolve(cwd, path) : locateExecutable(path);
  return full !== undefined && real(full) === real(OWN_ENTRY);
}

/**
 * How a configured stdio server is recognisably cc-tools itself (its command, `node …/cc-tools.js`,
 * `npx cc-tools`), or undefined. Servers that hide it are caught by their initialize answer instead.
 */
export function selfInvocation(config: McpServerConfig, cwd: string): string | undefined {
  if ("url" in config) return undefined;
  const where = config.cwd ?? cwd;
  const command = basename(config.command).replace(/\.(exe|cmd)$/i, "");
  const args = config.args ?? [];
  if (isOwnProgram(config.command, where)) return `the command ${config.command} is cc-tools itself`;
  const operands = args.filter((a) => !a.startsWith("-"));
  if (SCRIPT_RUNNERS.has(command) && operands[0] !== undefined && isOwnProgram(operands[0], where))
    return `it runs cc-tools itself (${operands[0]})`;
  const viaSubcommand =
    RUNNER_SUBCOMMANDS.has(operands[0] ?? "") && ["npm", "pnpm", "yarn"].includes(command);
  const spec = PACKAGE_RUNNERS.has(command) ? operands[0] : viaSubcommand ? operands[1] : undefined;
  const packageFlag = args.find((a) => /^--package=/.test(a))?.slice("--package=".length);
  if ((spec && OWN_PACKAGE.test(spec)) || (packageFlag && OWN_PACKAGE.test(packageFlag)))
    return `it runs the cc-tools package (${command} ${spec ?? packageFlag})`;
  return undefined;
}

/** The sentence `cc-tools mcp-servers` shows for a server that is cc-tools itself. */
export function selfSkipReason(how: string): string {
  return `${how}; cc-tools does not start itself (this entry is for your MCP client, and its tools are these same tools)`;
}
