import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import type { ToolContext } from "../../src/core/context.js";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import {
  PrestartedShell,
  prestartSlot,
  takePrestarted,
  usePrestartedShells,
  waitingShell,
} from "../../src/process/prestart.js";
import { procStat } from "../../src/process/procfs.js";
import { bashAdapter, locateExecutable } from "../../src/process/shells.js";
import { newLaunchId, type SpawnSpec, sandboxAhead, sandboxLaunch } from "../../src/sandbox/launch.js";
import { proxySocketDir } from "../../src/sandbox/proxy-socket.js";
import { tempDir } from "../helpers/context.js";
import { eventually } from "../process/ps.js";
import { bash, nextTurn, sandboxContext, sandboxSettings } from "./helpers.js";

// A sandbox started ahead of its command (src/process/prestart.ts, sandbox/launch.ts's sandboxAhead):
// bubblewrap waits with the mounts the next command would get. Each test checks that the command really
// ran in it, or that it was refused and the command got a sandbox of its own, and checks effects on disk.
usePrestartedShells({ quietMs: 0 });

const HOOK = "#!/bin/sh\nexit 0\n";

/** A workspace where every control file exists, so no stand-in is needed and the sandbox can wait. */
function project(rules: Array<["allow" | "deny" | "ask", string]> = [], name = "ws") {
  const ws = join(tempDir("cc-tools-ahead-"), name);
  mkdirSync(ws);
  const outside = tempDir("cc-tools-ahead-outside-");
  execFileSync("git", ["init", "-q", ws]);
  mkdirSync(join(ws, ".claude"));
  writeFileSync(join(ws, ".claude", "settings.json"), "{}\n");
  writeFileSync(join(ws, ".mcp.json"), "{}\n");
  mkdirSync(join(ws, "scripts"));
  writeFileSync(join(ws, "scripts", "guard.sh"), HOOK);
  chmodSync(join(ws, "scripts", "guard.sh"), 0o755);
  mkdirSync(join(ws, "secrets"));
  writeFileSync(join(ws, "secrets", "token.txt"), "SECRET-1234\n");
  const config = sandboxSettings(ws, {}, [["deny", "Read(./secrets/**)"], ...rules], {
    hooks: {
      PreToolUse: [
        {
          matcher: "NoSuchTool",
          hooks: [{ type: "command", command: '"$CLAUDE_PROJECT_DIR"/scripts/guard.sh' }],
        },
      ],
      PostToolUse: [],
    },
  });
  const ctx = sandboxContext(ws, config);
  return { ws, outside, ctx, gitConfig: readFileSync(join(ws, ".git", "config"), "utf8") };
}

/** A Unix socket server listening at `path`, closed after the test. */
async function listening(path: string): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  onTestFinished(() => new Promise((resolve) => server.close(() => resolve())));
  return server;
}

/**
 * Blocks this process, its event loop included (so a waiting sandbox's first look at its mounts cannot
 * come meanwhile), until a process below `pid` runs `name`: bubblewrap execs the command only once every
 * mount is in place. False if that did not happen within 10 s.
 */
function blockUntilRunning(pid: number, name: string): boolean {
  const nap = new Int32Array(new SharedArrayBuffer(4));
  const end = Date.now() + 10_000;
  const below = (parent: number): number[] => {
    let children: string[] = [];
    try {
      children = readdirSync(`/proc/${parent}/task`).flatMap((tid) =>
        readFileSync(`/proc/${parent}/task/${tid}/children`, "utf8").trim().split(" ").filter(Boolean),
      );
    } catch {
      // gone meanwhile
    }
    return children.flatMap((child) => [Number(child), ...below(Number(child))]);
  };
  while (Date.now() < end) {
    if (below(pid).some((p) => procStat(p)?.name === name)) return true;
    Atomics.wait(nap, 0, 0, 2);
  }
  return false;
}

/** Runs a first command, then waits until the sandbox for the next one is set up; returns it. */
async function waitingSandbox(ctx: ToolContext): Promise<PrestartedShell> {
  const first = await bash(ctx, "true");
  expect(first.result.isError, first.text).toBe(false);
  await nextTurn();
  expect(await eventually(() => waitingShell(ctx.session)?.ready === true)).toBe(true);
  const shell = waitingShell(ctx.session)!;
  expect(shell.sandboxed).toBe(true);
  return shell;
}

