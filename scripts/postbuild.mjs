// After tsc: bundle the CLI into dist/bin so `cc-tools` starts fast. Node 20 loads ESM file by file and
// has no compile cache; bundles (with lazily loaded chunks) halve the MCP server's cold start.
// dist/ keeps tsc's unbundled output for library users (`import ... from "cc-tools"`).
//
// Two bundles. The entry, dist/bin/cc-tools.js, is CommonJS (dist/bin/package.json says so): Node starts
// a CommonJS entry without setting up its ES module loader, and the entry is one file, so a client gets
// its tool list 15 to 20 ms sooner (src/cli/main.ts). The command line it loads afterwards is ESM, as
// program.mjs with its chunks (.mjs too, so the package.json beside them does not make them CommonJS).
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = new URL("..", import.meta.url);
const outdir = fileURLToPath(new URL("dist/bin/", root));
const dist = (path) => fileURLToPath(new URL(`dist/${path}`, root));
rmSync(outdir, { recursive: true, force: true });

const common = {
  outdir,
  bundle: true,
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  minifyWhitespace: true,
  minifySyntax: true,
  // Node prints the whole source line of an uncaught exception: keep lines short enough to read.
  lineLimit: 500,
  logLevel: "warning",
};

// Node's built-in modules are required, not imported. An ES module import of one makes Node build the
// module's namespace, which reads every export, and some exports are getters that load more: on Node 22
// and 24, `import { createServer } from "node:http"` reads http.WebSocket, which loads undici, http2, tls
// and zlib, 14 to 18 MB of resident memory a server that never fetches does not need (require: 3 to 4 MB).
// Each static import of one resolves to a small ES module that re-exports a CommonJS module of one line
// (the require): esbuild's interop then copies the built-in's exports (as getters, read only when used)
// once per built-in, where importing the CommonJS module directly would copy them once per importing file
// (194 copies, about 0.6 MB of closures). Dynamic imports stay imports: esbuild would give the chunk it
// makes of such a module a default export only.
//
// That CommonJS module exports getters of its own, and `default` the built-in itself, rather than the
// built-in: esbuild's interop reads the property descriptor of every export it copies, and on Node 24 reading
// the descriptor of an export Node loads lazily loads it. node:util's alone brought parseArgs, diff,
// styleText and worker_threads (through util's lazily loaded helpers) into every server, for nothing the
// server uses: 2 to 3 MB resident (docs/PERFORMANCE.md, "Idle RSS"). Export names are read, never descriptors.
const builtinsRequired = {
  name: "builtins-required",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^[a-z0-9_:/]+$/ }, ({ path, kind }) =>
      kind === "import-statement" && isBuiltin(path) ? { path, namespace: "builtin" } : undefined,
    );
    pluginBuild.onResolve({ filter: /^required:/ }, ({ path }) => ({
      path: path.slice("required:".length),
      namespace: "required",
    }));
    pluginBuild.onLoad({ filter: /.*/, namespace: "builtin" }, ({ path }) => {
      const required = JSON.stringify(`required:${path}`);
      return { contents: `export * from ${required};\nexport { default } from ${required};`, loader: "js" };
    });
    // The module's own require() is left alone: esbuild keeps built-ins external.
    pluginBuild.onLoad({ filter: /.*/, namespace: "required" }, ({ path }) => ({
      contents: [
        `const builtin = require(${JSON.stringify(path)});`,
        `Object.defineProperty(exports, "__esModule", { value: true });`,
        // Hidden exports (fs.F_OK, crypto.fips: deprecated ones) stay hidden, so enumerating a namespace
        // warns no more than Node's own would. Object.keys loads nothing lazily; a descriptor read would.
        "const shown = new Set(Object.keys(builtin));",
        "for (const key of Object.getOwnPropertyNames(builtin))",
        `  if (key !== "default") Object.defineProperty(exports, key, { get: () => builtin[key], enumerable: shown.has(key) });`,
        `Object.defineProperty(exports, "default", { value: builtin, enumerable: true });`,
      ].join("\n"),
      loader: "js",
    }));
  },
};

