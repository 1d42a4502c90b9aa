import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ToolContext } from "../../src/core/context.js";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { YOUNG_GENERATION_FLAG } from "../../src/process/memory.js";
import { prestartSlot, usePrestartedShells } from "../../src/process/prestart.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir, testContext } from "../helpers/context.js";
import { eventually, survivors, uniqueSeconds } from "./ps.js";

// As the MCP server and the agent run: each session's next bash is started ahead of its command.
usePrestartedShells();

async function bash(ctx: ToolContext, command: string, extra: Record<string, unknown> = {}) {
  const result = await runTool("Bash", { command, ...extra }, ctx);
  return { result, text: ToolResult.text(result) };
}

/** Long enough for a shell to have been started ahead, where one would be. */
function quiet(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 200));
}

/** The pid of the shell waiting for the session's next command (started once the process is quiet). */
/**
 * The session's waiting shell once a command can be handed to it: inside a sandbox, once bubblewrap has set
 * that up and the stand-in helper has joined it (on a busy machine perl may take longer than a command
 * waits for it, and the command then gets a sandbox of its own).
 */
async function waitingShell(ctx: ToolContext): Promise<number> {
  await eventually(() => ctx.session.get(prestartSlot).shell?.ready === true, 2_000);
  const shell = ctx.session.get(prestartSlot).shell;
  expect(shell?.ready).toBe(true);
  return shell!.pid!;
}

function unsandboxed(env: Record<string, string> = {}, workingDir = tempDir()) {
  const config = emptySettings(workingDir);
  config.sandbox = { ...config.sandbox, enabled: false };
  config.env = env;
  return testContext({ workingDir, config });
}