describe("a sandbox started ahead of its command", () => {
  it("runs the next command: same output, exit status, cwd and environment as a sandbox of its own", async () => {
    const { ctx, ws } = project();
    const shell = await waitingSandbox(ctx);
    const { result, text } = await bash(
      ctx,
      'mkdir -p sub && cd sub && echo "out $TMPDIR" && echo err >&2 && test "$(cat /proc/1/comm)" = bash && exit 3',
    );
    expect(shell.ran).toBe(true);
    expect(result.isError).toBe(true);
    expect(text).toContain("out /");
    expect(text).toContain("err");
    expect(text).toContain("Exit code 3");
    // The persistent cwd moved into sub, as with a spawn.
    expect((await bash(ctx, "pwd")).text).toContain(join(ws, "sub"));
  });

  it("keeps waiting while searches run rg in a plain spare beside it", async () => {
    const { ctx, ws } = project();
    writeFileSync(join(ws, "notes.txt"), "a needle here\n");
    // A command runs in the sandbox started ahead, and the next one waits: the session has used a shell.
    const first = await waitingSandbox(ctx);
    expect((await bash(ctx, "true")).result.isError).toBe(false);
    expect(first.ran).toBe(true);
    await nextTurn();
    expect(await eventually(() => waitingShell(ctx.session)?.ready === true)).toBe(true);
    const sandbox = waitingShell(ctx.session)!;
    expect(sandbox.sandboxed).toBe(true);
    const grep = async () =>
      ToolResult.text(await runTool("Grep", { pattern: "needle", output_mode: "content" }, ctx));
    // rg runs outside the sandbox, so the first search forks; it readies a plain spare for the next.
    expect(await grep()).toMatch(/^notes\.txt:1:a needle here\n/);
    await nextTurn();
    const state = ctx.session.get(prestartSlot);
    expect(await eventually(() => state.spare?.waiting === true)).toBe(true);
    const spare = state.spare!;
    expect(spare.sandboxed).toBe(false);
    // A sandbox waiting is not a batch: the spare is for rg, not for calls that came together.
    expect(state.searchesBatched).toBe(false);
    expect(await grep()).toMatch(/^notes\.txt:1:a needle here\n/);
    expect(spare.ran).toBe(true);
    expect(sandbox.waiting).toBe(true);
    // The next search gets another spare, and the sandbox still runs the next command.
    await nextTurn();
    expect(await eventually(() => state.spare?.waiting === true)).toBe(true);
    expect(state.spare).not.toBe(spare);
    const { text } = await bash(ctx, 'test "$(cat /proc/1/comm)" = bash && echo inside');
    expect(text).toBe("inside");
    expect(sandbox.ran).toBe(true);
    expect(state.spare?.waiting).toBe(true);
  });

  it("is used in a workspace whose path /proc escapes in its mount table (a space, a backslash)", async () => {
    const { ctx } = project([], "my \\ project");
    const shell = await waitingSandbox(ctx);
    const { text } = await bash(ctx, "echo hi > f && cat f");
    expect(shell.ran).toBe(true);
    expect(text).toBe("hi");
  });

  it("is never used when a mount its arguments make is missing once bubblewrap has set it up", async () => {
    const { ctx } = project();
    const ahead = sandboxAhead(ctx)!;
    const bash = locateExecutable("bash", process.env.PATH)!;
    // As if the host had moved one away between bubblewrap's mounts and the first look at them.
    const shell = new PrestartedShell(
      bash,
      { PATH: process.env.PATH },
      {
        ...ahead,
        mountPoints: [...ahead.mountPoints, "/no/such/mount"],
      },
    );
    try {
      // Found when bubblewrap reports it set up: killed, and counted as a sandbox that died.
      expect(await eventually(() => shell.died)).toBe(true);
      expect(shell.waiting).toBe(false);
      expect(shell.ready).toBe(false);
      const args = [...ahead.prefix, "--chdir", "/", "--", bash, "-c", "true"];
      expect(shell.claimIfFits(ahead.file, args, "/", { PATH: process.env.PATH })).toBeUndefined();
    } finally {
      shell.discard();
    }
  });

  it("gives the command the PWD bubblewrap would: its directory, not the environment's", async () => {
    const { ctx, ws } = project();
    mkdirSync(join(ws, "real"));
    symlinkSync(join(ws, "real"), join(ws, "link"));
    // An inherited PWD naming the same directory through a link: bubblewrap's --chdir overrides it.
    ctx.config.env.PWD = join(ws, "link");
    await bash(ctx, "cd real");
    await nextTurn();
    expect(await eventually(() => waitingShell(ctx.session)?.ready === true)).toBe(true);
    const shell = waitingShell(ctx.session)!;
    const { text } = await bash(ctx, 'echo "$PWD"');
    expect(shell.ran).toBe(true);
    expect(text).toBe(join(ws, "real"));
  });

  it("holds the boundary: writes outside, to control files and hook scripts, and reads of denied files fail", async () => {
    const { ctx, ws, outside, gitConfig } = project();
    for (const command of [
      `echo pwned > ${outside}/direct`,
      "echo '[core] hooksPath = /tmp/x' >> .git/config",
      "printf x > .git/hooks/pre-commit",
      "echo x > .claude/new.json",
      `echo '{"mcpServers":{}}' > .mcp.json`,
      "echo evil >> scripts/guard.sh",
      `mv .claude .claude-old; mkdir .claude && echo '{}' > .claude/settings.local.json`,
      // Past what the rules can see in a command: the kernel refuses it.
      "ln -sfn secrets s && cat s/token.txt",
    ]) {
      const shell = await waitingSandbox(ctx);
      const { result, text } = await bash(ctx, command);
      expect(shell.ran, command).toBe(true);
      expect(result.isError, `${command}: ${text}`).toBe(true);
      expect(text).not.toContain("SECRET-1234");
    }
    expect(readdirSync(outside)).toEqual([]);
    expect(readFileSync(join(ws, ".git", "config"), "utf8")).toBe(gitConfig);
    expect(existsSync(join(ws, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(readdirSync(join(ws, ".claude"))).toEqual(["settings.json"]);
    expect(readFileSync(join(ws, ".mcp.json"), "utf8")).toBe("{}\n");
    expect(readFileSync(join(ws, "scripts", "guard.sh"), "utf8")).toBe(HOOK);
    expect(existsSync(join(ws, ".claude-old"))).toBe(false);
  });

  it.each([
    [
      "renames .claude and makes a new one",
      (ws: string) => {
        renameSync(join(ws, ".claude"), join(ws, ".claude-old"));
        mkdirSync(join(ws, ".claude"));
      },
      "echo '{}' > .claude/settings.local.json",
      (ws: string) => expect(readdirSync(join(ws, ".claude"))).toEqual([]),
    ],
    [
      "replaces .git/config by a rename (as git config does)",
      (ws: string) => execFileSync("git", ["-C", ws, "config", "user.name", "someone"]),
      "echo '[core] hooksPath = /tmp/x' >> .git/config",
      (ws: string) => expect(readFileSync(join(ws, ".git", "config"), "utf8")).not.toContain("hooksPath"),
    ],
    [
      "deletes and recreates the hook script",
      (ws: string) => {
        rmSync(join(ws, "scripts", "guard.sh"));
        writeFileSync(join(ws, "scripts", "guard.sh"), HOOK, { mode: 0o755 });
      },
      "echo evil >> scripts/guard.sh",
      (ws: string) => expect(readFileSync(join(ws, "scripts", "guard.sh"), "utf8")).toBe(HOOK),
    ],
    [
      "deletes .mcp.json (the next command needs a stand-in)",
      (ws: string) => rmSync(join(ws, ".mcp.json")),
      `echo '{"mcpServers":{}}' > .mcp.json`,
      (ws: string) => expect(existsSync(join(ws, ".mcp.json"))).toBe(false),
    ],
  ])(
    "is not used when the host %s while it waits: the command gets a sandbox of its own",
    async (_what, change, command, check) => {
      const { ctx, ws } = project();
      const shell = await waitingSandbox(ctx);
      change(ws);
      const { result, text } = await bash(ctx, command);
      expect(shell.ran).toBe(false);
      expect(shell.waiting).toBe(false);
      expect(result.isError, text).toBe(true);
      await nextTurn();
      check(ws);
    },
  );

  it.each([
    [
      "git config renames .git/config into place",
      "git -C WS config user.name someone",
      "echo '[core] hooksPath = /tmp/x' >> .git/config",
    ],
    [
      "mv .claude .claude-old; mkdir .claude",
      "mv WS/.claude WS/.claude-old && mkdir WS/.claude",
      "echo '{}' > .claude/settings.local.json",
    ],
    [
      "an editor saves .mcp.json by a rename",
      "echo '{}' > WS/.mcp.tmp && mv WS/.mcp.tmp WS/.mcp.json",
      `echo '{"mcpServers":{}}' > .mcp.json`,
    ],
  ])(
    "is never used when, while bubblewrap sets it up, the host does this: %s",
    async (_what, host, command) => {
      const { ctx, ws, gitConfig } = project();
      // Caught before bubblewrap has set it up and this process has looked at its mounts (on a busy machine
      // both can happen before the loop below sees it: then the next one is tried).
      let shell: PrestartedShell | undefined;
      for (let attempt = 0; attempt < 5 && !shell; attempt++) {
        expect((await bash(ctx, "true")).result.isError).toBe(false);
        while (waitingShell(ctx.session) === undefined) await new Promise((resolve) => setImmediate(resolve));
        if (!waitingShell(ctx.session)!.ready) shell = waitingShell(ctx.session);
      }
      expect(shell, "a waiting sandbox not yet set up").toBeDefined();
      // The host is busy (the event loop blocked) until bubblewrap has mounted everything and started its
      // bash, then changes the file: the change lands before this process first looks at the mounts.
      expect(blockUntilRunning(shell!.pid!, "bash")).toBe(true);
      execFileSync("sh", ["-c", host.replaceAll("WS", ws)]);
      await eventually(() => !shell!.waiting, 2_000);
      expect(shell!.ready).toBe(false);
      const { result } = await bash(ctx, command);
      expect(shell!.ran).toBe(false);
      expect(result.isError).toBe(true);
      await nextTurn();
      expect(readFileSync(join(ws, ".git", "config"), "utf8")).not.toContain("hooksPath");
      expect(readFileSync(join(ws, ".mcp.json"), "utf8")).toBe("{}\n");
      expect(existsSync(join(ws, ".claude", "settings.local.json"))).toBe(false);
      expect(gitConfig).not.toContain("someone");
    },
  );

  it("reports a working directory the sandbox cannot enter as bubblewrap itself would", async () => {
    const { ctx } = project();
    // The persistent cwd moves (outside the sandbox) into a Read-denied directory, which the sandbox hides.
    await bash(ctx, "cd secrets", { dangerouslyDisableSandbox: true });
    expect((await bash(ctx, "echo one")).text).toMatch(/The sandbox could not be set up/);
    await nextTurn();
    expect(await eventually(() => waitingShell(ctx.session)?.ready === true)).toBe(true);
    const shell = waitingShell(ctx.session)!;
    const { result, text } = await bash(ctx, "echo in");
    // The shell started early fails to enter it, before its claim or after: then the waiting sandbox
    // reports it, else (the shell has ended) the command's own bubblewrap does. The same words either way.
    expect(shell.startedEarly).toBe(true);
    expect(result.isError).toBe(true);
    expect(text).toMatch(/bwrap: Can't chdir to .*secrets: Permission denied/);
    expect(text).toMatch(/The sandbox could not be set up for this command/);
    // Handed over at its claim (no early start where bash would read ~/.bashrc): the waiting sandbox says it.
    ctx.config.env.SSH_CLIENT = "192.0.2.1 50000 22";
    await nextTurn();
    expect(await eventually(() => waitingShell(ctx.session)?.ready === true)).toBe(true);
    const next = waitingShell(ctx.session)!;
    const again = await bash(ctx, "echo in");
    expect(next.startedEarly).toBe(false);
    expect(next.ran).toBe(true);
    expect(again.text).toMatch(/bwrap: Can't chdir to .*secrets: Permission denied/);
  });

  // Mounting needs root; CI runs as root. Where the host's mounts are private (containers, this VM), what
  // the host unmounts later stays in a sandbox's copy.
  it.runIf(process.getuid?.() === 0)(
    "is not used once the host unmounted a file system it copied",
    async () => {
      const { ctx } = project();
      const vault = tempDir("cc-tools-ahead-vault-");
      const mountVault = () => {
        execFileSync("mount", ["-t", "tmpfs", "none", vault]);
        writeFileSync(join(vault, "secret"), "VAULT-9876\n");
      };
      mountVault();
      try {
        // Unmounted just before the command: the command's check sees it.
        const shell = await waitingSandbox(ctx);
        execFileSync("umount", [vault]);
        const { text } = await bash(ctx, `cat ${vault}/secret`);
        expect(shell.ran).toBe(false);
        expect(text).not.toContain("VAULT-9876");
        // Unmounted while no command comes: the waiting sandbox lets it go within about a second.
        mountVault();
        const next = await waitingSandbox(ctx);
        execFileSync("umount", [vault]);
        expect(await eventually(() => !next.waiting, 3_000)).toBe(true);
        expect(next.ran).toBe(false);
        // Unmounted and another mounted in its place: the kernel may give the new mount the old one's id.
        mountVault();
        const third = await waitingSandbox(ctx);
        execFileSync("umount", [vault]);
        execFileSync("mount", ["-t", "tmpfs", "none", vault]);
        writeFileSync(join(vault, "secret"), "NEW-1111\n");
        const again = await bash(ctx, `cat ${vault}/secret`);
        expect(third.ran).toBe(false);
        expect(again.text).toBe("NEW-1111");
      } finally {
        spawnSync("umount", [vault]);
      }
    },
  );

  it("is used while a socket it covers comes and goes, and not once a new one it does not cover appears", async () => {
    const { ctx } = project();
    // A directory below /tmp that holds a server's socket is covered whole (src/sandbox/bwrap.ts).
    const dir = tempDir("cc-tools-ahead-socket-");
    const server = await listening(join(dir, "s.sock"));
    let shell = await waitingSandbox(ctx);
    // The server ends (tmux's does with its last session), and starts again: still the same arguments.
    await new Promise((resolve) => server.close(resolve));
    let { text } = await bash(ctx, `ls ${dir}`);
    expect(shell.ran).toBe(true);
    expect(text).toMatch(/Permission denied/);
    await listening(join(dir, "s.sock"));
    shell = await waitingSandbox(ctx);
    ({ text } = await bash(ctx, `ls ${dir}`));
    expect(shell.ran).toBe(true);
    expect(text).toMatch(/Permission denied/);
    // A new one while it waits would be reachable there: the command gets a sandbox that covers it.
    shell = await waitingSandbox(ctx);
    const other = tempDir("cc-tools-ahead-socket-");
    await listening(join(other, "s.sock"));
    ({ text } = await bash(ctx, `ls ${other}`));
    expect(shell.ran).toBe(false);
    expect(text).toMatch(/Permission denied/);
  });

  it.each([
    ["another session's networked command runs (its proxy's socket changes no arguments)", false],
    ["the first networked command on the machine runs (the sockets' directory made then)", true],
  ])("is used while %s", async (_, first) => {
    if (first) {
      // A temp dir of its own, where no networked command has made the proxy sockets' directory yet.
      vi.stubEnv("TMPDIR", tempDir("cc-tools-ahead-tmp-"));
      onTestFinished(() => {
        vi.unstubAllEnvs();
      });
      expect(existsSync(proxySocketDir())).toBe(false);
    }
    const { ctx } = project();
    const shell = await waitingSandbox(ctx);
    const { ws: elsewhere, ctx: networked } = project();
    networked.config.sandbox.network.allowedDomains = ["example.invalid"];
    const running = bash(networked, `touch started; sleep 3`);
    expect(await eventually(() => existsSync(join(elsewhere, "started")))).toBe(true);
    expect(readdirSync(proxySocketDir()).length).toBeGreaterThan(0);
    const { result, text } = await bash(ctx, "echo in");
    expect(shell.ran).toBe(true);
    expect(result.isError, text).toBe(false);
    expect((await running).result.isError).toBe(false);
  });

  it("is not used after the settings change (a new Read deny rule hides another file)", async () => {
    const { ctx, ws } = project();
    writeFileSync(join(ws, "notes.txt"), "NOTE-5678\n");
    const shell = await waitingSandbox(ctx);
    ctx.config.rules.push({
      rule: "Read(./notes.txt)",
      behavior: "deny",
      source: { scope: "project", root: ws },
    });
    const { text } = await bash(ctx, "cat notes.txt");
    expect(shell.ran).toBe(false);
    expect(text).not.toContain("NOTE-5678");
  });

  it("is replaced when it dies before its command, and ends with its session", async () => {
    const { ctx } = project();
    const shell = await waitingSandbox(ctx);
    process.kill(shell.pid!, "SIGKILL");
    expect(await eventually(() => !shell.waiting)).toBe(true);
    // Replaced at once, not only after the next command has paid for a bubblewrap of its own.
    expect(await eventually(() => waitingShell(ctx.session)?.ready === true)).toBe(true);
    expect(waitingShell(ctx.session)).not.toBe(shell);
    const { result, text } = await bash(ctx, "echo still works");
    expect(result.isError, text).toBe(false);
    expect(text).toContain("still works");
    const next = await waitingSandbox(ctx);
    const pid = next.pid!;
    await ctx.session.dispose();
    expect(
      await eventually(
        () => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z"),
      ),
    ).toBe(true);
  });
});

/** A workspace with no control file: no `.git`, `.claude/` or `.mcp.json`, each kept from being made. */
function bare() {
  const ws = join(tempDir("cc-tools-ahead-bare-"), "ws");
  mkdirSync(ws);
  const outside = tempDir("cc-tools-ahead-outside-");
  return { ws, outside, ctx: sandboxContext(ws, sandboxSettings(ws)) };
}

/** This process's stand-in helpers (sandbox/mounter.ts) still running. */
function mounterProcesses(): string[] {
  return readdirSync("/proc").filter((pid) => {
    try {
      const parent = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1];
      return (
        Number(parent) === process.pid &&
        readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("NS_GET_USERNS")
      );
    } catch {
      return false;
    }
  });
}

describe("a sandbox started ahead where control files are missing", () => {
  it("shows the command an empty directory where a control file is missing, so git has nothing to add", async () => {
    const { ctx, ws } = bare();
    // A repository without .claude/ or .mcp.json: both get stand-ins, each holding this process's marker.
    execFileSync("git", ["init", "-q", ws]);
    writeFileSync(join(ws, "a.txt"), "a\n");
    const check = "ls -A .claude .mcp.json; git add -A && git status --porcelain";
    // First in a sandbox of its own, then in one started ahead, whose stand-ins come with the command.
    for (const ahead of [false, true]) {
      const shell = ahead ? await waitingSandbox(ctx) : undefined;
      const { result, text } = await bash(ctx, check);
      if (shell) expect(shell.ran).toBe(true);
      expect(result.isError, text).toBe(false);
      expect(text).not.toContain("cc-tools-sandbox");
      expect(text.split("\n").filter((line) => /^[AM?]/.test(line))).toEqual(["A  a.txt"]);
    }
    await nextTurn();
    expect(readdirSync(ws).sort()).toEqual([".git", "a.txt"]);
  });

  it("waits without stand-ins in the workspace, and gets them before its command runs", async () => {
    const { ctx, ws, outside } = bare();
    for (const command of [
      "mkdir -p .claude && echo '{}' > .claude/settings.json",
      `echo '{"mcpServers":{}}' > .mcp.json`,
      "git init -q .",
      "mkdir -p .git/hooks && printf x > .git/hooks/pre-commit",
      "mv .claude claude-old",
      "rmdir .mcp.json",
      `echo pwned > ${outside}/direct`,
    ]) {
      const shell = await waitingSandbox(ctx);
      await nextTurn();
      // While it waits, the workspace is as the user left it: no placeholder in it.
      expect(readdirSync(ws), command).toEqual([]);
      const helpers = mounterProcesses();
      expect(helpers).toHaveLength(1);
      const { result, text } = await bash(ctx, command);
      expect(shell.ran, command).toBe(true);
      expect(result.isError, `${command}: ${text}`).toBe(true);
      // The helper was gone before the command ran.
      expect(mounterProcesses()).not.toContain(helpers[0]);
    }
    await nextTurn();
    expect(readdirSync(ws)).toEqual([]);
    expect(readdirSync(outside)).toEqual([]);
    // Ordinary work goes on in it.
    const shell = await waitingSandbox(ctx);
    const { result, text } = await bash(ctx, "echo hi > notes.txt && cat notes.txt");
    expect(shell.ran).toBe(true);
    expect(result.isError, text).toBe(false);
    expect(text).toBe("hi");
    await nextTurn();
    expect(readdirSync(ws)).toEqual(["notes.txt"]);
  });

  it("binds a control file the host made while it waited read-only, as a sandbox of its own would", async () => {
    const { ctx, ws } = bare();
    const shell = await waitingSandbox(ctx);
    writeFileSync(join(ws, ".mcp.json"), '{"mcpServers":{}}\n');
    const { result, text } = await bash(ctx, "cat .mcp.json && echo '{}' > .mcp.json");
    expect(result.isError).toBe(true);
    expect(text).toContain('{"mcpServers":{}}');
    expect(text).toContain("Read-only file system");
    await nextTurn();
    expect(readFileSync(join(ws, ".mcp.json"), "utf8")).toBe('{"mcpServers":{}}\n');
    expect(shell.waiting).toBe(false);
  });

  it("is not used when a missing control file appears as a symlink while it waits (bubblewrap follows it)", async () => {
    const { ctx, ws } = bare();
    mkdirSync(join(ws, "config", "claude"), { recursive: true });
    writeFileSync(join(ws, "config", "mcp.json"), '{"mcpServers":{}}\n');
    writeFileSync(join(ws, "config", "claude", "settings.json"), "{}\n");
    const shell = await waitingSandbox(ctx);
    // As a checkout of a branch that has them as links would.
    symlinkSync("config/mcp.json", join(ws, ".mcp.json"));
    symlinkSync("config/claude", join(ws, ".claude"));
    const { result } = await bash(
      ctx,
      `echo '{"mcpServers":{"x":{"command":"sh"}}}' > .mcp.json; echo '{"hooks":"x"}' > .claude/settings.json`,
    );
    expect(shell.ran).toBe(false);
    expect(result.isError).toBe(true);
    await nextTurn();
    expect(readFileSync(join(ws, "config", "mcp.json"), "utf8")).toBe('{"mcpServers":{}}\n');
    expect(readFileSync(join(ws, "config", "claude", "settings.json"), "utf8")).toBe("{}\n");
  });

  it("is killed, with its helper, when the command's arguments differ (a new deny rule)", async () => {
    const { ctx, ws } = bare();
    writeFileSync(join(ws, "notes.txt"), "NOTE-5678\n");
    const shell = await waitingSandbox(ctx);
    const helpers = mounterProcesses();
    expect(helpers).toHaveLength(1);
    ctx.config.rules.push({
      rule: "Read(./notes.txt)",
      behavior: "deny",
      source: { scope: "project", root: ws },
    });
    const { result, text } = await bash(ctx, "echo x > .mcp.json");
    expect(shell.ran).toBe(false);
    expect(result.isError, text).toBe(true);
    expect(await eventually(() => !mounterProcesses().includes(helpers[0]!))).toBe(true);
    await nextTurn();
    expect(readdirSync(ws)).toEqual(["notes.txt"]);
  });
});

/** The spawn spec shell-run.ts builds for a Bash `command` in the workspace. */
function bashSpec(ctx: ToolContext, command: string): SpawnSpec {
  const bashPath = locateExecutable("bash", process.env.PATH)!;
  const { file, args } = bashAdapter.invocation(bashPath, command, undefined);
  const asInit = bashAdapter.invocationAsInit!.bind(bashAdapter, bashPath, command, undefined);
  return { file, args, cwd: ctx.workingDir, env: { PATH: process.env.PATH }, asInit };
}

/** The process bubblewrap runs for `shell`: its only child. */
function innerPid(shell: PrestartedShell): number {
  return Number(readFileSync(`/proc/${shell.pid}/task/${shell.pid}/children`, "utf8").trim().split(" ")[0]);
}

/** The command line of the process bubblewrap runs for `shell`, or "". */
function innerCommandLine(shell: PrestartedShell): string {
  try {
    return readFileSync(`/proc/${innerPid(shell)}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

/** Ends `shell`'s process and waits for it, whatever state it is in. */
async function ended(shell: PrestartedShell): Promise<boolean> {
  return eventually(
    () =>
      !existsSync(`/proc/${shell.pid}`) || readFileSync(`/proc/${shell.pid}/stat`, "utf8").includes(") Z"),
  );
}

describe("a command's shell started in the waiting sandbox while its launch is judged", () => {
  it("is how a command runs there: same output as in a sandbox of its own, stdin empty, the gate closed", async () => {
    const command = 'read -r x; echo "read=$?"; [ -e /proc/self/fd/3 ] && echo fd3-open || echo fd3-closed';
    const { ctx } = project();
    const shell = await waitingSandbox(ctx);
    const early = await bash(ctx, command);
    expect(shell.startedEarly).toBe(true);
    expect(shell.ran).toBe(true);
    // The same command in a sandbox of its own (no waiting shell: a new session, nothing prestarted yet).
    const own = await bash(project().ctx, command);
    expect(early.text).toBe("read=1\nfd3-closed");
    expect(own.text).toBe(early.text);
  });

  it("runs nothing before the go-ahead, and nothing at all when it is killed instead", async () => {
    const { ctx, ws } = project();
    const shell = await waitingSandbox(ctx);
    takePrestarted(ctx.session);
    shell.startEarly(bashSpec(ctx, "echo ran >> ran.txt"), newLaunchId());
    expect(shell.startedEarly).toBe(true);
    // Exec'd, with its shell at the gate: the command's text is its argv, and it has not run.
    expect(await eventually(() => innerCommandLine(shell).includes("ran.txt"))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(existsSync(join(ws, "ran.txt"))).toBe(false);
    expect(shell.waiting).toBe(true);
    shell.discard();
    expect(await ended(shell)).toBe(true);
    expect(existsSync(join(ws, "ran.txt"))).toBe(false);
  });

  it("gets the go-ahead only for the very launch it was started for", async () => {
    const { ctx, ws } = project();
    const request = { command: "", shell: "bash" as const };
    // The same launch: it runs once, in that shell.
    let shell = await waitingSandbox(ctx);
    takePrestarted(ctx.session);
    const id = newLaunchId();
    shell.startEarly(bashSpec(ctx, "echo A >> log.txt"), id);
    const same = await sandboxLaunch(ctx, bashSpec(ctx, "echo A >> log.txt"), request, id);
    const run = shell.claim(same.file, same.args, same.cwd, same.env, same.gated);
    expect(run?.child.pid).toBe(shell.pid);
    expect(await ended(shell)).toBe(true);
    await same.release();
    expect(readFileSync(join(ws, "log.txt"), "utf8")).toBe("A\n");
    // Another command, another launch id, or another environment: killed before it ran.
    for (const [spec, launchId] of [
      [bashSpec(ctx, "echo B >> log.txt"), id],
      [bashSpec(ctx, "echo A >> log.txt"), newLaunchId()],
      [{ ...bashSpec(ctx, "echo A >> log.txt"), env: { PATH: process.env.PATH, EXTRA: "1" } }, id],
    ] as const) {
      await bash(ctx, "true");
      await nextTurn();
      expect(await eventually(() => waitingShell(ctx.session)?.ready === true)).toBe(true);
      shell = takePrestarted(ctx.session)!;
      shell.startEarly(bashSpec(ctx, "echo A >> log.txt"), id);
      expect(shell.startedEarly).toBe(true);
      const other = await sandboxLaunch(ctx, spec, request, launchId);
      expect(shell.claim(other.file, other.args, other.cwd, other.env, other.gated)).toBeUndefined();
      expect(await ended(shell)).toBe(true);
      await other.release();
    }
    expect(readFileSync(join(ws, "log.txt"), "utf8")).toBe("A\n");
  });

  it("is not started where bash would read a startup file before the gate (BASH_ENV, a host started over ssh)", async () => {
    for (const startup of ["BASH_ENV", "SSH_CLIENT"] as const) {
      const { ctx, ws } = project();
      const home = tempDir("cc-tools-ahead-home-");
      const script = 'echo sourced >> "$PWD/sourced.txt"\n';
      writeFileSync(join(ws, "env.sh"), script);
      // Debian's bash sources ~/.bashrc for `bash -c` under sshd (SSH_CLIENT set, a low shell level).
      writeFileSync(join(home, ".bashrc"), script);
      writeFileSync(join(ws, "notes.txt"), "NOTE\n");
      Object.assign(
        ctx.config.env,
        startup === "BASH_ENV"
          ? { BASH_ENV: join(ws, "env.sh") }
          : { SSH_CLIENT: "192.0.2.1 50000 22", SHLVL: "0", HOME: home },
      );
      const shell = await waitingSandbox(ctx);
      rmSync(join(ws, "sourced.txt"), { force: true });
      // A launch that will not fit the waiting sandbox: a shell started early would have read the file
      // there, before its gate, and the command's own sandbox would read it again.
      ctx.config.rules.push({
        rule: "Read(./notes.txt)",
        behavior: "deny",
        source: { scope: "project", root: ws },
      });
      const { text } = await bash(ctx, "echo done");
      expect(shell.startedEarly, startup).toBe(false);
      expect(shell.ran).toBe(false);
      expect(text).toBe("done");
      const sourced = existsSync(join(ws, "sourced.txt"))
        ? readFileSync(join(ws, "sourced.txt"), "utf8")
        : "";
      if (startup === "BASH_ENV") expect(sourced).toBe("sourced\n");
      // (A bash built without SSH_SOURCE_BASHRC reads no file at all here.)
      else expect(["", "sourced\n"]).toContain(sourced);
    }
  });

  it("runs in the command's directory when claimed before it got there", async () => {
    const { ctx, ws } = project();
    const shell = await waitingSandbox(ctx);
    takePrestarted(ctx.session);
    const spec = bashSpec(ctx, "pwd -P > where.txt");
    const id = newLaunchId();
    const launch = await sandboxLaunch(ctx, spec, { command: "", shell: "bash" }, id);
    // Stopped, the shell cannot read its script before the claim: it still waits in the sandbox's `/`.
    const inner = innerPid(shell);
    process.kill(inner, "SIGSTOP");
    shell.startEarly(spec, id);
    const run = shell.claim(launch.file, launch.args, launch.cwd, launch.env, launch.gated);
    process.kill(inner, "SIGCONT");
    expect(run).toBeDefined();
    expect(await ended(shell)).toBe(true);
    await launch.release();
    expect(readFileSync(join(ws, "where.txt"), "utf8")).toBe(`${ws}\n`);
  });

  it("is killed when the directory it entered is no longer the one at the command's path", async () => {
    const { ctx, ws } = project();
    mkdirSync(join(ws, "sub"));
    const shell = await waitingSandbox(ctx);
    takePrestarted(ctx.session);
    const spec = { ...bashSpec(ctx, "echo x > made-here"), cwd: join(ws, "sub") };
    const id = newLaunchId();
    shell.startEarly(spec, id);
    expect(await eventually(() => innerCommandLine(shell).includes("made-here"))).toBe(true);
    renameSync(join(ws, "sub"), join(ws, "sub-old"));
    mkdirSync(join(ws, "sub"));
    const launch = await sandboxLaunch(ctx, spec, { command: "", shell: "bash" }, id);
    expect(shell.claim(launch.file, launch.args, launch.cwd, launch.env, launch.gated)).toBeUndefined();
    expect(await ended(shell)).toBe(true);
    await launch.release();
    expect(readdirSync(join(ws, "sub-old"))).toEqual([]);
  });

  it("is killed when a background command cannot start after all (its output file cannot be made)", async () => {
    const { ctx } = project();
    const shell = await waitingSandbox(ctx);
    // Where the session's first task writes its output.
    mkdirSync(join(ctx.session.dir, "shell_1.output"));
    const { result } = await bash(ctx, "echo hi", { run_in_background: true });
    expect(result.isError).toBe(true);
    expect(shell.startedEarly).toBe(true);
    expect(await ended(shell)).toBe(true);
  });
});
