/**
 * An error whose message is written for the model and the user: it says what was wrong and what to do.
 * Thrown inside tools and helpers; the executor turns it into an error result (rejected when `beforeRun`).
 */
export class ToolError extends Error {
  readonly beforeRun: boolean;
  readonly metadata?: Record<string, unknown>;

  constructor(message: string, options: { beforeRun?: boolean; metadata?: Record<string, unknown> } = {}) {
    super(message);
    this.name = "ToolError";
    this.beforeRun = options.beforeRun ?? false;
    this.metadata = options.metadata;
  }
}

/** A call refused before it changed anything (bad input, precondition not met). */
export class InputError extends ToolError {
  constructor(message: string, metadata?: Record<string, unknown>) {
    super(message, { beforeRun: true, metadata });
    this.name = "InputError";
  }
}

/** A thrown value as text: an Error's message, a string as is, anything else as JSON when it can be. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null) {
    try {
      return JSON.stringify(error) ?? String(error);
    } catch {
      return String(error);
    }
  }
  return String(error);
}
