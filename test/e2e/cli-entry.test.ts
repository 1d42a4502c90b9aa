import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { servesStdio } from "../../src/cli/early-opening.js";
import { NEWEST_VERIFIED_V8_MAJOR } from "../../src/process/compilers.js";
import { tempDir } from "../helpers/context.js";
import { eventually } from "../process/ps.js";
import { CLI } from "./cli.js";

const V8_MAJOR = Number(process.versions.v8.split(".")[0]);

/** The child's exit code, or -1 (and the child killed) when it has not exited within `ms`. */
function exitCode(child: ChildProcess, ms: number): Promise<number | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve(-1);
    }, ms);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** Sends requests to a server over its stdin; each resolves when the server answered it. */
/** `traces`: where lines V8 prints to stdout (`--trace-opt`) go; without it every line must be a message. */
function answering(
  child: ChildProcess,
  traces?: string[],
): (method: string, params: unknown) => Promise<void> {
  const answered = new Map<number, () => void>();
  let buffered = "";
  child.stdout!.on("data", (chunk) => {
    buffered += chunk;
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (traces && !line.startsWith("{")) {
        traces.push(line);
        continue;
      }
      const message = JSON.parse(line) as { id?: number };
      if (message.id !== undefined) answered.get(message.id)?.();
    }
  });
  let id = 0;
  return (method, params) =>
    new Promise<void>((resolve) => {
      answered.set(++id, resolve);
      child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
}

/**
 * A client's opening, then a ping, which the opening does not answer (so the server has loaded), then
 * the quiet collection that follows loading, seen in the debug log (`CC_TOOLS_LOG=debug`).
 */
async function openAndLoad(
  child: ChildProcess,
  request: ReturnType<typeof answering>,
  stderr: () => string,
): Promise<void> {
  await request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "t", version: "1" },
  });
  child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  await request("tools/list", {});
  await request("ping", {});
  expect(await eventually(() => stderr().includes("collected garbage"), 10_000)).toBe(true);
}

