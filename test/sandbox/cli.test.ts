import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../e2e/cli.js";
import { tempDir } from "../helpers/context.js";

function workspace(sandbox?: object) {
  const dir = tempDir();
  const home = tempDir("cc-tools-home-");
  if (sandbox) {
    mkdirSync(join(dir, ".claude"));
    writeFileSync(join(dir, ".claude", "settings.json"), JSON.stringify({ sandbox }));
  }
  const env = { CLAUDE_CONFIG_DIR: home, CC_TOOLS_STATE_DIR: join(home, "state") };
  return { dir, env };
}

describe("cc-tools sandbox status (built CLI)", () => {
  it("says the sandbox is on and why, and lists what it allows", () => {
    const { dir, env } = workspace({ network: { allowedDomains: ["registry.npmjs.org"] } });
    const { code, stdout } = cli(["sandbox", "status", "--cwd", dir], { env });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Sandbox: on \(bubblewrap\): on by default where it works/);
    expect(stdout).toContain(`Writable:\n  ${dir}`);
    expect(stdout).toContain(`${join(dir, ".mcp.json")} (does not exist; kept from being created)`);
    expect(stdout).toContain("allowed: registry.npmjs.org");
    const json = JSON.parse(cli(["sandbox", "status", "--cwd", dir, "--json"], { env }).stdout);
    expect(json).toMatchObject({
      active: true,
      mechanism: "bubblewrap",
      policy: { writable: expect.arrayContaining([dir]) },
    });
  });

  it("says why it is off, and refuses a misspelt setting with exit 2", () => {
    let ws = workspace({ enabled: false });
    expect(cli(["sandbox", "status", "--cwd", ws.dir], { env: ws.env }).stdout).toMatch(
      /^Sandbox: off: sandbox\.enabled is false/,
    );
    ws = workspace({ enabeld: true });
    const bad = cli(["sandbox", "status", "--cwd", ws.dir], { env: ws.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"sandbox.enabeld" is not a sandbox setting');
  });

  it("warns once and runs with the rules alone where bubblewrap is missing; refuses with failIfUnavailable", () => {
    // A PATH with bash but without bwrap (on merged-/usr systems /bin holds bwrap too).
    const bin = tempDir("cc-tools-bin-");
    symlinkSync("/bin/bash", join(bin, "bash"));
    let ws = workspace();
    const env = { ...ws.env, PATH: bin, CC_TOOLS_LOG: "warn" };
    const run = cli(
      ["run", "Bash", '{"command":"echo ran"}', "--cwd", ws.dir, "--permission-mode", "bypassPermissions"],
      { env },
    );
    expect(run.stdout).toBe("ran\n");
    expect(run.stderr.match(/without the OS sandbox: bubblewrap \(bwrap\) is not installed/g)).toHaveLength(
      1,
    );
    expect(run.stderr).toContain("apt-get install bubblewrap");
    ws = workspace({ failIfUnavailable: true });
    const refused = cli(
      ["run", "Bash", '{"command":"touch made"}', "--cwd", ws.dir, "--permission-mode", "bypassPermissions"],
      {
        env: { ...ws.env, PATH: bin },
      },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("sandbox.failIfUnavailable");
    expect(existsSync(join(ws.dir, "made"))).toBe(false);
  });
});

describe("cc-tools run Bash in default mode", () => {
  it("runs a sandboxed command without asking, and the kernel still refuses a write outside", () => {
    const { dir, env } = workspace();
    const outside = tempDir("cc-tools-outside-");
    const made = cli(["run", "Bash", '{"command":"touch made"}', "--cwd", dir], { env });
    expect(made.code).toBe(0);
    expect(existsSync(join(dir, "made"))).toBe(true);
    const escaped = cli(
      ["run", "Bash", JSON.stringify({ command: `python3 -c "open('${outside}/x','w')"` }), "--cwd", dir],
      { env },
    );
    expect(escaped.code).toBe(1);
    expect(escaped.stderr + escaped.stdout).toContain("The sandbox kept the command from writing there");
    expect(existsSync(join(outside, "x"))).toBe(false);
    const unsandboxed = cli(
      ["run", "Bash", '{"command":"touch other","dangerouslyDisableSandbox":true}', "--cwd", dir],
      { env },
    );
    expect(unsandboxed.code).toBe(1);
    expect(existsSync(join(dir, "other"))).toBe(false);
  });
});
