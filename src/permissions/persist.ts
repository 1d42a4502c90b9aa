import { join } from "node:path";
import { editSettingsFile } from "../settings/edit.js";
import { validateRule } from "./rules.js";

/** The project-local settings file "always allow" answers are saved to (not committed, by convention). */
export function localSettingsPath(projectDir: string): string {
  return join(projectDir, ".claude", "settings.local.json");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Adds an allow rule to `<projectDir>/.claude/settings.local.json` without duplicates. Only the list
 * changes: every other key, the file's formatting and its comments stay; the file is replaced atomically,
 * and one that cannot be parsed (or holds the wrong shapes) is never overwritten.
 */
export async function persistRule(projectDir: string, rule: string): Promise<void> {
  const invalid = validateRule(rule);
  if (invalid) throw new Error(invalid);
  const path = localSettingsPath(projectDir);
  await editSettingsFile(path, (current) => {
    if (!isObject(current)) throw new Error(`${path} does not hold a JSON object; it was left untouched.`);
    const permissions = current.permissions;
    if (permissions === undefined) return [{ path: ["permissions"], value: { allow: [rule] } }];
    if (!isObject(permissions))
      throw new Error(`${path}: "permissions" is not an object; it was left untouched.`);
    const allow = permissions.allow;
    if (allow === undefined) return [{ path: ["permissions", "allow"], value: [rule] }];
    if (!Array.isArray(allow))
      throw new Error(`${path}: "permissions.allow" is not a list; it was left untouched.`);
    if (allow.includes(rule)) return false;
    return [{ path: ["permissions", "allow"], value: rule, append: true }];
  });
}
