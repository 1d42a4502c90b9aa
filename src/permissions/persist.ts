import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { validateRule } from "./rules.js";

/** The project-local settings file "always allow" answers are saved to (not committed, by convention). */
export function localSettingsPath(projectDir: string): string {
  return join(projectDir, ".claude", "settings.local.json");
}

function readSettings(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new Error(`Cannot read ${path} to save a permission rule: ${(error as Error).message}`);
  }
  if (text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(
      `${path} is not valid JSON (${(error as Error).message}); it was left untouched. Fix it, then approve again.`,
    );
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error(`${path} does not hold a JSON object; it was left untouched.`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Adds an allow rule to `<projectDir>/.claude/settings.local.json`, keeping every other key, without
 * duplicates. The file is replaced atomically (temp file + rename), so a crash never leaves half a
 * settings file; a file that cannot be parsed is never overwritten.
 */
export function persistRule(projectDir: string, rule: string): void {
  const invalid = validateRule(rule);
  if (invalid) throw new Error(invalid);
  const path = localSettingsPath(projectDir);
  const settings = readSettings(path);
  const permissions = settings.permissions ?? {};
  if (permissions === null || typeof permissions !== "object" || Array.isArray(permissions)) {
    throw new Error(`${path}: "permissions" is not an object; it was left untouched.`);
  }
  const section = permissions as Record<string, unknown>;
  const allow = section.allow ?? [];
  if (!Array.isArray(allow))
    throw new Error(`${path}: "permissions.allow" is not a list; it was left untouched.`);
  if (allow.includes(rule)) return;
  settings.permissions = { ...section, allow: [...allow, rule] };
  mkdirSync(join(projectDir, ".claude"), { recursive: true });
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify(settings, null, 2)}\n`);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
