/**
 * How many leading words name "the command" a person approves, for the prefix rule offered beside the
 * exact one: `npm run dev --port 3` → `Bash(npm run dev:*)`, `git push origin main` → `Bash(git push:*)`
 * (opencode keeps such a table). Longest match wins; a program not listed counts one word.
 */
const ARITY: Record<string, number> = {
  apt: 2,
  "apt-get": 2,
  brew: 2,
  cargo: 2,
  composer: 2,
  docker: 2,
  "docker compose": 3,
  dotnet: 2,
  gh: 3,
  git: 2,
  "git remote": 3,
  "git stash": 3,
  go: 2,
  gradle: 2,
  helm: 2,
  kubectl: 2,
  make: 2,
  mvn: 2,
  npm: 2,
  "npm run": 3,
  pip: 2,
  pip3: 2,
  pnpm: 2,
  "pnpm run": 3,
  poetry: 2,
  rustup: 2,
  terraform: 2,
  uv: 2,
  yarn: 2,
  "yarn run": 3,
};

/**
 * Programs whose prefix would allow anything: shells and interpreters given code (`python3 -c`, `node -e`,
 * `bash -c`), programs that run the command in their arguments (`sudo`, `env`, `xargs`, `timeout`,
 * `find -exec`), and subcommands that run code or change what later commands run (`npm exec`,
 * `git config`, `docker run`). A suggestion never offers a prefix rule for these; codex keeps such a list.
 */
const NEVER_PREFIX = new Set([
  ".",
  "awk",
  "bash",
  "builtin",
  "bun",
  "bunx",
  "busybox",
  "chroot",
  "command",
  "dash",
  "deno",
  "doas",
  "docker exec",
  "docker run",
  "docker compose exec",
  "docker compose run",
  "env",
  "eval",
  "exec",
  "find",
  "flock",
  "gawk",
  "git config",
  "gh api",
  "ionice",
  "ksh",
  "kubectl exec",
  "node",
  "nohup",
  "npm exec",
  "npx",
  "nice",
  "nsenter",
  "perl",
  "php",
  "pnpm dlx",
  "pnpm exec",
  "prlimit",
  "python",
  "python2",
  "python3",
  "ruby",
  "runuser",
  "script",
  "sed",
  "setarch",
  "setpriv",
  "setsid",
  "sh",
  "source",
  "ssh",
  "stdbuf",
  "strace",
  "su",
  "sudo",
  "taskset",
  "time",
  "timeout",
  "unshare",
  "uv run",
  "uvx",
  "watch",
  "xargs",
  "yarn dlx",
  "yarn exec",
  "zsh",
]);

/** A word a prefix may hold: a plain literal, no option, quote, expansion or glob. */
const PLAIN_WORD = /^[A-Za-z0-9_][A-Za-z0-9_.@/+-]*$/;

/**
 * The words of the prefix rule for a simple command's words, or undefined when no prefix is safe (the
 * program runs anything given to it, or a word of the prefix is not plain). The prefix is never longer
 * than the command.
 */
export function commandPrefix(words: readonly string[]): string[] | undefined {
  if (words.length === 0) return undefined;
  let arity = 1;
  for (let n = Math.min(words.length, 3); n >= 1; n--) {
    const known = ARITY[words.slice(0, n).join(" ")];
    if (known !== undefined) {
      arity = known;
      break;
    }
  }
  const prefix = words.slice(0, Math.min(arity, words.length));
  if (!prefix.every((word) => PLAIN_WORD.test(word))) return undefined;
  const name = prefix[0]!.slice(prefix[0]!.lastIndexOf("/") + 1);
  for (let n = 1; n <= prefix.length; n++) {
    if (NEVER_PREFIX.has([name, ...prefix.slice(1, n)].join(" "))) return undefined;
  }
  return prefix;
}
