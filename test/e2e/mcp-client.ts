import { join } from "node:path";
import { Client, type ClientOptions } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach } from "vitest";
import { tempDir } from "../helpers/context.js";
import { CLI } from "./cli.js";

/** A temporary workspace and the environment that keeps the server's user state out of the real home. */
export function workspace() {
  const dir = tempDir();
  const home = tempDir("cc-tools-home-");
  return {
    dir,
    env: { CLAUDE_CONFIG_DIR: home, CC_TOOLS_STATE_DIR: join(home, "state"), CC_TOOLS_LOG: "silent" },
  };
}

/** A result's text blocks, joined. */
export const text = (result: { content?: unknown }) =>
  ((result.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? "").join("\n");

/** Clients to close after the test that connected them (connectCli's, and those given to closeAfterTest). */
const clients: Client[] = [];
afterEach(async () => {
  while (clients.length > 0) await clients.pop()!.close();
});

/** Closes `client` when the test ends, whatever its transport. */
export function closeAfterTest(client: Client): Client {
  clients.push(client);
  return client;
}

/** Connects `client` to the built `cc-tools mcp` serving `dir`, as an MCP host would start it. */
export async function connectCli(
  client: Client,
  dir: string,
  env: Record<string, string>,
  extraArgs: string[] = [],
): Promise<Client> {
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp", "--cwd", dir, ...extraArgs],
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: "ignore",
    }),
  );
  return closeAfterTest(client);
}

/** A form the server asked the client's user to fill in (elicitation). */
export interface Asked {
  message: string;
  requestedSchema: { properties: Record<string, unknown> };
}

/** The user's answer to a form. */
export interface Answer {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown>;
}

/** An SDK client named `name`; with `elicit` it declares elicitation and fills forms with it. */
export function sdkClient(
  name: string,
  elicit?: (asked: Asked) => Answer,
  options: ClientOptions = {},
): Client {
  const client = new Client(
    { name, version: "1" },
    { ...options, capabilities: elicit ? { elicitation: { form: {} } } : {} },
  );
  if (elicit) {
    client.setRequestHandler("elicitation/create", (request) => elicit(request.params as never) as never);
  }
  return client;
}
