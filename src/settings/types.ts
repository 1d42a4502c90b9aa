import { HOOK_EVENTS, type Settings } from "../core/settings.js";

export {
  HOOK_EVENTS,
  type HookCommand,
  type HookEvent,
  type HookMatcher,
  type McpServerConfig,
  type Settings,
  type SettingsFile,
} from "../core/settings.js";

export function emptySettings(projectDir: string): Settings {
  return {
    rules: [],
    additionalDirectories: [],
    hooks: Object.fromEntries(HOOK_EVENTS.map((event) => [event, []])),
    env: {},
    mcpServers: {},
    raw: {},
    files: [],
    projectDir,
  };
}