await build({
  ...common,
  entryPoints: { program: dist("cli/program.js") },
  plugins: [builtinsRequired],
  splitting: true,
  format: "esm",
  outExtension: { ".js": ".mjs" },
  // Native binaries, and packages only some tool calls load, stay outside the bundle. Dependencies loaded
  // on first use through lazyModule (src/core/lazy-module.ts) are resolved at run time.
  // jsonc-parser's package points bundlers at a UMD build whose dynamic requires esbuild cannot follow.
  external: ["sharp", "@vscode/ripgrep", "pdf-parse", "jsonc-parser", "iconv-lite", "chardet", "yaml"],
  // Bundled CommonJS dependencies call require(); give them one in ESM.
  banner: {
    js: "import { createRequire as __ccToolsRequire } from 'node:module'; const require = __ccToolsRequire(import.meta.url);",
  },
});

await build({
  ...common,
  entryPoints: { "cc-tools": dist("cli/main.js") },
  format: "cjs",
  // The entry's modules find files beside it (mcp-opening.json) by their URL.
  define: { "import.meta.url": "__ccToolsEntryUrl" },
  // The directive first: esbuild's own "use strict" comes after the banner, where it is no directive.
  banner: {
    js: '"use strict";\nconst __ccToolsEntryUrl = require("node:url").pathToFileURL(__filename).href;',
  },
  plugins: [
    {
      name: "program-stays-esm",
      setup(pluginBuild) {
        // import("./program.js") stays a dynamic import of the ESM bundle, loaded once the opening is done.
        pluginBuild.onResolve({ filter: /^\.\/program\.js$/ }, () => ({
          path: "./program.mjs",
          external: true,
        }));
      },
    },
  ],
});
writeFileSync(new URL("dist/bin/package.json", root), `${JSON.stringify({ type: "commonjs" })}\n`);
chmodSync(new URL("dist/bin/cc-tools.js", root), 0o755);

// The MCP server answers a client's opening (initialize, tools/list) from this file while the SDK and the
// tools load (src/mcp/stdio-connection.ts). It is computed from the same code the server runs.
const { builtinTools, toMcpTools } = await import(new URL("dist/registry.js", root).href);
const { serverIdentity } = await import(new URL("dist/mcp/identity.js", root).href);
const { SUPPORTED_PROTOCOL_VERSIONS, Server } = await import("@modelcontextprotocol/server");
/** The revision the recorded answers are asked in; the SDK's discover answer lists every one it serves. */
const MODERN_REVISION = "2026-07-28";

/**
 * How the SDK's stdio server answers a 2026-07-28 client's `server/discover` and `tools/list` (less the
 * tools): asked of it here, with the server's identity, so the opening answers them as it would.
 */
async function modernOpening() {
  const { serveStdio } = await import("@modelcontextprotocol/server/stdio");
  const { capabilities, serverInfo, instructions } = serverIdentity();
  const sent = new Map();
  const transport = {
    start: async () => {},
    send: async (m) => void sent.set(m.id, m),
    close: async () => {},
  };
  const handle = serveStdio(
    () => {
      const server = new Server(serverInfo, { capabilities, instructions });
      server.setRequestHandler("tools/list", () => ({ tools: [] }));
      return server;
    },
    { transport },
  );
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN_REVISION,
    "io.modelcontextprotocol/clientInfo": { name: "cc-tools-build", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  transport.onmessage({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta } });
  transport.onmessage({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta } });
  for (let wait = 0; wait < 200 && sent.size < 2; wait++) await new Promise((r) => setTimeout(r, 10));
  await handle.close();
  const discover = sent.get(1)?.result;
  const { tools, ...listStamp } = sent.get(2)?.result ?? {};
  if (!discover?.supportedVersions || !Array.isArray(tools)) {
    throw new Error(
      `the SDK did not answer the 2026-07-28 opening as expected: ${JSON.stringify([...sent])}`,
    );
  }
  return { discover, listStamp };
}

const opening = {
  protocolVersions: SUPPORTED_PROTOCOL_VERSIONS,
  modern: await modernOpening(),
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
