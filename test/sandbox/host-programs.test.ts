import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { runTool } from "../../src/executor/run.js";
import { McpClientManager } from "../../src/mcp/manager.js";
import { usePrestartedShells, waitingShell } from "../../src/process/prestart.js";
import { hostProgram } from "../../src/process/shells.js";
import { hostSearchPath, noteSandboxWritable } from "../../src/sandbox/host-programs.js";
import { tempDir } from "../helpers/context.js";
import { EVERYTHING } from "../mcp/fixtures.js";
import { eventually } from "../process/ps.js";
import { bash, nextTurn, sandboxContext, sandboxSettings } from "./helpers.js";

// Programs cc-tools runs outside the sandbox (src/sandbox/host-programs.ts): the waiting bash, the stand-in
// helper's perl, cp, git, bubblewrap, a hook's bash. A sandboxed command can write a program of that name
// into the workspace, and a host started by npx or npm run has the workspace's node_modules/.bin first on
// its PATH: each must still come from elsewhere, or the command's program would run with the user's rights.
usePrestartedShells({ quietMs: 0 });

const NAMES = ["bash", "perl", "cp", "git", "bwrap"];

describe("programs run outside the sandbox", () => {
  it("are looked up without the places a sandboxed command can write, and without relative entries", () => {
    const root = tempDir("cc-tools-host-path-");
    const inside = join(root, "ws", "node_modules", ".bin");
    mkdirSync(inside, { recursive: true });
    noteSandboxWritable([join(root, "ws")]);
    const path = [inside, "bin", "/usr/bin", "/bin"].join(delimiter);
    expect(hostSearchPath(path)).toBe(["/usr/bin", "/bin"].join(delimiter));
    writeFileSync(join(inside, "bash"), "#!/bin/sh\n", { mode: 0o755 });
    expect(hostProgram("bash", path)).not.toBe(join(inside, "bash"));
  });

  it("are asked again on each look-up: a place that became writable, or a program gone since, is not used", () => {
    const root = tempDir("cc-tools-host-again-");
    const [first, second, writable] = ["first", "second", "writable"].map((name) => join(root, name));
    for (const dir of [first, second, writable]) {
      mkdirSync(dir);
      writeFileSync(join(dir, "prog"), "#!/bin/sh\n", { mode: 0o755 });
    }
    const path = [first, second].join(delimiter);
    expect(hostProgram("prog", path)).toBe(join(first, "prog"));
    // The first directory is now a link into a place a sandbox may write: its path alone does not say so.
    noteSandboxWritable([writable]);
    rmSync(first, { recursive: true });
    symlinkSync(writable, first);
    expect(hostProgram("prog", path)).toBe(join(second, "prog"));
    rmSync(join(second, "prog"));
    expect(hostProgram("prog", path)).toBeUndefined();
    writeFileSync(join(second, "prog"), "#!/bin/sh\n", { mode: 0o644 });
    expect(hostProgram("prog", path)).toBeUndefined();
  });

  it("leave out relative entries always, and never a place that holds the home directory", () => {
    noteSandboxWritable(["/", homedir()]);
    const path = ["", ".", "node_modules/.bin", "/usr/bin", join(homedir(), ".local", "bin")].join(delimiter);
    expect(hostSearchPath(path)).toBe(["/usr/bin", join(homedir(), ".local", "bin")].join(delimiter));
  });

  it("start an MCP server named by a bare command from outside the workspace, or say why not", async () => {
    const ws = tempDir("cc-tools-host-mcp-");
    const bin = join(ws, "node_modules", ".bin");
    mkdirSync(bin, { recursive: true });
    noteSandboxWritable([ws]);
    const outside = tempDir("cc-tools-host-mcp-outside-");
    // Planted under the name of a real program (node) and of one that exists nowhere else.
    for (const name of ["node", "only-in-workspace"]) {
      writeFileSync(join(bin, name), `#!/bin/sh\necho ran > ${outside}/${name}\n`, { mode: 0o755 });
    }
    // A launcher outside the workspace that finds node on its PATH, as npx does (`#!/usr/bin/env node`).
    const launchers = tempDir("cc-tools-host-mcp-bin-");
    writeFileSync(
      join(launchers, "mcp-launch"),
      `#!/usr/bin/env node\nimport(${JSON.stringify(pathToFileURL(EVERYTHING).href)});\n`,
      { mode: 0o755 },
    );
    const env = { PATH: [bin, launchers, process.env.PATH].join(delimiter) };
    const server = (name: string, command: string, args: string[] = []) => ({
      name,
      ok: true as const,
      source: "test",
      config: { command, args, env },
    });
    const manager = new McpClientManager(
      [
        server("everything", "node", [EVERYTHING]),
        server("planted", "only-in-workspace"),
        server("launched", "mcp-launch"),
      ],
      { cwd: ws, env },
    );
    try {
      await manager.connect();
      const [everything, planted, launched] = manager.servers();
      expect(everything).toMatchObject({ status: "connected" });
      expect(launched).toMatchObject({ status: "connected" });
      expect(planted).toMatchObject({ status: "failed" });
      expect(planted!.error).toMatch(/outside the places sandboxed commands can write/);
      expect(readdirSync(outside)).toEqual([]);
    } finally {
      await manager.close();
    }
  });

  it("never run a program a sandboxed command put first on the host's PATH", async () => {
    const ws = join(tempDir("cc-tools-host-programs-"), "ws");
    mkdirSync(ws);
    const outside = tempDir("cc-tools-host-programs-outside-");
    const ran = join(outside, "ran");
    const bin = join(ws, "node_modules", ".bin");
    const saved = process.env.PATH;
    process.env.PATH = `${bin}${delimiter}${saved}`;
    try {
      const ctx = sandboxContext(
        ws,
        sandboxSettings(ws, {}, [], {
          hooks: {
            PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "true" }] }],
            PostToolUse: [],
          },
        }),
      );
      // Each records that it ran (the sandbox lets it write only the workspace), then does its job.
      const fake = `#!/bin/sh\\necho "$0" >> ${ran} 2>/dev/null; echo "$0" >> ${ws}/ran-inside\\nexec /usr/bin/$(basename "$0") "$@"\\n`;
      const plant = await bash(
        ctx,
        `mkdir -p node_modules/.bin && for n in ${NAMES.join(" ")}; do printf '${fake}' > node_modules/.bin/$n && chmod +x node_modules/.bin/$n; done`,
      );
      expect(plant.result.isError, plant.text).toBe(false);
      for (const name of NAMES) expect(existsSync(join(bin, name))).toBe(true);
      // A waiting sandbox with stand-ins (perl), commands (the command's bash, hooks' bash), a search (the
      // waiting plain bash), a write (cp for its attributes).
      await nextTurn();
      expect(await eventually(() => waitingShell(ctx.session)?.ready === true)).toBe(true);
      expect((await bash(ctx, "echo one")).text).toContain("one");
      await runTool("Grep", { pattern: "one", path: ws }, ctx);
      await nextTurn();
      await eventually(() => waitingShell(ctx.session)?.ready === true);
      expect((await bash(ctx, "echo two")).text).toContain("two");
      const file = join(ws, "notes.txt");
      writeFileSync(file, "a\n");
      await runTool("Read", { file_path: file }, ctx);
      await runTool("Edit", { file_path: file, old_string: "a", new_string: "b" }, ctx);
      expect(readFileSync(file, "utf8")).toBe("b\n");
      await ctx.session.dispose();
      // What ran outside, by the name it was run as.
      expect(existsSync(ran) ? readFileSync(ran, "utf8") : "").toBe("");
      // Inside the sandbox the command's own PATH still finds them, as it should.
      expect((await bash(sandboxContext(ws, sandboxSettings(ws)), "perl -e 'print 7'")).text).toContain("7");
    } finally {
      process.env.PATH = saved;
    }
  });
});
