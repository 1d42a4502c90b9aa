import { HOOK_EVENTS, type SandboxSettings, type Settings } from "../core/settings.js";

export {
  HOOK_EVENTS,
  type HookCommand,
  type HookEvent,
  type HookMatcher,
  type McpServerConfig,
  type SandboxSettings,
  type Settings,
  type SettingsFile,
} from "../core/settings.js";

export function emptySandboxSettings(): SandboxSettings {
  return {
    excludedCommands: [],
    network: { allowedDomains: [], deniedDomains: [] },
    filesystem: { allowWrite: [], denyWrite: [], denyRead: [], allowRead: [] },
    ignoredKeys: [],
  };
}

export function emptySettings(projectDir: string): Settings {
  return {
    rules: [],
    additionalDirectories: [],
    hooks: Object.fromEntries(HOOK_EVENTS.map((event) => [event, []])),
    env: {},
    mcpServers: {},
    sandbox: emptySandboxSettings(),
    raw: {},
    files: [],
    projectDir,
  };
}
