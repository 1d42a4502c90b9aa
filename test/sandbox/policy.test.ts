import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { PermissionHandler, PermissionRequest } from "../../src/permissions/types.js";
import { findTool } from "../../src/registry.js";
import { bwrapArgs, mountPoints, socketsToHide } from "../../src/sandbox/bwrap.js";
import { holdPlaceholders, isPlaceholder } from "../../src/sandbox/placeholder.js";
import { buildPolicy, hookScripts, type SandboxPolicy } from "../../src/sandbox/policy.js";
import { sbplString, seatbeltProfile } from "../../src/sandbox/seatbelt.js";
import { loadSettings, readJsonFile, SettingsError } from "../../src/settings/load.js";
import { tempDir } from "../helpers/context.js";
import { nextTurn, sandboxContext, sandboxSettings } from "./helpers.js";

const policy: SandboxPolicy = {
  writable: ["/ws", "/tmp/s"],
  pinned: ["/ws/a"],
  readOnly: ["/ws/.git/config", "/ws/.claude"],
  placeholders: ["/ws/.mcp.json"],
  forbidden: [],
  masked: [
    { path: "/ws/secrets", kind: "dir", why: "Read deny rule Read(./secrets/**)" },
    { path: "/ws/.env", kind: "file", why: "Read deny rule Read(.env)" },
  ],
  unmasked: ["/ws/secrets/public"],
  network: { allowedDomains: [], deniedDomains: [] },
  tmpDir: "/tmp/s/tmp",
  cacheDir: "/c",
};

const blanks = { file: "/m/f", dir: "/m/d" };

describe("bubblewrap arguments", () => {
  it("layer read-only root, writable places, pins, control files, masks, then re-allowed reads, and isolate", () => {
    const args = bwrapArgs(
      policy,
      blanks,
      { cwd: "/ws", disableUserns: true, sockets: { dirs: ["/tmp/tmux-0"], files: ["/tmp/x.sock"] } },
      ["bash", "-c", "echo"],
    ).join(" ");
    const order = [
      "--ro-bind / /",
      "--perms 0000 --tmpfs /tmp/tmux-0",
      "--ro-bind /dev/null /tmp/x.sock",
      "--bind /ws /ws",
      "--bind /ws/a /ws/a",
      "--ro-bind /ws/.claude /ws/.claude",
      "--ro-bind /ws/.git/config /ws/.git/config",
      "--perms 0000 --tmpfs /ws/secrets",
      "--ro-bind /ws/secrets/public /ws/secrets/public",
      "--unshare-user",
      "--unshare-net",
      "--die-with-parent",
      "--cap-drop ALL",
      "--disable-userns",
      "--chdir /ws -- bash -c echo",
    ].map((part) => args.indexOf(part));
    expect(
      order.every((i) => i >= 0),
      args,
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(args).toContain("--ro-bind /m/f /ws/.env");
    // A placeholder is covered by an empty directory: its markers are not the command's to see (or commit).
    expect(args).toContain("--ro-bind /m/d /ws/.mcp.json");
  });

  it("makes the command the PID namespace's init only when asked (--as-pid-1, before the command)", () => {
    const sockets = { dirs: [], files: [] };
    const command = ["sh", "-c", "x"];
    const plain = bwrapArgs(policy, blanks, { cwd: "/ws", disableUserns: true, sockets }, command);
    expect(plain).not.toContain("--as-pid-1");
    const init = bwrapArgs(
      policy,
      blanks,
      { cwd: "/ws", disableUserns: true, sockets, asPid1: true },
      command,
    );
    expect(init.indexOf("--as-pid-1")).toBeGreaterThan(init.indexOf("--unshare-pid"));
    expect(init.indexOf("--as-pid-1")).toBeLessThan(init.indexOf("--"));
  });
});

describe("the macOS profile (generated and checked here; sandbox-exec cannot run on Linux)", () => {
  it("denies writes except the writable places, then the control files and pinned directory entries", () => {
    const profile = seatbeltProfile(policy, 4242);
    const lines = profile.trim().split("\n");
    expect(lines[0]).toBe("(version 1)");
    const at = (needle: string) => lines.findIndex((l) => l.includes(needle));
    expect(at("(deny file-write*)")).toBeLessThan(at('(allow file-write* (subpath "/ws")'));
    expect(at('(allow file-write* (subpath "/ws")')).toBeLessThan(
      at('(deny file-write* (subpath "/ws/.git/config")'),
    );
    expect(profile).toContain('(deny file-write-unlink file-write-create file-write-mode (literal "/ws/a"))');
    expect(profile).toContain('(deny file-read* file-write* (subpath "/ws/secrets") (literal "/ws/.env"))');
    expect(profile).toContain('(allow network-outbound (remote ip "localhost:4242"))');
    expect(at("(deny network*)")).toBeLessThan(at("localhost:4242"));
    // Balanced parentheses outside string literals: a profile sandbox-exec cannot parse fails every command.
    let depth = 0;
    for (const char of profile.replace(/"(?:\\.|[^"\\])*"/g, '""')) {
      depth += char === "(" ? 1 : char === ")" ? -1 : 0;
      expect(depth).toBeGreaterThanOrEqual(0);
    }
    expect(depth).toBe(0);
    expect(seatbeltProfile(policy, undefined)).not.toContain("localhost:4242");
  });

  it("escapes quotes and backslashes in paths and refuses NUL", () => {
    expect(sbplString('/a "b"\\c')).toBe('"/a \\"b\\"\\\\c"');
    expect(() => sbplString("/a\0b")).toThrow(/NUL/);
  });
});

