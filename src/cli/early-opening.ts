import { readOpening, StdioConnection } from "../mcp/stdio-connection.js";
import { servesStdio } from "./stdio-args.js";

export { servesStdio };

/**
 * `cc-tools mcp` over stdio answers a client's opening (initialize, tools/list) from build-time data. The
 * entry starts that connection before it loads the command line (commander, settings, the permission
 * rules), so a client has its tool list in about the time Node takes to start; `cc-tools mcp` then takes
 * over the connection that is already answering.
 */

/** The cheap part of the test for a configured model (Task is listed then), known from the environment alone. */
export function modelMayBeConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.ANTHROPIC_API_KEY || env.ANTHROPIC_AUTH_TOKEN || env.OPENAI_BASE_URL);
}

/**
 * Whether the entry answers the opening before loading the command line: a client on stdin (not a person
 * at a terminal, who should see usage errors and the server's greeting at once).
 */
function opensEarly(argv: readonly string[]): boolean {
  return servesStdio(argv) && !process.stdin.isTTY;
}

/**
 * The connection the entry started, waiting for `cc-tools mcp` to take it over. Kept on the global object
 * under a registered symbol, not in this module: the entry is a CommonJS bundle of its own
 * (scripts/postbuild.mjs) and the command line an ESM one, so each has its own copy of this module.
 */
const EARLY = Symbol.for("cc-tools.early-stdio-connection");
const holder = globalThis as { [EARLY]?: Promise<StdioConnection> };

function takeEarly(): Promise<StdioConnection> | undefined {
  const early = holder[EARLY];
  delete holder[EARLY];
  return early;
}

function openStdioConnection(): Promise<StdioConnection> {
  return Promise.resolve(
    new StdioConnection(process.stdin, process.stdout, readOpening(), modelMayBeConfigured()),
  );
}

/**
 * Starts answering the opening on stdin/stdout when `argv` serves stdio to a client. Resolves once the
 * opening is done (initialize and tools/list answered, a message that needs the server, or the client
 * gone): loading the command line before then would hold up the answer to tools/list, which the client
 * sends only after it has the answer to initialize. Resolves at once otherwise.
 */
export async function startEarlyOpening(argv: readonly string[]): Promise<void> {
  if (!opensEarly(argv)) return;
  const early = openStdioConnection();
  holder[EARLY] = early;
  await (await early).needsServer;
}

/** The stdio connection: the one the entry started, or (in tests and unbundled runs) a new one. */
export function stdioConnection(): Promise<StdioConnection> {
  return takeEarly() ?? openStdioConnection();
}

/**
 * Once the command line is done: closes the connection the entry started if `cc-tools mcp` never took it
 * over (a usage error, a bad settings file), so that it does not keep the process alive reading stdin.
 */
export async function closeUntakenStdio(): Promise<void> {
  const untaken = takeEarly();
  if (!untaken) return;
  await (await untaken).close();
  process.stdin.destroy();
}
