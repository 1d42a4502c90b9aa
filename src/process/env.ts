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

/**
 * The environment of a supervised command: the host's, the settings' `env`, then the non-interactive
 * overrides. Hooks get this whole: they are the user's own commands.
 */
export function childEnv(settingsEnv: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...settingsEnv, ...NON_INTERACTIVE_ENV };
}

/**
 * Names of variables that hold credentials: API keys, tokens, secrets, passwords (codex's default
 * excludes, plus passwords and credentials). Matches `OPENAI_API_KEY`, `GITHUB_TOKEN`,
 * `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `DB_PASSWORD`, `GOOGLE_APPLICATION_CREDENTIALS`.
 */
export const SECRET_ENV_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;

/** The settings key listing variables (names or `*` globs) that commands the model runs still receive. */
export const ENV_PASSTHROUGH_KEY = "shellEnvPassthrough";

/**
 * The environment of a command the model runs (Bash, PowerShell, background jobs): childEnv without the
 * host's credentials, so a command cannot print or send them. Variables named in `passthrough` (exact
 * names or `*` globs, from the `shellEnvPassthrough` setting) and those the settings' `env` sets on
 * purpose are kept.
 */
export function modelCommandEnv(
  settingsEnv: Readonly<Record<string, string>> = {},
  passthrough: readonly string[] = [],
): NodeJS.ProcessEnv {
  const passes = passthrough.map((glob) => new RegExp(`^${glob.split("*").map(escapeRegExp).join(".*")}$`));
  const inherited = Object.entries(process.env).filter(
    ([name]) => !SECRET_ENV_NAME.test(name) || passes.some((pass) => pass.test(name)),
  );
  return { ...Object.fromEntries(inherited), ...settingsEnv, ...NON_INTERACTIVE_ENV };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}
