// After tsc: bundle the CLI into dist/bin so `cc-tools` starts fast. Node 20 loads ESM file by file and
// has no compile cache; one bundle (with lazily loaded chunks) halves the MCP server's cold start.
// dist/ keeps tsc's unbundled output for library users (`import ... from "cc-tools"`).
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = new URL("..", import.meta.url);
const outdir = fileURLToPath(new URL("dist/bin/", root));
rmSync(outdir, { recursive: true, force: true });

await build({
  entryPoints: { "cc-tools": fileURLToPath(new URL("dist/cli/main.js", root)) },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  // Native binaries, and packages only some tool calls load, stay outside the bundle.
  // Dependencies loaded on first use through lazyModule (src/core/lazy-module.ts) are resolved at run time.
  // jsonc-parser's package points bundlers at a UMD build whose dynamic requires esbuild cannot follow.
  external: ["sharp", "@vscode/ripgrep", "pdf-parse", "jsonc-parser", "iconv-lite", "chardet", "yaml"],
  // Bundled CommonJS dependencies call require(); give them one in ESM.
  banner: {
    js: "import { createRequire as __ccToolsRequire } from 'node:module'; const require = __ccToolsRequire(import.meta.url);",
  },
  logLevel: "warning",
});
chmodSync(new URL("dist/bin/cc-tools.js", root), 0o755);

// The MCP server answers a client's opening (initialize, tools/list) from this file while the SDK and the
// tools load (src/mcp/stdio-connection.ts). It is computed from the same code the server runs.
const { builtinTools, toMcpTools } = await import(new URL("dist/registry.js", root).href);
const { serverIdentity } = await import(new URL("dist/mcp/identity.js", root).href);
const { SUPPORTED_PROTOCOL_VERSIONS } = await import("@modelcontextprotocol/server");
const opening = {
  protocolVersions: SUPPORTED_PROTOCOL_VERSIONS,
  ...serverIdentity(),
  tools: toMcpTools(builtinTools()),
  // What each tool needs of its host; the connection lists a tool only where the server will serve it.
  requires: Object.fromEntries(
    builtinTools()
      .tools.filter((t) => t.requires.length > 0)
      .map((t) => [t.name, t.requires]),
  ),
};
writeFileSync(new URL("dist/bin/mcp-opening.json", root), `${JSON.stringify(opening)}\n`);
