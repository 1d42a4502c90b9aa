import type { Progress } from "../core/context.js";

/** How often a running call tells a client that asked for progress that it is still alive. */
export const HEARTBEAT_INTERVAL_MS = 5_000;

export type ProgressToken = string | number;

export interface ProgressChannel {
  report(progress: Progress): void;
  stop(): void;
}

/**
 * Forwards a call's progress as `notifications/progress` when the client sent a progress token, and sends a
 * heartbeat while the tool is quiet, so clients that reset their time-out on progress keep waiting for long
 * Bash or Grep calls. MCP requires progress to increase, so every value is kept above the last one sent.
 */
export function progressChannel(
  token: ProgressToken | undefined,
  notify: (notification: {
    method: "notifications/progress";
    params: Record<string, unknown>;
  }) => Promise<void>,
  heartbeatMs: number = HEARTBEAT_INTERVAL_MS,
): ProgressChannel {
  if (token === undefined) return { report: () => {}, stop: () => {} };
  const started = Date.now();
  let last = 0;
  let lastSentAt = started;
  const send = (p: Progress) => {
    const progress = p.progress > last ? p.progress : last + 1;
    last = progress;
    lastSentAt = Date.now();
    const params: Record<string, unknown> = { progressToken: token, progress };
    if (p.total !== undefined && p.total >= progress) params.total = p.total;
    if (p.message) params.message = p.message;
    notify({ method: "notifications/progress", params }).catch(() => {});
  };
  const timer = setInterval(() => {
    if (Date.now() - lastSentAt < heartbeatMs) return;
    send({ progress: last + 1, message: `still running (${Math.round((Date.now() - started) / 1000)} s)` });
  }, heartbeatMs);
  timer.unref();
  return { report: send, stop: () => clearInterval(timer) };
}
