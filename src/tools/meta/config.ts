import { readFileSync } from "node:fs";
import { parse as parseJsonc } from "jsonc-parser";
import * as z from "zod";
import type { ToolCallContext } from "../../core/context.js";
import { InputError, ToolError } from "../../core/errors.js";
import type { RuleBehavior } from "../../core/permission.js";
import {
  isPermissionMode,
  MODE_REACH,
  PERMISSION_MODES,
  PermissionLevel,
  type PermissionMode,
} from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool, type PermissionSubject } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { localSettingsPath } from "../../permissions/persist.js";
import { validateRule } from "../../permissions/rules.js";
import { settingsLocations } from "../../settings/load.js";
import { writeSetting } from "../../settings/write.js";

type Value = string | number | boolean | string[];

interface KnownSetting {
  key: string[];
  describe: string;
  /** The value to write, or an error message naming what is accepted. */
  parse(value: Value, current: unknown): { ok: true; value: unknown } | { ok: false; message: string };
  /** True when writing `next` lets the model do more than before. */
  widens(next: unknown, current: unknown, ctx: ToolCallContext): boolean;
  /** Makes the new value count in the running session. */
  apply(next: unknown, ctx: ToolCallContext, file: string): void;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function ruleList(behavior: RuleBehavior): KnownSetting {
  return {
    key: ["permissions", behavior],
    describe: `permission rules that ${behavior} calls (a rule string adds one; a list replaces the local file's list)`,
    parse(value, current) {
      const existing = Array.isArray(current) ? (current as string[]) : [];
      const next = typeof value === "string" ? [...new Set([...existing, value])] : value;
      if (!Array.isArray(next)) return { ok: false, message: "give a rule string or a list of rule strings" };
      const bad = next.map((r) => [r, validateRule(r)] as const).find(([, e]) => e);
      if (bad) return { ok: false, message: `"${bad[0]}" is not a valid rule: ${bad[1]}` };
      return { ok: true, value: next };
    },
    // Any new allow rule widens; dropping an ask or deny rule does too.
    widens(next, current) {
      const before = new Set(Array.isArray(current) ? (current as string[]) : []);
      const after = new Set(next as string[]);
      if (behavior === "allow") return [...after].some((r) => !before.has(r));
      return [...before].some((r) => !after.has(r));
    },
    apply(next, ctx, file) {
      const rules = ctx.config.rules;
      for (let i = rules.length - 1; i >= 0; i--) {
        if (rules[i]!.behavior === behavior && rules[i]!.source.file === file) rules.splice(i, 1);
      }
      const source = { scope: "local" as const, file, root: ctx.config.projectDir };
      rules.push(...(next as string[]).map((rule) => ({ rule, behavior, source })));
      const fromFiles = rules.filter((r) => r.behavior === behavior && r.source.file !== undefined);
      setRaw(
        ctx.config.raw,
        ["permissions", behavior],
        fromFiles.map((r) => r.rule),
      );
    },
  };
}

const SETTINGS: Record<string, KnownSetting> = {
  model: {
    key: ["model"],
    describe: "the model the agent uses",
    parse: (value) =>
      typeof value === "string" && value.trim()
        ? { ok: true, value }
        : { ok: false, message: "give a model name" },
    widens: () => false,
    apply(next, ctx) {
      ctx.config.raw.model = next;
    },
  },
  "permissions.defaultMode": {
    key: ["permissions", "defaultMode"],
    describe: `the permission mode (${PERMISSION_MODES.join(", ")})`,
    parse: (value) =>
      isPermissionMode(value)
        ? { ok: true, value }
        : { ok: false, message: `give one of ${PERMISSION_MODES.join(", ")}` },
    widens: (next, _current, ctx) => MODE_REACH[next as PermissionMode] > MODE_REACH[ctx.permissionMode],
    apply(next, ctx) {
      ctx.config.defaultMode = next as PermissionMode;
      ctx.setPermissionMode(next as PermissionMode);
      setRaw(ctx.config.raw, ["permissions", "defaultMode"], next);
    },
  },
  "permissions.allow": ruleList("allow"),
  "permissions.ask": ruleList("ask"),
  "permissions.deny": ruleList("deny"),
};

/** A known setting by name; `env.NAME` is a family: variables every command of the session gets. */
function knownSetting(name: string): KnownSetting | undefined {
  if (Object.hasOwn(SETTINGS, name)) return SETTINGS[name];
  const variable = /^env\.(.+)$/.exec(name)?.[1];
  if (variable === undefined || !ENV_NAME.test(variable) || variable === "__proto__") return undefined;
  return {
    key: ["env", variable],
    describe: `the environment variable ${variable} for commands`,
    parse: (value) =>
      typeof value === "string" || typeof value === "number" || typeof value === "boolean"
        ? { ok: true, value: String(value) }
        : { ok: false, message: "give a string" },
    // What runs, and how, follows the environment (PATH, LD_PRELOAD, BASH_ENV): any change widens.
    widens: (next, current) => next !== current,
    apply(next, ctx) {
      ctx.config.env[variable] = next as string;
      setRaw(ctx.config.raw, ["env", variable], next);
    },
  };
}

const KNOWN_NAMES = [...Object.keys(SETTINGS), "env.<NAME>"];

/** The value a setting has in one file's raw JSON. */
function valueAt(raw: unknown, key: readonly string[]): unknown {
  return key.reduce<unknown>(
    (node, part) => (node && typeof node === "object" ? (node as Record<string, unknown>)[part] : undefined),
    raw,
  );
}

const show = (value: unknown) => (value === undefined ? "(not set)" : JSON.stringify(value));

/** Where a write lands: the project's local settings file, which is not committed. */
function targetFile(ctx: { config: { projectDir: string } }): string {
  return localSettingsPath(ctx.config.projectDir);
}

/**
 * The permission question of a write, asked before anything is written: a write that widens permissions
 * is judged as a write of a settings file (a control file: an ask in every mode but bypassPermissions);
 * any other write as a write inside the workspace.
 */
function writeGate(subject: PermissionSubject) {
  return defineTool({
    name: ToolName.Config,
    description: "Writes a setting to the project's local settings file.",
    permissionLevel: PermissionLevel.Write,
    inputSchema: z.unknown(),
    permissionSubject: () => subject,
    execute: async () => ToolResult.success(""),
  });
}

export const configTool = defineTool({
  name: ToolName.Config,
  description: [
    "Reads or changes a setting of this project: the model, the permission mode, permission rules, environment variables for commands.",
    "",
    `- Known settings: ${KNOWN_NAMES.join(", ")}.`,
    "- Without value: shows the setting's value in force and which settings file sets it.",
    "- With value: writes it to .claude/settings.local.json (comments and formatting kept) and applies it to this session at once.",
    "- A change that widens permissions (an allow rule, a freer mode, an environment variable) needs the user's approval unless the session bypasses permissions.",
  ].join("\n"),
  // Reading is free; a write asks its own question below (see writeGate), before it writes.
  permissionLevel: PermissionLevel.ReadOnly,
  // It changes what the calls after it may do, so it never runs alongside them.
  isConcurrencySafe: () => false,
  inputSchema: z.strictObject({
    setting: z
      .string()
      .min(1)
      .describe('The setting, e.g. "model", "permissions.defaultMode", "env.NODE_ENV".'),
    value: z
      .union([z.string(), z.number(), z.boolean(), z.array(z.string())])
      .optional()
      .describe("The new value; leave out to read the setting."),
  }),
  permissionSubject: (input) => ({ kind: "specifier", value: input.setting }),
  async execute(input, ctx) {
    const setting = knownSetting(input.setting);
    if (!setting) {
      throw new InputError(`Unknown setting "${input.setting}". Known settings: ${KNOWN_NAMES.join(", ")}.`);
    }
    const file = targetFile(ctx);
    const files = settingsLocations(ctx.config.projectDir);
    if (input.value === undefined) {
      const effective = valueAt(ctx.config.raw, setting.key);
      const origins = files
        .map((f) => ({ ...f, value: valueAt(readRaw(f.path), setting.key) }))
        .filter((f) => f.value !== undefined)
        .map((f) => `${f.path} (${f.scope}): ${show(f.value)}`);
      const where = origins.length > 0 ? `\nSet in:\n${origins.join("\n")}` : "\nNo settings file sets it.";
      return ToolResult.success(`${input.setting} = ${show(effective)} — ${setting.describe}.${where}`, {
        setting: input.setting,
        value: effective,
      });
    }
    const current = valueAt(readRaw(file), setting.key);
    const parsed = setting.parse(input.value, current);
    if (!parsed.ok)
      throw new InputError(`Cannot set ${input.setting}: ${parsed.message}. Nothing was written.`);
    const widens = setting.widens(parsed.value, current, ctx);
    const subject: PermissionSubject = widens
      ? { kind: "path", path: file, access: "write" }
      : { kind: "specifier", value: input.setting };
    const decision = await ctx.checkPermission(writeGate(subject), input, ctx.signal);
    if (decision.behavior !== "allow") {
      throw new ToolError(
        `${input.setting} was not changed: ${decision.reason}.${widens ? " The change widens permissions, so the user must approve it." : ""}`,
        { metadata: { setting: input.setting, written: false } },
      );
    }
    try {
      await writeSetting(file, setting.key, parsed.value);
    } catch (error) {
      throw new ToolError(`${input.setting} was not changed: ${(error as Error).message}`);
    }
    setting.apply(parsed.value, ctx, file);
    return ToolResult.success(
      `${input.setting} set to ${show(parsed.value)} in ${file}; it applies to this session now.`,
      { setting: input.setting, value: parsed.value, previous: current, file, widened: widens },
    );
  },
});

function readRaw(path: string): unknown {
  try {
    return parseJsonc(readFileSync(path, "utf8"), [], { allowTrailingComma: true });
  } catch {
    return undefined;
  }
}

function setRaw(raw: Record<string, unknown>, key: readonly string[], value: unknown): void {
  let node = raw;
  for (const part of key.slice(0, -1)) {
    const next = node[part];
    node = (next && typeof next === "object" ? next : (node[part] = {})) as Record<string, unknown>;
  }
  node[key.at(-1)!] = value;
}
