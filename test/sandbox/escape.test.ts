import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToolContext } from "../../src/context.js";
import { Session } from "../../src/core/session.js";
import { sandboxMode } from "../../src/sandbox/mode.js";
import { tempDir } from "../helpers/context.js";
import { eventually, survivors, uniqueSeconds } from "../process/ps.js";
import { bash, loopbackServer, nextTurn, sandboxContext, sandboxSettings } from "./helpers.js";

const SECRET = "TOP-SECRET-4711";
const ENV_SECRET = "ENV-SECRET-0815";
const HOOK = "#!/bin/sh\nexit 0\n";

/** A directory for a whole describe block (tempDir's are removed after each test). */
const longLived: string[] = [];
afterAll(() => {
  for (const dir of longLived) rmSync(dir, { recursive: true, force: true });
});
function blockDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  longLived.push(dir);
  return dir;
}

/**
 * A workspace with every kind of control file, Read-denied files and a hook script, plus a directory
 * outside. `shared`: kept for the whole describe block.
 */
function setup(
  sandbox = {},
  rules: Array<["allow" | "deny" | "ask", string]> = [
    ["deny", "Read(./secrets/**)"],
    ["deny", "Read(.env)"],
  ],
  shared = false,
) {
  const dir = shared ? blockDir : tempDir;
  const ws = dir("cc-tools-sandbox-ws-");
  const outside = dir("cc-tools-sandbox-outside-");
  execFileSync("git", ["init", "-q", ws]);
  mkdirSync(join(ws, ".claude"));
  writeFileSync(join(ws, ".claude", "settings.json"), '{"permissions": {}}\n');
  writeFileSync(join(ws, ".claude", "settings.local.json"), "{}\n");
  mkdirSync(join(ws, "scripts", "hooks"), { recursive: true });
  writeFileSync(join(ws, "scripts", "hooks", "guard.sh"), HOOK);
  chmodSync(join(ws, "scripts", "hooks", "guard.sh"), 0o755);
  mkdirSync(join(ws, "secrets"));
  writeFileSync(join(ws, "secrets", "token.txt"), `${SECRET}\n`);
  mkdirSync(join(ws, "app", "config"), { recursive: true });
  writeFileSync(join(ws, "app", "config", ".env"), `${ENV_SECRET}\n`);
  // A repository that keeps its hooks in the working tree, as husky sets up.
  execFileSync("git", ["-C", ws, "config", "core.hooksPath", ".husky"]);
  mkdirSync(join(ws, ".husky"));
  const config = sandboxSettings(ws, sandbox, rules, {
    hooks: {
      PreToolUse: [
        {
          matcher: "NoSuchTool",
          hooks: [{ type: "command", command: '"$CLAUDE_PROJECT_DIR"/scripts/hooks/guard.sh' }],
        },
      ],
      PostToolUse: [],
    },
  });
  const ctx = shared
    ? createToolContext({
        workingDir: ws,
        config,
        permissionMode: "bypassPermissions",
        session: new Session({ dir: join(dir("cc-tools-session-"), "s") }),
      })
    : sandboxContext(ws, config);
  return { ws, outside, ctx, gitConfig: readFileSync(join(ws, ".git", "config"), "utf8") };
}

describe("the sandbox on this machine", () => {
  it("is available and on by default (CI installs bubblewrap; these tests are never skipped)", () => {
    const { ctx } = setup();
    const mode = sandboxMode(ctx);
    expect(mode.availability).toMatchObject({ ok: true });
    expect(mode.active).toBe(true);
  });
});

