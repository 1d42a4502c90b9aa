// After tsc: bundle the CLI into dist/bin so `cc-tools` starts fast. Node 20 loads ESM file by file and
// has no compile cache; bundles (with lazily loaded chunks) halve the MCP server's cold start.
// dist/ keeps tsc's unbundled output for library users (`import ... from "cc-tools"`).
//
// Two bundles. The entry, dist/bin/cc-tools.js, is CommonJS (dist/bin/package.json says so): Node starts
// a CommonJS entry without setting up its ES module loader, and the entry is one file, so a client gets
// its tool list 15 to 20 ms sooner (src/cli/main.ts). The command line it loads afterwards is ESM, as
// program.mjs with its chunks (.mjs too, so the package.json beside them does not make them CommonJS).
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
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
//
// And the built-in is required when one of its exports is first read, not when a module importing it
// loads: an idle MCP server then has no node:crypto (3.4 MB resident on Node 24) or node:fs/promises,
// which only calls use. Their getters are made from the export names this Node (the build's) has;
// checkBuiltinImports below fails the build if bundled code imports a name that is not among them.
function exportNames(path) {
  const builtin = createRequire(import.meta.url)(path);
  const names = Object.getOwnPropertyNames(builtin).filter((key) => key !== "default");
  return { names, shown: Object.keys(builtin) };
}

/**
 * Every name a bundled module imports from a built-in (`import { a, b as c } from "node:x"`, or `export { … }
 * from`) must be one of the getters builtinsRequired made from this Node's exports: a name added in a
 * later Node would otherwise read as undefined there. (A module that takes a built-in whole gets the
 * names of the Node it runs on: see takesWhole.)
 */
function checkBuiltinImports(metafile) {
  const missing = [];
  for (const [file, { imports }] of Object.entries(metafile.inputs)) {
    const builtins = new Set(
      imports.flatMap(({ original, kind }) =>
        kind === "import-statement" && original && isBuiltin(original) ? [original] : [],
      ),
    );
    if (builtins.size === 0 || !existsSync(file)) continue;
    const source = readFileSync(file, "utf8");
    for (const original of builtins) {
      const names = new Set(exportNames(original).names);
      const quoted = literal(original);
      const clause = new RegExp(
        `(?:import|export)\\s*(?:type\\s+)?(?:[\\w$]+\\s*,\\s*)?\\{([^}]*)\\}\\s*from\\s*["']${quoted}["']`,
        "g",
      );
      for (const [, list] of source.matchAll(clause)) {
        for (const part of list.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, "").split(",")) {
          const name = part
            .trim()
            .replace(/^type\s+/, "")
            .split(/\s+as\s+/)[0]
            .trim();
          if (name && name !== "default" && !names.has(name)) missing.push(`${file}: ${original}.${name}`);
        }
      }
    }
  }
  if (missing.length > 0) {
    throw new Error(
      `These imports name exports that Node ${process.version} (the build's) does not have, so the bundle cannot make them lazily:\n${missing.join("\n")}\nBuild with a Node that has them, or import the module's default export and read the name from it.`,
    );
  }
}

/** Escapes `text` for use inside a regular expression. */
const literal = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** Sources read by the plugin, by path (an importer of several built-ins is read once). */
const sources = new Map();

/**
 * Whether `importer` takes the built-in `specifier` whole (`import * as x`, `export * as x`, `export *`):
 * what such a module reads from it is not known from its import clause, and may be a name only a newer
 * Node has (the Anthropic SDK reads `fs.glob` where Node 22 has it).
 */
function takesWhole(importer, specifier) {
  if (!sources.has(importer))
    sources.set(importer, existsSync(importer) ? readFileSync(importer, "utf8") : "");
  const quoted = `["']${literal(specifier)}["']`;
  return new RegExp(`(?:import|export)\\s*\\*\\s*(?:as\\s+[\\w$]+\\s*)?from\\s*${quoted}`).test(
    sources.get(importer),
  );
}

/** The CommonJS module behind a built-in's imports: lazy getters, or (`whole`) the built-in's names as this Node has them. */
function requiredModule(path, whole) {
  const quoted = JSON.stringify(path);
  const lines = whole
    ? [
        `const builtin = require(${quoted});`,
        'const names = Object.getOwnPropertyNames(builtin).filter((key) => key !== "default");',
        "const shown = new Set(Object.keys(builtin));",
        "const load = () => builtin;",
      ]
    : [
        "let builtin;",
        `const load = () => (builtin ??= require(${quoted}));`,
        `const { names, shown: shownList } = ${JSON.stringify(exportNames(path))};`,
        "const shown = new Set(shownList);",
      ];
  return [
    ...lines,
    `Object.defineProperty(exports, "__esModule", { value: true });`,
    "for (const key of names)",
    "  Object.defineProperty(exports, key, { get: () => load()[key], enumerable: shown.has(key) });",
    `Object.defineProperty(exports, "default", { get: load, enumerable: true });`,
  ].join("\n");
}

const builtinsRequired = {
  name: "builtins-required",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^[a-z0-9_:/]+$/ }, ({ path, kind, importer }) =>
      kind === "import-statement" && isBuiltin(path)
        ? { path, namespace: takesWhole(importer, path) ? "builtin-whole" : "builtin" }
        : undefined,
    );
    pluginBuild.onResolve({ filter: /^required(-whole)?:/ }, ({ path }) => {
      const [kind, ...rest] = path.split(":");
      return { path: rest.join(":"), namespace: kind };
    });
    for (const [namespace, required] of [
      ["builtin", "required"],
      ["builtin-whole", "required-whole"],
    ]) {
      pluginBuild.onLoad({ filter: /.*/, namespace }, ({ path }) => {
        const from = JSON.stringify(`${required}:${path}`);
        return { contents: `export * from ${from};\nexport { default } from ${from};`, loader: "js" };
      });
      // The module's own require() is left alone: esbuild keeps built-ins external.
      pluginBuild.onLoad({ filter: /.*/, namespace: required }, ({ path }) => ({
        contents: requiredModule(path, required === "required-whole"),
        loader: "js",
      }));
    }
  },
};

const program = await build({
  ...common,
  entryPoints: { program: dist("cli/program.js") },
  metafile: true,
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
checkBuiltinImports(program.metafile);

await build({
  ...common,
  entryPoints: { "cc-tools": dist("cli/main.js") },
  format: "cjs",
  // The entry's modules find files beside it (mcp-opening.json) by their URL, made when first read: no
  // path work may run before the compilers are held (src/cli/hold-compilers.ts).
  define: { "import.meta.url": "__ccToolsEntry.url" },
  // The directive first: esbuild's own "use strict" comes after the banner, where it is no directive.
  banner: {
    js: '"use strict";\nconst __ccToolsEntry = { get url() { return require("node:url").pathToFileURL(__filename).href; } };',
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