describe("the policy of a workspace", () => {
  it("pins every directory between the workspace and a hook script, and keeps missing control files from being made", () => {
    const ws = tempDir();
    execFileSync("git", ["init", "-q", ws]);
    mkdirSync(join(ws, "tools", "hooks"), { recursive: true });
    writeFileSync(join(ws, "tools", "hooks", "h.sh"), "exit 0\n");
    const config = sandboxSettings(
      ws,
      {},
      [
        ["allow", "WebFetch(domain:registry.npmjs.org)"],
        ["deny", "WebFetch(domain:evil.com)"],
      ],
      {
        hooks: {
          PreToolUse: [
            {
              matcher: "Bash",
              hooks: [
                {
                  type: "command",
                  command: ["bash ${", "CLAUDE_PROJECT_DIR}/tools/hooks/h.sh --x"].join(""),
                },
              ],
            },
          ],
          PostToolUse: [],
        },
      },
    );
    const built = buildPolicy(sandboxContext(ws, config));
    expect(built.pinned).toEqual(
      expect.arrayContaining([join(ws, "tools"), join(ws, "tools", "hooks"), join(ws, ".git")]),
    );
    expect(built.readOnly).toEqual(
      expect.arrayContaining([
        join(ws, "tools", "hooks", "h.sh"),
        join(ws, ".git", "config"),
        join(ws, ".git", "hooks"),
      ]),
    );
    expect(built.placeholders).toEqual(expect.arrayContaining([join(ws, ".claude"), join(ws, ".mcp.json")]));
    expect(built.network).toEqual({ allowedDomains: ["registry.npmjs.org"], deniedDomains: ["evil.com"] });
    expect(built.writable).toContain(ws);
  });

  it("finds the files a hook command names", () => {
    expect(hookScripts('"$CLAUDE_PROJECT_DIR"/.claude/hooks/a.sh arg', "/p")).toEqual([
      "/p/.claude/hooks/a.sh",
    ]);
    expect(hookScripts("python3 scripts/check.py -v", "/p")).toEqual(["/p/scripts/check.py"]);
    expect(hookScripts("jq -r .tool_name", "/p")).toEqual([]);
  });
});

