import { packageVersion } from "../core/version.js";

/** The name cc-tools gives itself on both sides of MCP; a server answering with it is cc-tools itself. */
export const SERVER_NAME = "cc-tools";

/** What the MCP server says about itself in its initialize result; shared by the SDK server and the opening. */
export function serverIdentity() {
  return {
    capabilities: { tools: { listChanged: true } },
    serverInfo: { name: SERVER_NAME, version: packageVersion() },
    instructions:
      "Claude Code's tools (Read, Edit, Bash, Grep, ...) on one workspace. State persists per connection: files " +
      "read, the shell's working directory and background jobs. Read a file with this server's Read before " +
      "changing it with its Edit or Write: reads made with other tools do not count.",
  };
}

/** What cc-tools says about itself as an MCP client. */
export function clientIdentity() {
  return { name: SERVER_NAME, version: packageVersion() };
}
