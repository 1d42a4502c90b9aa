import { packageVersion } from "../core/version.js";

/** What the MCP server says about itself in its initialize result; shared by the SDK server and the opening. */
export function serverIdentity() {
  return {
    capabilities: { tools: { listChanged: true } },
    serverInfo: { name: "cc-tools", version: packageVersion() },
    instructions:
      "Claude Code's tools (Read, Edit, Bash, Grep, ...) on one workspace. State persists per connection: files " +
      "read, the shell's working directory and background jobs. Read a file before editing it.",
  };
}
