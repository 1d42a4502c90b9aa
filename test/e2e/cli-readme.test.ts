import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/context.js";
import { CLI } from "./cli.js";

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
/** The built package entry, as `import … from "cc-tools"` resolves it. */
const ENTRY = fileURLToPath(new URL("../../dist/index.js", import.meta.url));

/** The first fenced block of `lang` after `heading`. */
function snippet(heading: string, lang: string): string {
  const section = README.slice(README.indexOf(heading));
  const match = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(section);
  if (!match) throw new Error(`README.md has no ${lang} block under ${heading}`);
  return match[1]!;
}

describe("README", () => {
  it("the library snippet runs as written against the built package", () => {
    const code = snippet("### Use it as a library", "ts");
    expect(code).toContain('from "cc-tools"');
    const dir = tempDir();
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "package.json"), '{"name": "demo"}\n');
    writeFileSync(join(dir, "src", "a.ts"), "// TODO: the README snippet finds this\n");
    const script = join(dir, "snippet.mjs");
    const report =
      "\nconsole.log(JSON.stringify({ tools: tools.length, last: tools.at(-1), result, results }));\n";
    writeFileSync(script, code.replace('"cc-tools"', JSON.stringify(ENTRY)) + report);
    const run = spawnSync(process.execPath, [script], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, CLAUDE_CONFIG_DIR: tempDir(), CC_TOOLS_LOG: "silent" },
      timeout: 60_000,
    });
    expect(run.stderr).toBe("");
    const out = JSON.parse(run.stdout);
    expect(out.tools).toBeGreaterThan(5);
    expect(out.last.cache_control).toEqual({ type: "ephemeral" });
    expect(out.result.isError).toBe(false);
    expect(out.result.content[0].text).toContain('"name": "demo"');
    expect(out.results.map((r: { isError: boolean }) => r.isError)).toEqual([false, false]);
    expect(out.results[0].content[0].text).toContain("src/a.ts");
    expect(out.results[1].content[0].text).toContain("src/a.ts");
  });

  it("the shell examples run as written", () => {
    const dir = tempDir();
    const home = tempDir();
    writeFileSync(join(dir, "README.md"), "one\ntwo\nthree\n");
    mkdirSync(join(dir, "src"));
    spawnSync("git", ["init", "-q"], { cwd: dir });
    const lines = snippet("### Run a tool from the shell", "sh")
      .split("\n")
      .map((line) => line.replace(/\s+#.*$/, "").trim())
      .filter(Boolean);
    expect(lines.length).toBeGreaterThan(4);
    // Twice: the examples leave nothing behind that makes a second run fail (the session is reset).
    for (const round of [1, 2]) {
      for (const line of lines) {
        const run = spawnSync(
          "bash",
          ["-c", line.replaceAll("npx cc-tools", `node ${JSON.stringify(CLI)}`)],
          {
            cwd: dir,
            encoding: "utf8",
            env: {
              ...process.env,
              CLAUDE_CONFIG_DIR: home,
              CC_TOOLS_STATE_DIR: home,
              CI: "1",
              CC_TOOLS_LOG: "silent",
            },
            timeout: 60_000,
          },
        );
        expect({ round, line, code: run.status, stderr: run.stderr }).toEqual({
          round,
          line,
          code: 0,
          stderr: "",
        });
        // The `pwd` example shows the `cd` of the one before persisting in the session.
        if (line.includes('"pwd"')) expect(run.stdout.trim()).toBe(join(dir, "src"));
        if (line.includes("sessions list")) expect(run.stdout).toMatch(/^work\s+last saved/);
      }
    }
    // About thirty CLI starts one after another: on a loaded two-core machine that is more than the default.
  }, 180_000);
});
