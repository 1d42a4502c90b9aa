/**
 * Variables that make common tools fail fast or answer themselves instead of waiting for a person:
 * nobody can type into a supervised command (its stdin is /dev/null), so a prompt would only hang it.
 */
export const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_EDITOR: "true",
  GIT_SEQUENCE_EDITOR: "true",
  PAGER: "cat",
  GIT_PAGER: "cat",
  npm_config_yes: "true",
  DEBIAN_FRONTEND: "noninteractive",
  CI: "1",
};

/** The environment of a supervised command: the host's, the settings' `env`, then the non-interactive overrides. */
export function childEnv(settingsEnv: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...settingsEnv, ...NON_INTERACTIVE_ENV };
}
