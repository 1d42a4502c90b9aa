/** A duration for messages: "300 ms", "2.5 s", "120 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  return `${seconds < 10 ? Math.round(seconds * 10) / 10 : Math.round(seconds)} s`;
}