describe("placeholders shared between processes", () => {
  it("stay while another live process holds them, and go once only dead ones did", async () => {
    const ws = tempDir();
    const path = join(ws, ".mcp.json");
    mkdirSync(path);
    writeFileSync(join(path, `.cc-tools-sandbox-${process.ppid}`), "");
    holdPlaceholders([path])();
    await nextTurn();
    expect(existsSync(path)).toBe(true);
    expect(isPlaceholder(path)).toBe(true);
    rmSync(join(path, `.cc-tools-sandbox-${process.ppid}`));
    // A pid above the kernel's maximum is never alive: a killed run's marker.
    writeFileSync(join(path, ".cc-tools-sandbox-99999999"), "");
    holdPlaceholders([path])();
    await nextTurn();
    expect(existsSync(path)).toBe(false);
  });

  it("go when their last use ends, never while a use holds them", () => {
    const ws = tempDir();
    const path = join(ws, ".claude");
    const marker = join(path, `.cc-tools-sandbox-${process.pid}`);
    const first = holdPlaceholders([path]);
    const second = holdPlaceholders([path]);
    first();
    expect(existsSync(marker)).toBe(true);
    second();
    expect(existsSync(path)).toBe(false);
  });

  /** Runs `body` in a fresh process with the placeholder module imported; returns what it printed. */
  function inProcess(ws: string, body: string, signal?: NodeJS.Signals): string {
    const module = pathToFileURL(join(import.meta.dirname, "../../src/sandbox/placeholder.ts")).href;
    const file = join(ws, "host.mts");
    writeFileSync(
      file,
      `import { existsSync } from "node:fs";
import { deferPlaceholderRelease, holdPlaceholders } from ${JSON.stringify(module)};
const out = (value: unknown) => process.stdout.write(String(value) + " ");
${body}`,
    );
    // From the repository root, so `--import tsx` resolves to its node_modules.
    const run = spawnSync(process.execPath, ["--import", "tsx", file], {
      cwd: join(import.meta.dirname, "../.."),
      encoding: "utf8",
    });
    if (signal) expect(run.signal).toBe(signal);
    else expect(run.status, run.stderr).toBe(0);
    return run.stdout.trim();
  }

  it("go on the next turn in a host that defers them, and a hold before that turn keeps them", () => {
    const ws = tempDir();
    const path = JSON.stringify(join(ws, ".claude"));
    const marker = JSON.stringify(join(ws, ".claude", `.cc-tools-sandbox-`));
    const out = inProcess(
      ws,
      `deferPlaceholderRelease();
const turn = () => new Promise((resolve) => setImmediate(resolve));
holdPlaceholders([${path}])();
out(existsSync(${path}));
await turn();
out(existsSync(${path}));
holdPlaceholders([${path}])();
const held = holdPlaceholders([${path}]);
await turn();
out(existsSync(${marker} + process.pid));
held();
await turn();
out(existsSync(${path}));`,
    );
    expect(out).toBe("true false true false");
  });

  it("waiting for removal, or held by a command still running, are removed when the host exits", () => {
    const ws = tempDir();
    const waiting = JSON.stringify(join(ws, ".mcp.json"));
    const held = JSON.stringify(join(ws, ".claude"));
    const body = `deferPlaceholderRelease();
holdPlaceholders([${waiting}])();
holdPlaceholders([${held}]);
out(existsSync(${waiting}) && existsSync(${held}));`;
    expect(inProcess(ws, `${body}\nprocess.exit(0);`)).toBe("true");
    expect(existsSync(join(ws, ".mcp.json")) || existsSync(join(ws, ".claude"))).toBe(false);
    // Ended by a signal (no "exit" event): the host's exit work still runs.
    expect(
      inProcess(
        ws,
        `${body}\nsetTimeout(() => process.kill(process.pid, "SIGTERM"), 10); setInterval(() => {}, 1000);`,
        "SIGTERM",
      ),
    ).toBe("true");
    expect(existsSync(join(ws, ".mcp.json")) || existsSync(join(ws, ".claude"))).toBe(false);
  });
});