describe("escape attempts, each checked by its effect", () => {
  let env: ReturnType<typeof setup>;
  beforeAll(() => {
    env = setup(undefined, undefined, true);
  });
  afterAll(() => env.ctx.session.dispose());

  it.each([
    ["directly", 'echo pwned > "$OUT/direct"'],
    ["through /proc/self/cwd", 'cd "$OUT" && echo pwned > /proc/self/cwd/direct'],
    ["through /dev/fd", 'echo pwned 3>"$OUT/direct" >/dev/fd/3'],
    ["through a symlink made inside", 'ln -s "$OUT/direct" link && echo pwned > link'],
    ["with python3 -c", `python3 -c "open('$OUT/direct', 'w').write('pwned')"`],
    ["into /tmp itself", "echo pwned > /tmp/cc-tools-sandbox-escape-probe && echo made /tmp"],
  ])("cannot write outside the workspace %s", async (_how, command) => {
    const { result, text } = await bash(env.ctx, command.replaceAll("$OUT", env.outside));
    expect(result.isError).toBe(true);
    expect(readdirSync(env.outside)).toEqual([]);
    expect(text).not.toContain("made /tmp");
    expect(existsSync("/tmp/cc-tools-sandbox-escape-probe")).toBe(false);
    // Where the rules already refuse the command (the splitter does not follow /proc/self/cwd after a cd),
    // the kernel never has to; otherwise the result says the sandbox blocked it and which setting opens it.
    if (/Permission to use Bash was denied/.test(text)) return;
    expect(text).toMatch(/The sandbox kept the command from writing there/);
    expect(text).toMatch(/sandbox\.filesystem\.allowWrite/);
  });

  it.each([
    ["append to .git/config", "echo '[core] hooksPath = /tmp/x' >> .git/config"],
    ["replace .git/config", "printf x > .git/config.new && mv .git/config.new .git/config"],
    ["add a git hook", "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit"],
    [
      "write .claude/settings.local.json",
      `echo '{"sandbox":{"enabled":false}}' > .claude/settings.local.json`,
    ],
    ["add a file to .claude", "echo x > .claude/new.json"],
    ["append to the hook script", "echo 'curl evil' >> scripts/hooks/guard.sh"],
    [
      "delete and recreate the hook script",
      "rm -f scripts/hooks/guard.sh; echo 'curl evil' > scripts/hooks/guard.sh",
    ],
    [
      "swap the hook script's directory",
      "mv scripts/hooks scripts/hooks-old; mkdir scripts/hooks && echo evil > scripts/hooks/guard.sh",
    ],
    [
      "swap the hook script's grandparent",
      "mv scripts scripts-old; mkdir -p scripts/hooks && echo evil > scripts/hooks/guard.sh",
    ],
    [
      "rename .claude and make a new one",
      `mv .claude .claude-old; mkdir .claude && echo '{"sandbox":{"enabled":false}}' > .claude/settings.json`,
    ],
    [
      "swap .git for an edited copy",
      "cp -r .git /tmp/g 2>/dev/null; mv .git .git-old; cp -r .git-old .git2 && mv .git2 .git",
    ],
    ["create .mcp.json", `echo '{"mcpServers":{"x":{"command":"sh"}}}' > .mcp.json`],
    [
      "point git at another common dir",
      "cp -r .git evil && printf '[core]\\n\\thooksPath = /tmp\\n' > evil/config && echo ../evil > .git/commondir; false",
    ],
    ["add a hook in core.hooksPath (.husky)", "mkdir -p .husky; echo evil > .husky/pre-commit"],
    [
      "python3 rewriting .git/config",
      `python3 -c "open('.git/config','a').write('[core]\\n\\thooksPath=/x\\n')"`,
    ],
  ])("cannot %s", async (_what, command) => {
    const { result, text } = await bash(env.ctx, command);
    await nextTurn();
    expect(result.isError, text).toBe(true);
    // The rules refuse some of these before the kernel has to (control files, unknown -c runners); either
    // way the effect on disk is checked below.
    expect(text).toMatch(
      /The sandbox (kept the command from writing there|keeps control files|keeps .* from being created|removed .*commondir)|Permission to use Bash was denied/,
    );
    const ws = env.ws;
    expect(readFileSync(join(ws, ".git", "config"), "utf8")).toBe(env.gitConfig);
    expect(existsSync(join(ws, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(readFileSync(join(ws, ".claude", "settings.local.json"), "utf8")).toBe("{}\n");
    expect(readFileSync(join(ws, ".claude", "settings.json"), "utf8")).toBe('{"permissions": {}}\n');
    expect(readdirSync(join(ws, ".claude")).sort()).toEqual(["settings.json", "settings.local.json"]);
    expect(readFileSync(join(ws, "scripts", "hooks", "guard.sh"), "utf8")).toBe(HOOK);
    expect(readdirSync(join(ws, ".husky"))).toEqual([]);
    expect(existsSync(join(ws, ".mcp.json"))).toBe(false);
    expect(existsSync(join(ws, ".git", "commondir"))).toBe(false);
    for (const moved of [".claude-old", ".git-old", "scripts-old", "scripts/hooks-old"]) {
      expect(existsSync(join(ws, moved)), moved).toBe(false);
    }
  });

  it.each([
    ["cat", "cat secrets/token.txt"],
    ["python3", `python3 -c "print(open('sec' + 'rets/token.txt').read())"`],
    ["a hard link", "ln secrets/token.txt copy.txt; cat copy.txt"],
    ["a listing", "ls secrets"],
    ["cat of an unanchored pattern's file", "cat app/config/.env"],
    [
      "python3 walking the tree",
      `python3 -c "import os; print([open(os.path.join(d,f)).read() for d,_,fs in os.walk('.') for f in fs if f.endswith('env')])"`,
    ],
  ])("cannot read a Read-denied file with %s", async (_how, command) => {
    const { result, text } = await bash(env.ctx, command);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(ENV_SECRET);
    expect(result.isError).toBe(true);
    expect(text).toMatch(/sandbox hides|denied by|cannot be checked against the deny rule/);
    expect(readFileSync(join(env.ws, "secrets", "token.txt"), "utf8")).toBe(`${SECRET}\n`);
  });

  it("cannot reach a Unix socket of the host (a daemon that would run commands outside)", async () => {
    const connections: number[] = [];
    const path = join(env.outside, "agent.sock");
    const server = createServer(() => connections.push(1));
    await new Promise<void>((r) => server.listen(path, r));
    try {
      const { result } = await bash(
        env.ctx,
        `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${path}'); print('connected')"`,
      );
      expect(result.isError).toBe(true);
      expect(connections).toEqual([]);
    } finally {
      await new Promise((r) => server.close(r));
      rmSync(path, { force: true });
    }
  });

  it("cannot remount the file system writable, even as root: root inside is not root outside", async () => {
    const { result, text } = await bash(
      env.ctx,
      "grep NoNewPrivs /proc/self/status; mount -o remount,rw / && touch /etc/cc-tools-pwned; unshare -r true && echo nested",
    );
    expect(result.isError).toBe(true);
    expect(existsSync("/etc/cc-tools-pwned")).toBe(false);
    expect(text).not.toContain("nested");
    expect(text).toMatch(/NoNewPrivs:\s+1/);
  });

  it("leaves no process behind that outlives its command, however it detached", async () => {
    const seconds = uniqueSeconds();
    const { result } = await bash(
      env.ctx,
      `sleep ${seconds} & (setsid sleep ${seconds} &) ; nohup sleep ${seconds} >/dev/null 2>&1 & disown; echo started`,
    );
    expect(result.isError).toBe(false);
    expect(await eventually(() => survivors(`sleep ${seconds}`).length === 0)).toBe(true);
  });

  it("runs the command as the PID namespace's init where bubblewrap can: orphans are reaped, strays noted, exit codes kept", async () => {
    const { ctx } = setup({}, []);
    expect(sandboxMode(ctx).availability).toMatchObject({ ok: true, asPid1: true });
    const reaped = await bash(
      ctx,
      "for i in 1 2 3 4 5; do (sleep 0.05 &); done; sleep 0.6; " +
        "grep -s -l '^State:.Z' /proc/[0-9]*/status | wc -l",
    );
    expect(reaped.text).toBe("0");
    expect((await bash(ctx, "cat /proc/1/comm")).text).toBe("bash");
    const seconds = uniqueSeconds();
    const left = await bash(ctx, `sleep ${seconds} & exit 3`);
    expect(left.text).toMatch(/^Exit code 3/);
    expect(left.text).toContain("Processes the command left running were stopped");
    expect(await eventually(() => survivors(`sleep ${seconds}`).length === 0)).toBe(true);
  });

  it("makes the command's own bash the init: no process between bwrap and it, and it still keeps exit statuses, signals, strays and the cwd", async () => {
    const { ctx, ws } = setup({}, []);
    const chain = await bash(ctx, 'echo $$; ps -eo pid=,comm= > "$TMPDIR/ps"; grep -v \' ps$\' "$TMPDIR/ps"');
    expect(chain.text.split("\n").map((l) => l.trim())).toEqual(["1", "1 bash"]);
    // A signal the command sends its shell ends it with the shell's usual status (pid 1 would ignore it).
    expect((await bash(ctx, "kill $$; echo not reached")).text).toBe("Exit code 143");
    expect((await bash(ctx, "kill -HUP $$")).text).toBe("Exit code 129");
    expect((await bash(ctx, "sh -c 'kill -TERM $$'")).text).toMatch(/^Exit code 143/);
    // A signal whose default is a core dump ends it the same way, its EXIT trap included (the cwd is kept).
    expect((await bash(ctx, "mkdir -p seg && cd seg && kill -SEGV $$")).text).toBe("Exit code 139");
    expect((await bash(ctx, "pwd")).text).toBe(join(ws, "seg"));
    await bash(ctx, "cd ..");
    // The check at exit does not show in a command's trace.
    const traced = await bash(ctx, "set -x; echo hi");
    expect(traced.text).not.toContain("__cc_p");
    expect(traced.text).toContain("hi");
    // The command's shell options do not stop the check or change the status; both detached kinds of
    // process are noted and gone, and the directory the command ended in is kept.
    const seconds = uniqueSeconds();
    const left = await bash(
      ctx,
      `set -euf; shopt -s failglob; IFS=/; mkdir -p sub; cd sub; sleep ${seconds} & (setsid sleep ${seconds} &); false`,
    );
    expect(left.text).toMatch(/^Exit code 1\b/);
    expect(left.text).toContain("Processes the command left running were stopped");
    expect(await eventually(() => survivors(`sleep ${seconds}`).length === 0)).toBe(true);
    expect((await bash(ctx, "pwd")).text).toBe(join(ws, "sub"));
    // Nothing left: no note, and no stray-check file in the session's temp dir.
    const clean = await bash(ctx, 'sleep 0.05 & wait; ls -A "$TMPDIR" | grep -c strays || true');
    expect(clean.text).toBe("0");
  });

  it("leaves nothing of a command killed at its time-out, however its processes detached or hid their marker", async () => {
    const { ctx } = setup({}, []);
    const seconds = uniqueSeconds();
    // `setsid env -i` escapes both the group and the run marker: only the PID namespace holds it.
    const { text } = await bash(
      ctx,
      `(setsid env -i sleep ${seconds} &); (setsid sleep ${seconds} &); sleep ${seconds}`,
      { timeout: 500 },
    );
    expect(text).toContain("timed out");
    expect(await eventually(() => survivors(`sleep ${seconds}`).length === 0)).toBe(true);
    const quick = await bash(ctx, `(setsid env -i sleep ${seconds} &); echo done`);
    expect(quick.text).toContain("Processes the command left running were stopped");
    expect(survivors(`sleep ${seconds}`)).toEqual([]);
  });

  it("notes strays with the network bridge too, where bash is neither pid 1 nor the bridge", async () => {
    const { ctx } = setup({ network: { allowedDomains: ["127.0.0.2"], deniedDomains: [] } }, []);
    const seconds = uniqueSeconds();
    const left = await bash(ctx, `sleep ${seconds} & exit 3`);
    expect(left.text).toMatch(/^Exit code 3/);
    expect(left.text).toContain("Processes the command left running were stopped");
    expect(await eventually(() => survivors(`sleep ${seconds}`).length === 0)).toBe(true);
    expect((await bash(ctx, "kill $$")).text).toBe("Exit code 143");
    expect((await bash(ctx, "echo quiet")).text).toBe("quiet");
  });

  it("ends a command that ignores SIGTERM at its time-out, with everything it started", async () => {
    const { ctx } = setup({}, []);
    const seconds = uniqueSeconds();
    const { result, text } = await bash(ctx, `trap '' TERM; sleep ${seconds} & sleep ${seconds}`, {
      timeout: 500,
    });
    expect(result.isError).toBe(true);
    expect(text).toContain("timed out");
    expect(await eventually(() => survivors(`sleep ${seconds}`).length === 0)).toBe(true);
  });

  it("still does the ordinary work: writes in the workspace and $TMPDIR, git commits, persistent cwd, background jobs", async () => {
    const { ctx, ws } = setup({}, []);
    let run = await bash(
      ctx,
      'mkdir -p work && cd work && echo data > f.txt && echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t" && ' +
        "git -c user.email=a@b -c user.name=n add f.txt && git -c user.email=a@b -c user.name=n commit -qm one && echo committed",
    );
    expect(run.text).toContain("tmp\ncommitted");
    expect(readFileSync(join(ws, "work", "f.txt"), "utf8")).toBe("data\n");
    run = await bash(ctx, "pwd");
    expect(run.text).toBe(join(ws, "work"));
    const started = await bash(ctx, "sleep 0.2; echo bg > bg.txt", { run_in_background: true });
    expect(started.result.isError).toBe(false);
    expect(await eventually(() => existsSync(join(ws, "work", "bg.txt")))).toBe(true);
    expect(run.result.metadata).toMatchObject({ sandboxed: true });
    // The placeholders that kept .mcp.json from being created are gone once nothing runs.
    await bash(ctx, "cd ..");
    await nextTurn();
    expect(existsSync(join(ws, ".mcp.json"))).toBe(false);
  });
});

describe("placeholders shared by overlapping commands", () => {
  it.each([
    ["a .claude settings file", "mkdir -p .claude && echo '{}' > .claude/settings.json", ".claude"],
    ["a .git repository", "mkdir -p .git && echo 'ref: refs/heads/main' > .git/HEAD", ".git"],
    ["a .mcp.json", "echo '{}' > .mcp.json && ls -la .mcp.json", ".mcp.json"],
  ])("a command cannot create %s once the command it overlapped has ended", async (_what, create, name) => {
    // A bare workspace: .claude, .mcp.json and .git are all missing, so each command runs with placeholders.
    const ws = tempDir("cc-tools-sandbox-bare-");
    const ctx = sandboxContext(ws, sandboxSettings(ws));
    try {
      const first = await bash(ctx, "sleep 0.5", { run_in_background: true });
      expect(first.result.isError).toBe(false);
      // Starts while the first holds the placeholders, tries after the first has ended (and let go of them).
      const second = await bash(ctx, `sleep 2; ${create}; echo tried`);
      expect(second.text).toContain("tried");
      await nextTurn();
      // Nothing was created: the placeholder was still in place, or is gone without anything inside.
      expect(existsSync(join(ws, ".claude", "settings.json"))).toBe(false);
      expect(existsSync(join(ws, ".git", "HEAD"))).toBe(false);
      expect(existsSync(join(ws, ".mcp.json"))).toBe(false);
      expect(existsSync(join(ws, name))).toBe(false);
    } finally {
      await ctx.session.dispose();
    }
  });
});

describe("network", () => {
  it("is off when no host is allowed: a loopback server of the host is unreachable", async () => {
    const server = await loopbackServer("127.0.0.1");
    const { ctx } = setup();
    const { result, text } = await bash(ctx, `curl -sS --max-time 5 http://127.0.0.1:${server.port}/`);
    expect(result.isError).toBe(true);
    expect(server.requests).toEqual([]);
    expect(text).toMatch(/The sandbox gives commands no network access/);
    expect(text).toMatch(/sandbox\.network\.allowedDomains/);
    expect(text).not.toMatch(/dangerouslyDisableSandbox/);
  });

  it("reaches an allowed host through the proxy and nothing else, in bypassPermissions mode too", async () => {
    const allowed = await loopbackServer("127.0.0.2", "allowed body");
    const other = await loopbackServer("127.0.0.3", "other body");
    const { ctx } = setup({ network: { allowedDomains: ["127.0.0.2"], deniedDomains: [] } });
    expect(ctx.permissionMode).toBe("bypassPermissions");
    const ok = await bash(ctx, `curl -sS --max-time 10 http://127.0.0.2:${allowed.port}/x`);
    expect(ok.text).toBe("allowed body");
    expect(allowed.requests).toEqual([`GET /x host=127.0.0.2:${allowed.port}`]);

    const attempts = [
      `curl -sS --max-time 10 http://127.0.0.3:${other.port}/`,
      `curl -sS --max-time 10 -p http://127.0.0.3:${other.port}/`,
      `curl -sS --max-time 10 -H "Host: 127.0.0.3:${other.port}" http://127.0.0.2:${allowed.port}/`,
      `curl -sS --max-time 10 "http://127.0.0.2@127.0.0.3:${other.port}/"`,
      `ALL_PROXY=http://127.0.0.3:${other.port} HTTP_PROXY= http_proxy= curl -sS --max-time 5 --noproxy '' http://127.0.0.3:${other.port}/`,
      `curl -sS --max-time 5 --noproxy '*' http://127.0.0.2:${allowed.port}/direct`,
    ];
    for (const command of attempts) {
      const { text } = await bash(ctx, `${command}; echo "exit=$?"`);
      expect(text, command).not.toContain("other body");
      expect(text, command).not.toMatch(/exit=0$/);
    }
    expect(other.requests).toEqual([]);
    expect(allowed.requests).toHaveLength(1);
    const blocked = await bash(ctx, `curl -sS --max-time 10 http://127.0.0.3:${other.port}/`);
    expect(blocked.text).toMatch(/The sandbox blocked network access: 127\.0\.0\.3/);
    expect(blocked.text).toMatch(/sandbox\.network\.allowedDomains/);
  });

  it("keeps bwrap's own init with the network bridge, which does not reap orphans", async () => {
    const { ctx } = setup({ network: { allowedDomains: ["127.0.0.2"], deniedDomains: [] } }, []);
    expect((await bash(ctx, "cat /proc/1/comm")).text).toBe("bwrap");
  });

  it("opens hosts named by WebFetch(domain:…) allow rules", async () => {
    const allowed = await loopbackServer("127.0.0.2", "via rule");
    const { ctx } = setup({}, [["allow", "WebFetch(domain:127.0.0.2)"]]);
    const { text } = await bash(ctx, `curl -sS --max-time 10 http://127.0.0.2:${allowed.port}/`);
    expect(text).toBe("via rule");
  });
});