describe("the cc-tools entry", () => {
  it("starts the stdio opening early only for `cc-tools mcp` on stdio", () => {
    const argv = (...args: string[]) => ["node", "cc-tools", ...args];
    expect(servesStdio(argv("mcp"))).toBe(true);
    expect(servesStdio(argv("mcp", "--cwd", "/x", "--allow", "Bash(ls)"))).toBe(true);
    expect(servesStdio(argv("mcp", "--http"))).toBe(false);
    expect(servesStdio(argv("mcp", "--http=true"))).toBe(false);
    expect(servesStdio(argv("mcp", "--help"))).toBe(false);
    expect(servesStdio(argv("mcp-servers"))).toBe(false);
    expect(servesStdio(argv("run", "Read", "mcp"))).toBe(false);
    expect(servesStdio(argv())).toBe(false);
  });

  it("exits on a usage error even while the client keeps stdin open", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, ".claude"));
    writeFileSync(join(dir, ".claude", "settings.json"), "{bad");
    const child = spawn(process.execPath, [CLI, "mcp", "--cwd", dir], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, CC_TOOLS_LOG: "silent" },
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    // The client has sent initialize and waits; the server must still end, not sit reading stdin.
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
    );
    const code = await exitCode(child, 30_000);
    child.stdin.destroy();
    expect(code).toBe(2);
    expect(stderr).toContain("settings.json is not valid JSON");
  });

  it("answers the opening from its one CommonJS file, before the command line (ESM) loads, and ends if that cannot load", async () => {
    // The entry alone, with the opening data beside it: no chunk of the command line exists to be loaded.
    const bin = join(tempDir("cc-tools-entry-"), "bin");
    mkdirSync(bin);
    for (const name of ["cc-tools.js", "package.json", "mcp-opening.json"])
      copyFileSync(join(dirname(CLI), name), join(bin, name));
    expect(JSON.parse(readFileSync(join(bin, "package.json"), "utf8"))).toEqual({ type: "commonjs" });
    const child = spawn(process.execPath, [join(bin, "cc-tools.js"), "mcp", "--cwd", tempDir()], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, CC_TOOLS_LOG: "silent" },
    });
    const answers: Array<{ id: number; result?: { tools?: Array<{ name: string }> } }> = [];
    let buffered = "";
    const listed = new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk) => {
        buffered += chunk;
        for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
          answers.push(JSON.parse(buffered.slice(0, nl)));
          buffered = buffered.slice(nl + 1);
          if (answers.length === 1) {
            child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
            child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`);
          }
          if (answers.length === 2) resolve();
        }
      });
    });
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
    );
    await listed;
    expect(answers[0]!.id).toBe(1);
    expect(answers[1]!.id).toBe(2);
    expect(answers[1]!.result!.tools!.map((t) => t.name)).toContain("Edit");
    // Then the command line cannot load (it is not there): the process says so and ends, although the
    // client keeps stdin open, instead of leaving the client waiting for answers that never come.
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const code = await exitCode(child, 20_000);
    expect(code).toBe(1);
    expect(stderr).toContain("program.mjs");
  });

  it("keeps Node's compile cache under the user's cache dir where Node has one (22.1+)", () => {
    const cache = tempDir("cc-tools-cache-");
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: cache };
    delete env.NODE_COMPILE_CACHE;
    delete env.NODE_DISABLE_COMPILE_CACHE;
    const result = spawnSync(process.execPath, [CLI, "list"], { encoding: "utf8", env });
    expect(result.status).toBe(0);
    const dir = join(cache, "cc-tools", "compile-cache");
    const [major, minor] = process.versions.node.split(".").map(Number) as [number, number];
    if (major > 22 || (major === 22 && minor >= 1)) {
      expect(existsSync(dir)).toBe(true);
      expect(readdirSync(dir).length).toBeGreaterThan(0);
    } else {
      expect(existsSync(dir)).toBe(false);
    }
  });

  it("waits for its client at the size it needs: compilers held, no HTTP or readline, loading's garbage collected", async () => {
    // What a server does between its opening and its first call decides its idle RSS (docs/PERFORMANCE.md,
    // "Idle RSS"). On SIGUSR2 a preload writes whether TurboFan is on (turning it off changes V8's flag
    // tag only if it was on; it is then turned back on, but on Node 22 --osr-from-maglev, which V8 turns off
    // with it, stays off: each probe is the last thing its process is asked) and the built-ins loaded.
    const dir = tempDir();
    writeFileSync(join(dir, "a.txt"), "hello\n");
    const state = join(dir, "state.json");
    const preload = join(dir, "state.cjs");
    writeFileSync(
      preload,
      `const v8 = require("node:v8");
       const turbofanOn = () => { const tag = v8.cachedDataVersionTag(); v8.setFlagsFromString("--no-turbofan"); const on = v8.cachedDataVersionTag() !== tag; if (on) v8.setFlagsFromString("--turbofan"); return on; };
       process.on("SIGUSR2", () => {
         // Written aside and renamed, so the test never reads half of it.
         const fs = require("node:fs");
         fs.writeFileSync(${JSON.stringify(`${state}.part`)}, JSON.stringify({ turbofan: turbofanOn(), modules: process.moduleLoadList }));
         fs.renameSync(${JSON.stringify(`${state}.part`)}, ${JSON.stringify(state)});
       });`,
    );
    const child = spawn(
      process.execPath,
      [CLI, "mcp", "--cwd", dir, "--permission-mode", "bypassPermissions"],
      {
        stdio: ["pipe", "pipe", "pipe"],
        env: {
          ...process.env,
          CC_TOOLS_LOG: "debug",
          CLAUDE_CONFIG_DIR: join(dir, ".home"),
          NODE_OPTIONS: `--require ${preload}`,
        },
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const request = answering(child);
    const snapshot = async () => {
      rmSync(state, { force: true });
      child.kill("SIGUSR2");
      await eventually(() => existsSync(state), 10_000);
      return JSON.parse(readFileSync(state, "utf8")) as { turbofan: boolean; modules: string[] };
    };
    await openAndLoad(child, request, () => stderr);
    const idle = await snapshot();
    expect(idle.turbofan).toBe(false); // held
    for (const unneeded of ["http", "readline", "perf_hooks", "crypto", "fs/promises"])
      expect(idle.modules).not.toContain(`NativeModule ${unneeded}`);
    await request("tools/call", { name: "Read", arguments: { file_path: join(dir, "a.txt") } });
    expect((await snapshot()).turbofan).toBe(true); // resumed with the first call
    child.stdin.end();
    expect(await exitCode(child, 30_000)).toBe(0);
  });

  // On a V8 newer than the hold knows, the compilers are not held (src/process/compilers.ts).
  it.skipIf(V8_MAJOR > NEWEST_VERIFIED_V8_MAJOR)(
    "optimizes nothing before its first call: the compilers are held from the entry's first module",
    async () => {
      // V8 counts a function's calls from the process's start. Held any later, Node's own path code reached
      // Maglev's threshold while the entry loaded (Node 24), and the compiler's code stayed resident in the
      // idle server (docs/PERFORMANCE.md, "Idle RSS"). --trace-opt prints each compilation on stdout. The
      // preload makes a function of its own hot before the entry runs: that one must be seen, so the
      // trace is known to reach the test, and nothing else may be.
      //
      // Node's loader runs the same path code over the entry's path before the entry's first line, so with
      // an entry path over about 50 characters Maglev compiles it first on Node 24, whatever the entry does.
      // The entry runs here from a short path, below /tmp whatever TMPDIR says (the command line it imports
      // is the real one, through a link).
      const dir = realpathSync(mkdtempSync("/tmp/cc-"));
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      const entry = join(dir, "cc-tools.js");
      for (const name of ["cc-tools.js", "package.json", "mcp-opening.json"])
        copyFileSync(join(dirname(CLI), name), join(dir, name));
      symlinkSync(join(dirname(CLI), "program.mjs"), join(dir, "program.mjs"));
      const preload = join(dir, "hot.cjs");
      writeFileSync(
        preload,
        `function ccToolsHotControl(x) { return x + 1; }
       function ccToolsHotLoop() { let s = 0; for (let i = 0; i < 300000; i++) s = ccToolsHotControl(s); return s; }
       globalThis.ccToolsHot = ccToolsHotLoop();`,
      );
      const child = spawn(
        process.execPath,
        [
          "--trace-opt",
          "--require",
          preload,
          entry,
          "mcp",
          "--cwd",
          dir,
          "--permission-mode",
          "bypassPermissions",
        ],
        {
          stdio: ["pipe", "pipe", "pipe"],
          env: { ...process.env, CC_TOOLS_LOG: "debug", CLAUDE_CONFIG_DIR: join(dir, ".home") },
        },
      );
      let stderr = "";
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const traces: string[] = [];
      const request = answering(child, traces);
      await openAndLoad(child, request, () => stderr);
      const compiled = traces.flatMap(
        (line) => /^\[compiling method .*?<JSFunction (\S*)/.exec(line)?.[1] ?? [],
      );
      // (TurboFan may inline the control function into its loop's on-stack compilation: either name shows it.)
      expect(compiled.some((name) => name.startsWith("ccToolsHot"))).toBe(true);
      expect(compiled.filter((name) => !name.startsWith("ccToolsHot"))).toEqual([]);
      child.stdin.end();
      expect(await exitCode(child, 30_000)).toBe(0);
    },
  );

  it("serves files and commands without loading fetch's modules (undici, http2, tls)", async () => {
    // Node 22 and 24 load them for an ES module import of node:http (its namespace reads http.WebSocket):
    // 14 to 18 MB the bundle's built-ins, required instead, keep out. Node 20 never did; the check holds there too.
    const dir = tempDir();
    writeFileSync(join(dir, "a.txt"), "hello\n");
    const loaded = join(dir, "loaded.json");
    const preload = join(dir, "loaded.cjs");
    writeFileSync(
      preload,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(loaded)}, JSON.stringify(process.moduleLoadList)));`,
    );
    const child = spawn(
      process.execPath,
      [CLI, "mcp", "--cwd", dir, "--permission-mode", "bypassPermissions"],
      {
        stdio: ["pipe", "pipe", "ignore"],
        env: {
          ...process.env,
          CC_TOOLS_LOG: "silent",
          CLAUDE_CONFIG_DIR: join(dir, ".home"),
          NODE_OPTIONS: `--require ${preload}`,
        },
      },
    );
    const request = answering(child);
    await request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    });
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    await request("tools/list", {});
    await request("tools/call", { name: "Read", arguments: { file_path: join(dir, "a.txt") } });
    await request("tools/call", { name: "Grep", arguments: { pattern: "hello" } });
    await request("tools/call", { name: "Bash", arguments: { command: "echo hi" } });
    child.stdin.end();
    expect(await exitCode(child, 30_000)).toBe(0);
    const modules = JSON.parse(readFileSync(loaded, "utf8")) as string[];
    expect(modules).toContain("NativeModule child_process"); // a sign the check sees what loaded
    for (const heavy of ["internal/deps/undici/undici", "http2", "tls"])
      expect(modules).not.toContain(`NativeModule ${heavy}`);
  });
});