describe("the sandbox settings block", () => {
  function load(sandbox: unknown) {
    const ws = tempDir();
    mkdirSync(join(ws, ".claude"));
    writeFileSync(join(ws, ".claude", "settings.json"), JSON.stringify({ sandbox }));
    return { ws, settings: loadSettings(ws, { CLAUDE_CONFIG_DIR: join(ws, "no-user-config") }) };
  }

  it("reads Claude Code's keys, resolving paths: / and // absolute, ~/ home, others in the project", () => {
    const { ws, settings } = load({
      enabled: true,
      autoAllowBashIfSandboxed: false,
      excludedCommands: ["docker"],
      network: { allowedDomains: ["*.Example.com"], allowLocalBinding: true },
      filesystem: { allowWrite: ["/tmp/build", "//opt/x", "~/.kube", "out"], denyRead: ["./keys"] },
    });
    expect(settings.sandbox).toMatchObject({
      enabled: true,
      autoAllowBashIfSandboxed: false,
      excludedCommands: ["docker"],
      network: { allowedDomains: ["*.example.com"] },
      filesystem: {
        allowWrite: ["/tmp/build", "/opt/x", join(homedir(), ".kube"), join(ws, "out")],
        denyRead: [join(ws, "keys")],
      },
      ignoredKeys: ["sandbox.network.allowLocalBinding"],
    });
  });

  it("reads an empty directory left where a control file belongs (a killed run's placeholder) as no file", () => {
    const ws = tempDir();
    mkdirSync(join(ws, ".mcp.json"));
    expect(readJsonFile(join(ws, ".mcp.json"))).toBeUndefined();
    writeFileSync(join(ws, ".mcp.json", "x"), "");
    expect(() => readJsonFile(join(ws, ".mcp.json"))).toThrow(SettingsError);
  });

  it("refuses a misspelt key or a wrong type, naming the file", () => {
    expect(() => load({ enable: true })).toThrow(SettingsError);
    expect(() => load({ enable: true })).toThrow(/"sandbox\.enable" is not a sandbox setting/);
    expect(() => load({ enabled: "yes" })).toThrow(/sandbox\.enabled" must be true or false/);
    expect(() => load({ network: { allowedDomains: ["http://x.com/"] } })).toThrow(/not a host name/);
  });
});

describe("permissions with the sandbox on", () => {
  function asking(): PermissionHandler & { asked: PermissionRequest[] } {
    const asked: PermissionRequest[] = [];
    return {
      name: "recorder",
      asked,
      ask: async (request) => {
        asked.push(request);
        return { behavior: "deny" };
      },
    };
  }
  const bashTool = findTool("Bash")!;

  it("runs a sandboxed command without asking in default and acceptEdits modes, but not past deny or ask rules", async () => {
    const ws = tempDir();
    const handler = asking();
    const config = sandboxSettings(ws, {}, [
      ["deny", "Bash(rm:*)"],
      ["ask", "Bash(git push:*)"],
    ]);
    for (const mode of ["default", "acceptEdits"] as const) {
      const ctx = sandboxContext(ws, config, {
        permissionMode: mode,
        permissionHandler: handler,
      });
      expect(await ctx.checkPermission(bashTool, { command: "make test" })).toMatchObject({
        behavior: "allow",
        reason: expect.stringMatching(/autoAllowBashIfSandboxed/),
      });
      expect((await ctx.checkPermission(bashTool, { command: "rm -rf build" })).behavior).toBe("deny");
      expect((await ctx.checkPermission(bashTool, { command: "git push origin main" })).behavior).toBe(
        "deny",
      );
    }
    expect(handler.asked.map((r) => (r.input as { command: string }).command)).toEqual([
      "git push origin main",
      "git push origin main",
    ]);
  });

  it("asks for a command that leaves the sandbox, unless allowUnsandboxedCommands is false", async () => {
    const ws = tempDir();
    const handler = asking();
    const options = { permissionMode: "default" as const, permissionHandler: handler, nonInteractive: false };
    let ctx = sandboxContext(ws, sandboxSettings(ws, { excludedCommands: ["docker"] }), options);
    await ctx.checkPermission(bashTool, { command: "make", dangerouslyDisableSandbox: true });
    await ctx.checkPermission(bashTool, { command: "cd x && docker ps" });
    expect(handler.asked).toHaveLength(2);
    ctx = sandboxContext(ws, sandboxSettings(ws, { allowUnsandboxedCommands: false }), options);
    expect(
      (await ctx.checkPermission(bashTool, { command: "make", dangerouslyDisableSandbox: true })).behavior,
    ).toBe("allow");
    ctx = sandboxContext(ws, sandboxSettings(ws, { autoAllowBashIfSandboxed: false }), options);
    await ctx.checkPermission(bashTool, { command: "make" });
    ctx = sandboxContext(ws, sandboxSettings(ws, { enabled: false }), options);
    await ctx.checkPermission(bashTool, { command: "make" });
    expect(handler.asked).toHaveLength(4);
  });

  it("leaves plan mode's refusal alone", async () => {
    const ws = tempDir();
    const ctx = sandboxContext(ws, sandboxSettings(ws), { permissionMode: "plan" });
    expect((await ctx.checkPermission(bashTool, { command: "make" })).behavior).toBe("deny");
  });
});

describe("mountPoints", () => {
  it("lists where bwrapArgs's arguments mount, and refuses arguments it does not know", () => {
    expect(
      mountPoints([
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--perms",
        "0000",
        "--tmpfs",
        "/x y",
        "--cap-drop",
        "ALL",
        "--as-pid-1",
        "--",
        "sh",
      ]),
    ).toEqual(["/", "/dev", "/x y"]);
    expect(mountPoints(["--ro-bind", "/", "/", "--bind-try", "/a", "/a"])).toBeUndefined();
    expect(mountPoints(["--bind", "/a"])).toBeUndefined();
  });
});

describe("sockets to hide", () => {
  /** A listening Unix socket at `path`, closed after the test. */
  async function listening(path: string): Promise<Server> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(path, resolve));
    return server;
  }

  it("cover a directory given whole while it exists, listening or not, unless it holds or lies in a kept place or is a symlink", () => {
    const base = tempDir("cc-tools-sockets-covered-");
    const [quiet, kept, missing] = ["quiet", "kept", "missing"].map((name) => join(base, name)) as [
      string,
      string,
      string,
    ];
    mkdirSync(quiet);
    mkdirSync(join(kept, "ws"), { recursive: true });
    // A name another user replaced with a symlink: what it points at is never covered through it.
    const elsewhere = tempDir("cc-tools-sockets-elsewhere-");
    symlinkSync(elsewhere, join(base, "link"));
    const table = join(base, "unix");
    // A socket listed in the covered directory: left to the directory's mask, not covered apart (nor its
    // directory below /tmp, which would hide the kept workspace).
    writeFileSync(
      table,
      `Num       RefCount Protocol Flags    Type St Inode Path\n0000: 00000002 00000000 00010000 0001 01 100 ${join(quiet, "s.sock")}\n`,
    );
    expect(socketsToHide([join(kept, "ws")], [quiet, kept, missing, join(base, "link")], table)).toEqual({
      dirs: [quiet],
      files: [],
    });
    expect(socketsToHide([], [], table)).toEqual({ dirs: base.startsWith("/tmp/") ? [base] : [], files: [] });
  });

  it("are named as bubblewrap resolves a mount point: through symlinks, and skipped under /run", async () => {
    const base = mkdtempSync(join("/var/tmp", "cc-tools-sockets-"));
    const servers: Server[] = [];
    try {
      mkdirSync(join(base, "real"));
      symlinkSync(join(base, "real"), join(base, "link"));
      servers.push(await listening(join(base, "real", "s.sock")));
      const lines = [`${join(base, "link", "s.sock")}`];
      // /var/run is a symlink to /run on most systems: a socket there is under the sandbox's empty /run.
      const inRun = `/run/cc-tools-test-${process.pid}.sock`;
      const canBindRun = process.getuid?.() === 0 && existsSync("/run");
      if (canBindRun) {
        servers.push(await listening(inRun));
        symlinkSync("/run", join(base, "runlink"));
        lines.push(join(base, "runlink", basename(inRun)));
      }
      const table = join(base, "unix");
      writeFileSync(
        table,
        `Num       RefCount Protocol Flags    Type St Inode Path\n${lines.map((path, i) => `0000: 00000002 00000000 00010000 0001 01 ${100 + i} ${path}`).join("\n")}\n`,
      );
      const masks = socketsToHide([], [], table);
      expect(masks.files).toEqual([join(base, "real", "s.sock")]);
      expect(masks.dirs).toEqual([]);
    } finally {
      for (const server of servers) server.close();
      rmSync(base, { recursive: true, force: true });
    }
  });
});
