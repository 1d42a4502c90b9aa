/**
 * Diagnostics for the people running a host, never for the model. Written to stderr (which MCP stdio
 * hosts keep apart from the protocol); `CC_TOOLS_LOG=debug` adds debug lines, `CC_TOOLS_LOG=silent` mutes.
 */
type Level = "debug" | "warn" | "error";

const ORDER: Record<Level, number> = { debug: 0, warn: 1, error: 2 };

function threshold(): number {
  const configured = process.env.CC_TOOLS_LOG;
  if (configured === "silent") return Number.POSITIVE_INFINITY;
  if (configured === "debug") return 0;
  return ORDER.warn;
}

function write(level: Level, message: string, detail?: unknown): void {
  if (ORDER[level] < threshold()) return;
  const extra =
    detail instanceof Error
      ? `\n${detail.stack ?? detail.message}`
      : detail === undefined
        ? ""
        : ` ${JSON.stringify(detail)}`;
  process.stderr.write(`[cc-tools ${level}] ${message}${extra}\n`);
}

export const log = {
  debug: (message: string, detail?: unknown) => write("debug", message, detail),
  warn: (message: string, detail?: unknown) => write("warn", message, detail),
  error: (message: string, detail?: unknown) => write("error", message, detail),
};