describe("a shell started ahead of its command", () => {
  it("runs the next command itself, as the process a spawn would have started", async () => {
    const ctx = unsandboxed();
    expect(ctx.session.get(prestartSlot).shell).toBeUndefined();
    await bash(ctx, "true");
    const pid = await waitingShell(ctx);
    const { result, text } = await bash(
      ctx,
      'echo "$$ $PPID"; readlink /proc/self/fd/0; ps -o sid=,pgid= -p $$',
    );
    expect(result.isError).toBe(false);
    const [pids, stdin, ids] = text.split("\n");
    expect(pids).toBe(`${pid} ${process.pid}`);
    expect(stdin).toBe("/dev/null");
    // Its own session and process group, as a detached spawn.
    expect(ids!.trim().split(/\s+/)).toEqual([String(pid), String(pid)]);
  });

  it("gives the command the same environment, directory and shell level as a spawned one", async () => {
    const QUOTED = `it's "quoted" $HOME \`x\` \\ and\nnew line ünï`;
    const ctx = unsandboxed({
      QUOTED,
      EMPTY: "",
      LC_ALL: "C.UTF-8",
      TMOUT: "1",
      BASH_ENV: "",
      POSIXLY_CORRECT: "",
    });
    const probe =
      "env -0 | grep -zEv '^(_|CC_TOOLS_RUN)=' | sort -z | od -c; echo \"SHLVL=$SHLVL PWD=$PWD\"; shopt -po posix; " +
      'printf %s "$QUOTED" | sha256sum';
    const spawned = await bash(ctx, probe);
    const pid = await waitingShell(ctx);
    // TMOUT=1: the waiting shell must not have timed out its read.
    await new Promise((r) => setTimeout(r, 1_200));
    expect(ctx.session.get(prestartSlot).shell?.waiting).toBe(true);
    const prestarted = await bash(ctx, `echo $$; ${probe}`);
    expect(prestarted.result.isError).toBe(false);
    expect(prestarted.text).toBe(`${pid}\n${spawned.text}`);
    // The hostile value arrived whole.
    const quoted = createHash("sha256").update(QUOTED).digest("hex");
    expect(prestarted.text).toContain(`${quoted}  -`);
  });

  it("runs the command's script in itself, to the command the very bash a spawn starts", async () => {
    // What a command can see of its shell; the first line tells where it ran (not compared): a spawned or
    // exec'd bash has `-c` as its first argument, a waiting one `--noprofile`.
    const probe = [
      "tr '\\0' '\\n' </proc/$$/cmdline | sed -n 2p",
      'echo "[$_] [$0] [$LINENO] [$#] [$-] [$BASH_EXECUTION_STRING] [$n] [$c]"; (( SECONDS < 2 )) && echo fresh',
      "pwd; pwd -P; declare -p | grep -Ev '^declare -[-a-zA-Z]* (BASHPID|RANDOM|SRANDOM|EPOCH[A-Z]*|SECONDS|CC_TOOLS_RUN)='",
      "declare -f; shopt -p; set -o; trap -p; umask; ulimit -a; (set -x; : traced) 2>&1; cd .. && pwd",
      "env | grep -e ^XOV= -e ^TMOUT=; trap 'echo \"[$BASH_COMMAND]\"' EXIT; nosuch",
      'echo "$LINENO" )',
    ].join("\n");
    // Past the exit code and where it ran; files with a fresh name per command (where the directory is
    // written, the sandbox's marks).
    const same = (text: string) =>
      text
        .replace(/(cwd|\.started|\.strays)-[0-9a-f]{8}/g, "$1-")
        .split("\n")
        .slice(2)
        .join("\n");
    const real = tempDir();
    const linked = join(tempDir(), "link");
    symlinkSync(real, linked);
    const cases: Array<{ name: string; ctx: ToolContext }> = [
      // Variables with the names a waiting shell could use for itself.
      { name: "plain", ctx: unsandboxed({ n: "5", c: "hello" }) },
      // A PWD that names the directory through a symlink is the shell's logical directory.
      {
        name: "logical PWD",
        // XOV shares a bucket of bash's variable table with TMOUT: the environment keeps its order.
        ctx: unsandboxed({ PWD: linked, OLDPWD: real, SHLVL: "4", TMOUT: "30", XOV: "1" }, linked),
      },
      {
        name: "OLDPWD not a directory",
        ctx: unsandboxed({ OLDPWD: join(real, "missing"), PWD: "relative" }),
      },
      { name: "sandboxed", ctx: testContext() },
    ];
    for (const { name, ctx } of cases) {
      const spawned = await bash(ctx, probe);
      expect(spawned.text, name).toMatch(/^Exit code 2\n-c\n/);
      await waitingShell(ctx);
      // Its SECONDS counts from the command, not from when it began to wait.
      if (name === "plain") await new Promise((r) => setTimeout(r, 2_100));
      const prestarted = await bash(ctx, probe);
      expect(prestarted.text, name).toMatch(/^Exit code 2\n--noprofile\n/);
      expect(same(prestarted.text), name).toBe(same(spawned.text));
      expect(prestarted.text, name).toMatch(/\[5\] \[hello\]\nfresh\n|\[\] \[\]\nfresh\n/);
      expect(prestarted.text, name).toMatch(/\n\+\+\+ : traced\n/);
      expect(prestarted.text, name).toMatch(
        /bash: line 5: nosuch: command not found\n.*bash: eval: line 6: syntax error/,
      );
    }
    // The stand-ins a waiting sandbox mounts late come in the order bubblewrap would have mounted them.
    const sandboxed = cases.at(-1)!.ctx;
    const mounts = `${probe.split("\n")[0]}; awk '{print $5}' /proc/self/mountinfo`;
    const spawnedMounts = (await bash(sandboxed, mounts)).text.split("\n");
    await waitingShell(sandboxed);
    const [where, ...late] = (await bash(sandboxed, mounts)).text.split("\n");
    expect([where, ...late]).toEqual(["--noprofile", ...spawnedMounts.slice(1)]);
  });

  it("leaves a sandboxed command the variable its gate reads the go-ahead into", async () => {
    const ctx = testContext();
    ctx.config.env = { __cc_go: "user's" };
    const probe =
      "echo \"[$__cc_go]\"; env | grep -c \"^__cc_go=\"; tr '\\0' '\\n' </proc/$$/cmdline | sed -n 2p";
    expect((await bash(ctx, probe)).text).toBe("[user's]\n1\n-c");
    await waitingShell(ctx);
    expect((await bash(ctx, probe)).text).toBe("[user's]\n1\n--noprofile");
    ctx.config.env = {};
    await waitingShell(ctx);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
    expect((await bash(ctx, 'echo "[${__cc_go-unset}]"')).text).toBe("[unset]");
  });

  it("keeps the command's text whole in a locale where a byte and a backslash can make one character", async () => {
    const locales = tempDir();
    const made = spawnSync("localedef", ["-i", "zh_CN", "-f", "GBK", join(locales, "zh_CN.GBK")]);
    if (made.status !== 0) return; // no localedef or no GBK charmap here
    const ctx = unsandboxed({ LANG: "zh_CN.GBK", LOCPATH: locales });
    // 中 ends in 0xAD, which GBK reads with a following 0x5C (a backslash) as one character.
    const command = "echo '中'\necho \"$LINENO\"";
    expect((await bash(ctx, command)).text).toBe("中\n2");
    await waitingShell(ctx);
    expect((await bash(ctx, command)).text).toBe("中\n2");
    // A name that is a variable's only in a single-byte locale (õ is two letters in ISO-8859-1): a bash
    // started in it imports it, one waiting in C would not; such a command gets a bash of its own.
    if (spawnSync("localedef", ["-i", "fr_FR", "-f", "ISO-8859-1", join(locales, "fr_FR.ISO-8859-1")]).status)
      return;
    const latin = unsandboxed({ LANG: "fr_FR.ISO-8859-1", LOCPATH: locales, cafõ: "1" });
    const probe = "declare -p cafõ; unset cafõ; env | grep -ac '^caf'";
    const spawned = await bash(latin, probe);
    expect(spawned.text).toBe('Exit code 1\ndeclare -x cafõ="1"\n0');
    await waitingShell(latin);
    expect((await bash(latin, probe)).text).toBe(spawned.text);
  });

  it("gives a command without LC_ALL none, in the locale the rest of its environment names", async () => {
    // The waiting shell waits with LC_ALL=C (so `read -N` counts bytes) and only unexports it for the exec.
    const saved = process.env.LC_ALL;
    delete process.env.LC_ALL;
    try {
      const ctx = unsandboxed({ LANG: "C.UTF-8" });
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
      const probe = "env | grep -c '^LC_ALL=' ; x='é€'; echo \"${#x}\"; printf '%s' \"$x\" | od -An -tx1";
      const spawned = await bash(ctx, probe);
      expect(spawned.text.split("\n").slice(0, 2)).toEqual(["0", "2"]);
      const pid = await waitingShell(ctx);
      const prestarted = await bash(ctx, `echo $$; ${probe}`);
      expect(prestarted.text).toBe(`${pid}\n${spawned.text}`);
    } finally {
      if (saved !== undefined) process.env.LC_ALL = saved;
    }
  });

  it("is not started where the environment would act in it (SHELLOPTS, exported functions)", async () => {
    const envs: Array<Record<string, string>> = [
      { SHELLOPTS: "xtrace" },
      { "BASH_FUNC_read%%": "() { echo hijacked; }" },
    ];
    for (const env of envs) {
      const ctx = unsandboxed(env);
      const first = await bash(ctx, "echo one");
      await quiet();
      expect(ctx.session.get(prestartSlot).shell).toBeUndefined();
      const second = await bash(ctx, "echo one");
      // xtrace shows the wrapper, whose directory file has a fresh name per command, and traces its start
      // up to its `exec 2>&1` to stderr, which may come before or after the rest on stdout.
      const same = (text: string) =>
        text
          .replace(/cwd-[0-9a-f]{8}/g, "cwd-")
          .split("\n")
          .filter((line) => !/^(\+ eval 'set --; exec 2>&1; .*|\+\+ set --|\+\+ exec)$/.test(line))
          .join("\n");
      expect(same(second.text)).toBe(same(first.text));
      expect(second.text).not.toMatch(/read -r|hijacked/);
    }
  });

  it("runs BASH_ENV once, in the command's shell, as a spawn does", async () => {
    const dir = tempDir();
    const startup = join(dir, "startup.sh");
    writeFileSync(startup, `echo sourced >> ${join(dir, "log")}\n`);
    const ctx = unsandboxed({ BASH_ENV: startup });
    await bash(ctx, "true");
    const pid = await waitingShell(ctx);
    await new Promise((r) => setTimeout(r, 100));
    expect(readFileSync(join(dir, "log"), "utf8")).toBe("sourced\n");
    expect((await bash(ctx, "echo $$")).text).toBe(String(pid));
    expect(readFileSync(join(dir, "log"), "utf8")).toBe("sourced\nsourced\n");
  });

  it("waits in /, and enters the command's directory when the command comes, as a spawn's chdir would", async () => {
    const ctx = unsandboxed();
    mkdirSync(join(ctx.workingDir, "sub"));
    await bash(ctx, "cd sub");
    let waiting = await waitingShell(ctx);
    // Holding no file system of the user's busy.
    expect(readlinkSync(`/proc/${waiting}/cwd`)).toBe("/");
    expect((await bash(ctx, 'echo "$$"; pwd -P')).text).toBe(`${waiting}\n${join(ctx.workingDir, "sub")}`);
    // sub is replaced by another directory of the same name: the command runs in the new one.
    waiting = await waitingShell(ctx);
    rmSync(join(ctx.workingDir, "sub"), { recursive: true });
    mkdirSync(join(ctx.workingDir, "sub"));
    writeFileSync(join(ctx.workingDir, "sub", "new-file"), "");
    expect((await bash(ctx, 'echo "$$"; ls')).text).toBe(`${waiting}\nnew-file`);
    // sub becomes a symlink to another directory: the command runs where it leads now.
    waiting = await waitingShell(ctx);
    rmSync(join(ctx.workingDir, "sub"), { recursive: true });
    mkdirSync(join(ctx.workingDir, "elsewhere"));
    symlinkSync(join(ctx.workingDir, "elsewhere"), join(ctx.workingDir, "sub"));
    const moved = await bash(ctx, "pwd -P");
    expect(moved.text).toMatch(new RegExp(`^${join(ctx.workingDir, "elsewhere")}`));
  });

  it("is not used across a renamed directory: the command runs where its path leads now", async () => {
    const ctx = unsandboxed();
    mkdirSync(join(ctx.workingDir, "a"));
    await bash(ctx, "cd a");
    await waitingShell(ctx);
    renameSync(join(ctx.workingDir, "a"), join(ctx.workingDir, "b"));
    mkdirSync(join(ctx.workingDir, "a"));
    expect((await bash(ctx, "pwd -P; ls ../")).text).toBe(`${join(ctx.workingDir, "a")}\na\nb`);
  });

  it("prints nothing of its own: bash's warnings while it sets the environment are not the command's", async () => {
    const envs: Array<Record<string, string>> = [
      { LC_ALL: "xx_YY.UTF-8" },
      { BASH_COMPAT: "abc" },
      { SHLVL: "998" },
      { SHLVL: "999" },
    ];
    for (const env of envs) {
      const ctx = unsandboxed(env);
      const probe = "env -0 | grep -zEv '^(_|CC_TOOLS_RUN)=' | sort -z | od -c";
      const spawned = await bash(ctx, probe);
      await waitingShell(ctx);
      // The command's own bash may warn too (SHLVL 1000), on stderr, before or after stdout arrives.
      const lines = (text: string) => text.split("\n").sort();
      expect(lines((await bash(ctx, probe)).text)).toEqual(lines(spawned.text));
    }
  });

  it("leaves a command near the kernel's argument limits to a spawn, which fails the same way", async () => {
    const ctx = unsandboxed({ HUGE: "x".repeat(200_000) });
    const spawned = await bash(ctx, "echo never");
    await quiet();
    const again = await bash(ctx, "echo never");
    expect(again.text).toBe(spawned.text);
    expect(again.result.isError).toBe(true);
  });

  it("keeps exit codes, signals, time-outs and the killing of strays, however they detached", async () => {
    const ctx = unsandboxed();
    await bash(ctx, "true");
    let pid = await waitingShell(ctx);
    const failed = await bash(ctx, "echo $$; exit 7");
    expect(failed.result.metadata).toMatchObject({ exitCode: 7 });
    expect(failed.text).toBe(`Exit code 7\n${pid}`);
    await waitingShell(ctx);
    expect((await bash(ctx, "kill -9 $$")).text).toMatch(/SIGKILL/);
    const seconds = uniqueSeconds();
    pid = await waitingShell(ctx);
    const strays = await bash(
      ctx,
      `sleep ${seconds} & setsid sleep ${seconds} & env -u CC_TOOLS_RUN sleep ${seconds} & echo $$`,
    );
    expect(strays.text).toMatch(new RegExp(`^${pid}\n`));
    expect(strays.text).toMatch(/Processes the command left running were stopped/);
    expect(await eventually(() => survivors(`sleep ${seconds}`).length === 0)).toBe(true);
    await waitingShell(ctx);
    const timedOut = await bash(ctx, `trap '' TERM; sleep ${seconds}; echo after`, { timeout: 300 });
    expect(timedOut.result.metadata).toMatchObject({ endedBy: "timeout" });
    expect(await eventually(() => survivors(`sleep ${seconds}`).length === 0)).toBe(true);
  });

  it("marks the command's processes before it can start any, however long the host stalls after the claim", async () => {
    const ctx = unsandboxed();
    await bash(ctx, "true");
    await waitingShell(ctx);
    const shell = ctx.session.get(prestartSlot).shell!;
    const claim = shell.claim.bind(shell);
    // The host stalls (a GC pause, preemption) right after handing over the command, while it forks.
    shell.claim = (...args) => {
      const run = claim(...args);
      const until = Date.now() + 400;
      while (Date.now() < until) {
        // busy
      }
      return run;
    };
    const seconds = uniqueSeconds();
    const { text } = await bash(ctx, `sleep ${seconds} & echo started`);
    expect(shell.ran).toBe(true);
    expect(text).toMatch(/Processes the command left running were stopped/);
    expect(await eventually(() => survivors(`sleep ${seconds}`).length === 0)).toBe(true);
  });

  it("is not started while calls come back to back, so none of them waits for its fork", async () => {
    const ctx = unsandboxed();
    const state = ctx.session.get(prestartSlot);
    let started = 0;
    let current = state.shell;
    Object.defineProperty(state, "shell", {
      get: () => current,
      set: (shell) => {
        if (shell) started++;
        current = shell;
      },
    });
    // Each call outlasts the quiet time, and the next one comes at once: every one spawns.
    for (let i = 0; i < 5; i++) await bash(ctx, "sleep 0.05");
    expect(started).toBe(0);
    // Once the process is quiet, one is started.
    await waitingShell(ctx);
    expect(started).toBe(1);
  });

  it("makes the host's young generation its own again after the fork, so the next call does not pay for it", () => {
    // A host as the MCP server and the agent are: idle collection on (which keeps the young generation
    // small) and shells started ahead. A fresh process, since this one's young generation grew long ago;
    // it is kept small from the start, as the built server's is when it turns idle collection on (loading
    // the sources through tsx would have grown it first).
    const dir = tempDir();
    const script = join(dir, "host.mjs");
    const src = (path: string) => JSON.stringify(join(process.cwd(), "src", path));
    writeFileSync(
      script,
      `import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
setFlagsFromString(${JSON.stringify(YOUNG_GENERATION_FLAG)});
const { createToolContext, runTool } = await import(${src("index.ts")});
const { enableIdleCollection, youngGenerationRewrites } = await import(${src("process/memory.ts")});
const { prestartSlot, usePrestartedShells } = await import(${src("process/prestart.ts")});
enableIdleCollection();
usePrestartedShells();
const ctx = createToolContext({ workingDir: ${JSON.stringify(dir)}, permissionMode: "bypassPermissions" });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (done) => { for (let waited = 0; !done() && waited < 15_000; waited += 20) await sleep(20); };
const bash = () => runTool("Bash", { command: "true", dangerouslyDisableSandbox: true }, ctx);
// The first command is spawned; a shell then waits for the next, and the quiet work after both forks is done.
await bash();
await until(() => ctx.session.get(prestartSlot).shell?.waiting === true);
await sleep(200);
// The next command runs in the waiting shell, without a fork; the fork that starts the one after it is
// followed by a rewrite.
const waiting = ctx.session.get(prestartSlot).shell;
const before = youngGenerationRewrites();
await bash();
const usedWaitingShell = waiting?.ran === true;
await until(() => youngGenerationRewrites() > before);
// The young generation's size, for the message if no rewrite came (it is left alone when large).
const young = getHeapSpaceStatistics().find((space) => space.space_name === "new_space").space_size;
const state = ctx.session.get(prestartSlot);
console.log(JSON.stringify({ usedWaitingShell, rewritten: youngGenerationRewrites() > before, young, before, after: youngGenerationRewrites(), waitingNow: state.shell?.waiting === true, givenUp: state.givenUp }));
await ctx.session.dispose();`,
    );
    // The young generation is capped from the command line too: with a cold compile cache, tsx's loading
    // on Node 22 grew it to 16 MB before the script's first line ran (seen in CI), and one that large is
    // left alone by design (MAX_REWRITE_BYTES). The built server turns idle collection on before its
    // young generation grows.
    const out = execFileSync(process.execPath, ["--max-semi-space-size=1", "--import", "tsx", script], {
      encoding: "utf8",
    });
    const result = JSON.parse(out);
    expect(result.usedWaitingShell, out).toBe(true);
    expect(result.rewritten, out).toBe(true);
  });

  it("runs long commands and background jobs", async () => {
    const ctx = unsandboxed();
    await bash(ctx, "true");
    await waitingShell(ctx);
    const long = `echo ${"x".repeat(120_000)} | wc -c`;
    expect((await bash(ctx, long)).text).toBe("120001");
    await waitingShell(ctx);
    const started = await bash(ctx, "echo from the background", { run_in_background: true });
    const taskId = (started.result.metadata as { taskId: string }).taskId;
    await eventually(() => false, 300);
    const output = await runTool("TaskOutput", { task_id: taskId, block: true }, ctx);
    expect(ToolResult.text(output)).toMatch(/from the background/);
  });

  it("is replaced when it died before its command, and the command still runs", async () => {
    const ctx = unsandboxed();
    await bash(ctx, "true");
    const pid = await waitingShell(ctx);
    process.kill(pid, "SIGKILL");
    await eventually(() => ctx.session.get(prestartSlot).shell?.waiting === false);
    const { result, text } = await bash(ctx, "echo still runs");
    expect(result.isError).toBe(false);
    expect(text).toBe("still runs");
  });

  it("ends with its session, and on its own when its host is killed", async () => {
    const ctx = unsandboxed();
    await bash(ctx, "true");
    const pid = await waitingShell(ctx);
    await ctx.session.dispose();
    expect(await eventually(() => !existsSync(`/proc/${pid}`) || isZombie(pid))).toBe(true);

    // A host killed with SIGKILL runs no exit handler: the waiting shell sees EOF on its stdin and exits.
    const dir = tempDir();
    const script = join(dir, "host.mjs");
    writeFileSync(
      script,
      `import { createToolContext, runTool } from ${JSON.stringify(join(process.cwd(), "src/index.ts"))};
import { usePrestartedShells } from ${JSON.stringify(join(process.cwd(), "src/process/prestart.ts"))};
usePrestartedShells();
const ctx = createToolContext({ workingDir: ${JSON.stringify(dir)}, permissionMode: "bypassPermissions" });
await runTool("Bash", { command: "true", dangerouslyDisableSandbox: true }, ctx);
setInterval(() => {}, 1000);
console.log("ready");`,
    );
    const host = spawn(process.execPath, ["--import", "tsx", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve) => host.stdout.once("data", () => resolve()));
    const children = () =>
      readFileSync(`/proc/${host.pid}/task/${host.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
    expect(await eventually(() => children().length > 0)).toBe(true);
    const [shell] = children();
    host.kill("SIGKILL");
    expect(await eventually(() => !existsSync(`/proc/${shell}`) || isZombie(Number(shell)))).toBe(true);
  });

  it("runs a sandboxed command too: bubblewrap, with the policy of the command's own time", async () => {
    const ctx = testContext();
    const outside = tempDir();
    // With allowed hosts (a network bridge per command) the next shell waits outside the sandbox, and execs
    // bubblewrap when the command comes.
    ctx.config.sandbox.network.allowedDomains = ["example.invalid"];
    await bash(ctx, "true");
    await waitingShell(ctx);
    const shell = ctx.session.get(prestartSlot).shell!;
    expect(shell.sandboxed).toBe(false);
    // Made after the shell started: the policy is built when the command comes.
    mkdirSync(join(ctx.workingDir, ".claude"));
    const { result, text } = await bash(
      ctx,
      `touch inside; echo "$TMPDIR"; echo x > .claude/settings.local.json; echo x > ${outside}/escaped`,
    );
    expect(shell.ran).toBe(true);
    expect(result.isError).toBe(true);
    expect(result.metadata).toMatchObject({ sandboxed: true });
    expect(text).toMatch(/The sandbox kept the command from writing there/);
    expect(existsSync(join(ctx.workingDir, "inside"))).toBe(true);
    expect(existsSync(join(ctx.workingDir, ".claude", "settings.local.json"))).toBe(false);
    expect(existsSync(join(outside, "escaped"))).toBe(false);
  });

  it("starts ripgrep for Grep and Glob where it fits, and another shell for the next command", async () => {
    const ctx = unsandboxed();
    mkdirSync(join(ctx.workingDir, "sub"));
    writeFileSync(join(ctx.workingDir, "sub", "a.ts"), "needle\n");
    await bash(ctx, "true");
    const first = await waitingShell(ctx);
    // rg runs in the waiting shell, in the directory it searches, and once it is done a new shell waits.
    const below = await runTool("Grep", { pattern: "needle", path: "sub" }, ctx);
    expect(ToolResult.text(below)).toMatch(/a\.ts/);
    expect(await eventually(() => !existsSync(`/proc/${first}`) || isZombie(first))).toBe(true);
    const second = await waitingShell(ctx);
    expect(second).not.toBe(first);
    const found = await runTool("Grep", { pattern: "needle", output_mode: "content" }, ctx);
    expect(ToolResult.text(found)).toBe("sub/a.ts:1:needle");
    const third = await waitingShell(ctx);
    expect(third).not.toBe(second);
    const listed = await runTool("Glob", { pattern: "**/*.ts" }, ctx);
    expect(ToolResult.text(listed)).toBe("sub/a.ts");
    expect(await waitingShell(ctx)).not.toBe(third);
    expect((await bash(ctx, "echo ok")).text).toBe("ok");
  });

  it("keeps a spare for searches once two came together, so the next two do not fork", async () => {
    const ctx = unsandboxed();
    writeFileSync(join(ctx.workingDir, "a.ts"), "needle\n");
    const state = ctx.session.get(prestartSlot);
    const grep = async () =>
      ToolResult.text(await runTool("Grep", { pattern: "needle", output_mode: "content" }, ctx));
    // One search at a time: one shell waits, and no spare.
    for (let i = 0; i < 2; i++) {
      expect(await grep()).toBe("a.ts:1:needle");
      await waitingShell(ctx);
    }
    await quiet();
    expect(state.spare).toBeUndefined();
    // Two at once: the second finds no shell waiting, and from then on a spare waits as well.
    expect(await Promise.all([grep(), grep()])).toEqual(["a.ts:1:needle", "a.ts:1:needle"]);
    expect(state.searchesBatched).toBe(true);
    expect(
      await eventually(() => state.shell?.waiting === true && state.spare?.waiting === true, 2_000),
    ).toBe(true);
    const pair = [state.shell!, state.spare!];
    expect(await Promise.all([grep(), grep()])).toEqual(["a.ts:1:needle", "a.ts:1:needle"]);
    expect(pair.map((shell) => shell.ran)).toEqual([true, true]);
    const bothWaiting = async () =>
      expect(
        await eventually(() => state.shell?.waiting === true && state.spare?.waiting === true, 2_000),
      ).toBe(true);
    // Two alone, then two back to back: the second of those still finds the spare.
    for (let i = 0; i < 2; i++) {
      await bothWaiting();
      expect(await grep()).toBe("a.ts:1:needle");
    }
    await bothWaiting();
    const kept = state.spare!;
    expect(await grep()).toBe("a.ts:1:needle");
    expect(await grep()).toBe("a.ts:1:needle");
    expect(kept.ran).toBe(true);
    // Three alone: once quiet after the third, the spare is let go, and it stays so.
    let spare = state.spare;
    for (let i = 0; i < 3; i++) {
      await bothWaiting();
      spare = state.spare;
      expect(await grep()).toBe("a.ts:1:needle");
    }
    expect(await eventually(() => state.spare === undefined, 2_000)).toBe(true);
    expect(state.searchesBatched).toBe(false);
    const pid = spare?.pid;
    expect(await eventually(() => pid !== undefined && (!existsSync(`/proc/${pid}`) || isZombie(pid)))).toBe(
      true,
    );
    await waitingShell(ctx);
    await quiet();
    expect(state.spare).toBeUndefined();
  });

  it("is not used by library callers that did not turn it on", async () => {
    // This file turned it on; the switch is per process. The default is checked in a fresh process.
    const script = `import { createToolContext, runTool } from ${JSON.stringify(join(process.cwd(), "src/index.ts"))};
import { prestartSlot } from ${JSON.stringify(join(process.cwd(), "src/process/prestart.ts"))};
const ctx = createToolContext({ workingDir: process.argv[2], permissionMode: "bypassPermissions" });
await runTool("Bash", { command: "true", dangerouslyDisableSandbox: true }, ctx);
await new Promise((r) => setTimeout(r, 200));
console.log(JSON.stringify(ctx.session.get(prestartSlot).shell === undefined));
await ctx.session.dispose();`;
    const dir = tempDir();
    writeFileSync(join(dir, "lib.mjs"), script);
    // From the repository root, so `--import tsx` resolves to its node_modules.
    const child = spawn(process.execPath, ["--import", "tsx", join(dir, "lib.mjs"), dir]);
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    await new Promise((resolve) => child.on("close", resolve));
    expect(out.trim()).toBe("true");
  });
});

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return /^\S+ \(.*\) [ZX]/.test(stat);
  } catch {
    return true;
  }
}
