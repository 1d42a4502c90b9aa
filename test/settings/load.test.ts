import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadSettings, SettingsError } from "../../src/settings/load.js";
import { tempDir } from "../helpers/context.js";

function layout() {
  const home = tempDir("cc-tools-home-");
  const project = tempDir("cc-tools-project-");
  mkdirSync(join(project, ".claude"));
  const env = { CLAUDE_CONFIG_DIR: home };
  const write = (path: string, data: unknown) =>
    writeFileSync(path, typeof data === "string" ? data : JSON.stringify(data, null, 2));
  return {
    home,
    project,
    env,
    user: (data: unknown) => write(join(home, "settings.json"), data),
    shared: (data: unknown) => write(join(project, ".claude", "settings.json"), data),
    local: (data: unknown) => write(join(project, ".claude", "settings.local.json"), data),
  };
}

describe("loadSettings", () => {
  it("returns defaults when no file exists", () => {
    const { project, env } = layout();
    const settings = loadSettings(project, env);
    expect(settings.rules).toEqual([]);
    expect(settings.files).toEqual([]);
    expect(settings.defaultMode).toBeUndefined();
  });

  it("merges user, project and local settings: later wins, lists concatenate", () => {
    const { project, env, home, user, shared, local } = layout();
    user({
      permissions: { allow: ["Read"], defaultMode: "plan" },
      env: { A: "user", B: "user" },
      model: "x",
    });
    shared({ permissions: { deny: ["Bash(rm:*)"], allow: ["Bash(npm test)"] }, env: { B: "project" } });
    local({ permissions: { allow: ["Edit(./src/**)"], defaultMode: "acceptEdits" }, model: "y" });
    const s = loadSettings(project, env);
    expect(s.files).toEqual([
      join(home, "settings.json"),
      join(project, ".claude", "settings.json"),
      join(project, ".claude", "settings.local.json"),
    ]);
    expect(s.rules.map((r) => `${r.behavior} ${r.rule} ${r.source.scope}`)).toEqual([
      "allow Read user",
      "deny Bash(rm:*) project",
      "allow Bash(npm test) project",
      "allow Edit(./src/**) local",
    ]);
    expect(s.defaultMode).toBe("acceptEdits");
    expect(s.env).toEqual({ A: "user", B: "project" });
    expect(s.raw.model).toBe("y");
    expect(s.raw.permissions?.allow).toEqual(["Read", "Bash(npm test)", "Edit(./src/**)"]);
  });

  it("collects hooks from every file in order", () => {
    const { project, env, user, shared } = layout();
    user({ hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "a" }] }] } });
    shared({ hooks: { PreToolUse: [{ matcher: "Edit", hooks: [{ type: "command", command: "b" }] }] } });
    const s = loadSettings(project, env);
    expect(s.hooks.PreToolUse?.map((m) => m.matcher)).toEqual(["Bash", "Edit"]);
    expect(s.hooks.PostToolUse).toEqual([]);
  });

  it("reports a malformed file with its path and position instead of falling back to defaults", () => {
    const { project, env, shared } = layout();
    shared('{\n  "permissions": {\n    "allow": ["Read",]\n  }\n}');
    expect(() => loadSettings(project, env)).toThrow(SettingsError);
    expect(() => loadSettings(project, env)).toThrow(
      /settings\.json is not valid JSON at line 3, column \d+/,
    );
  });

  it("rejects values of the wrong shape, naming the key", () => {
    const { project, env, local } = layout();
    local({ permissions: { allow: "Read" } });
    expect(() => loadSettings(project, env)).toThrow(
      /settings\.local\.json: "permissions\.allow" must be a list of strings/,
    );
    local({ permissions: { defaultMode: "yolo" } });
    expect(() => loadSettings(project, env)).toThrow(/"yolo" is not a mode/);
  });

  it("refuses a rule it cannot parse, since ignoring a bad deny rule would allow what it meant to forbid", () => {
    const { project, env, shared } = layout();
    shared({ permissions: { deny: ["Bash(rm:*"] } });
    expect(() => loadSettings(project, env)).toThrow(
      /settings\.json: permissions\.deny: .*"Bash\(rm:\*".*unbalanced/,
    );
  });

  it("resolves additionalDirectories against the project", () => {
    const { project, env, shared } = layout();
    shared({ permissions: { additionalDirectories: ["../shared-lib", "/opt/data"] } });
    const s = loadSettings(project, env);
    expect(s.additionalDirectories).toEqual([join(project, "..", "shared-lib"), "/opt/data"]);
  });
});

describe("locateJsonError", () => {
  it("points at the first mistake", async () => {
    const { locateJsonError } = await import("../../src/settings/json-error.js");
    expect(locateJsonError('{"a": [1, 2]}')).toBeUndefined();
    expect(locateJsonError('{"a": [1,]}')).toEqual({ offset: 9, reason: "trailing comma" });
    expect(locateJsonError('{"a" 1}')).toEqual({ offset: 5, reason: "expected ':' after a key" });
    expect(locateJsonError('{"a": tru}')).toMatchObject({ offset: 6 });
    expect(locateJsonError('{"a": "x')?.reason).toBe("unterminated string");
    expect(locateJsonError("{} x")?.reason).toBe("unexpected text after the end");
  });
});
