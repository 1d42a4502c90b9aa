import type { Progress } from "../core/context.js";
import type { OutputCapture } from "./capture.js";

/** How often a running foreground command reports how long it has run and what it printed last. */
export const PROGRESS_INTERVAL_MS = 2_000;
/** Longest last line a progress message carries; a progress bar can print one very long line. */
const PROGRESS_LINE_CHARS = 120;
/** Terminal control sequences and other control characters: noise in a one-line status message. */
const CONTROL_CHARS = /\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f]/g;

function size(chars: number): string {
  if (chars < 1024) return `${chars} chars`;
  if (chars < 1024 * 1024) return `${(chars / 1024).toFixed(1)} K chars`;
  return `${(chars / 1024 / 1024).toFixed(1)} M chars`;
}

/** The last non-blank line of `tail`, cleaned for a status line. */
function lastLine(tail: string): string {
  const lines = tail.replace(CONTROL_CHARS, "").split(/[\r\n]/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (line) return line.length > PROGRESS_LINE_CHARS ? `${line.slice(0, PROGRESS_LINE_CHARS)}…` : line;
  }
  return "";
}

/** One progress report: elapsed seconds as the (increasing) progress, and a message a person can read. */
function progressOf(capture: OutputCapture, startedAt: number): Progress {
  const elapsed = (Date.now() - startedAt) / 1000;
  const { totalChars, tail } = capture.snapshot();
  const line = lastLine(tail);
  const printed = totalChars === 0 ? "no output yet" : `${size(totalChars)} of output`;
  return {
    progress: Math.round(elapsed),
    message: `running for ${Math.round(elapsed)} s, ${printed}${line ? `; last line: ${line}` : ""}`,
  };
}

/** Reports progress every PROGRESS_INTERVAL_MS until the returned function is called. */
export function reportProgressWhileRunning(
  capture: OutputCapture,
  report: (progress: Progress) => void,
): () => void {
  const startedAt = Date.now();
  const timer = setInterval(() => report(progressOf(capture, startedAt)), PROGRESS_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
