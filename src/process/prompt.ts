/** How long a command must print nothing before its last line is examined as a possible prompt. */
export const STALL_QUIET_MS = 3_000;
/**
 * How many polls in a row (src/process/supervise.ts polls every 500 ms) must find a quiet command with a
 * prompt-like last line waiting for input before it is stopped. One look can catch processes between two
 * states (a sleep ending: read as sleeping, then its wait channel gone, which reads as hidden); a command
 * that waits for an answer still waits half a second later.
 */
export const STALL_CONFIRMATIONS = 2;

/** Prompts that are unmistakable, whether or not the cursor was left on their line. */
const CERTAIN_PROMPTS = [
  /[[(](?:y\/n|yes\/no)[\])]\s*[:?]?$/i,
  /\b(?:password|passphrase|passcode)\b[^:]*:$/i,
  /\b(?:press|hit) (?:any key|enter|return)\b/i,
];

/** Endings that are prompts only when the cursor stayed on the line, as it does when a program waits. */
const OPEN_LINE_PROMPTS = [/\?$/, /\b(?:username|login|user name|email|token|name)\s*:$/i];

/** The last line of `tail` when it looks like a question waiting for an answer; otherwise undefined. */
export function promptLine(tail: string): string | undefined {
  const openLine = !/\n\s*$/.test(tail);
  const line = tail.trimEnd().split("\n").pop()?.trim() ?? "";
  if (line === "") return undefined;
  if (CERTAIN_PROMPTS.some((p) => p.test(line))) return line;
  if (openLine && OPEN_LINE_PROMPTS.some((p) => p.test(line))) return line;
  return undefined;
}

/** Terminal modes (DEC private) that switch to the alternate screen, as editors, pagers and TUIs do first. */
const ALTERNATE_SCREEN_MODES = ["1049", "1047", "47"];

/**
 * True when the output switched the terminal to its alternate screen and has not switched back: a
 * full-screen program (vim, top, a TUI) is running and waits for keys that can never come here.
 */
export function leftInFullScreen(output: string): boolean {
  let entered = -1;
  let left = -1;
  for (const mode of ALTERNATE_SCREEN_MODES) {
    entered = Math.max(entered, output.lastIndexOf(`\u001b[?${mode}h`));
    left = Math.max(left, output.lastIndexOf(`\u001b[?${mode}l`));
  }
  return entered > left;
}
