import type { PermissionAnswer, PermissionHandler, PermissionRequest } from "./types.js";

/** Longest stretch of a command or input shown in a prompt; the rest is elided. */
export const PROMPT_PREVIEW_CHARS = 400;

/** One sentence on how to allow a call without being asked: the rules to add, or why none can. */
export function howToAllow(request: Pick<PermissionRequest, "suggestedRules" | "mode">): string {
  if (request.suggestedRules.length === 0) {
    return request.mode === "bypassPermissions"
      ? "No rule can allow this call: a deny or ask rule may cover what it runs. Rewrite it so every command it runs is visible on the command line."
      : "No rule can allow this call; run it in bypassPermissions mode or rewrite it as simpler commands.";
  }
  const rules = request.suggestedRules.map((rule) => `--allow '${rule}'`).join(" ");
  return `To allow it, add ${request.suggestedRules.length > 1 ? "the rules" : "the rule"} ${request.suggestedRules.join(", ")} to permissions.allow in .claude/settings.json (or pass ${rules}), or choose another permission mode.`;
}

/** For non-interactive use: nobody can be asked, so an ask becomes a denial that says how to allow it. */
export const autoHandler: PermissionHandler = {
  name: "auto",
  async ask(request) {
    return {
      behavior: "deny",
      message: `${request.reason}. Nobody can be asked here. ${howToAllow(request)}`,
    };
  },
};

/** Approves every ask once (tests, trusted automation); deny rules and plan mode still apply before it. */
export const allowAllHandler: PermissionHandler = {
  name: "allow-all",
  async ask() {
    return { behavior: "allow", scope: "once" };
  },
};

/** Declines every ask, with the reason and how to allow it. */
export const denyAllHandler: PermissionHandler = {
  name: "deny-all",
  async ask(request) {
    return { behavior: "deny", message: `${request.reason}. Asks are declined here. ${howToAllow(request)}` };
  },
};

function preview(text: string): string {
  return text.length > PROMPT_PREVIEW_CHARS
    ? `${text.slice(0, PROMPT_PREVIEW_CHARS)}… (${text.length} chars)`
    : text;
}

/** What the call touches, in one line. */
function describeSubject(request: PermissionRequest): string {
  const { subject } = request;
  switch (subject.kind) {
    case "command":
      return `${subject.shell === "bash" ? "Command" : "PowerShell"}: ${preview(subject.command)}`;
    case "path":
      return `${subject.access === "read" ? "Reads" : "Writes"}: ${subject.path}`;
    case "url":
      return `URL: ${subject.url}`;
    case "specifier":
      return `Target: ${subject.value}`;
    default:
      return `Input: ${preview(JSON.stringify(request.input) ?? "")}`;
  }
}

interface Choice {
  label: string;
  answer: "once" | "session" | "always" | "deny";
  remember?: "prefix";
}

function choicesFor(request: PermissionRequest): Choice[] {
  const rules = request.suggestedRules.join(", ");
  const choices: Choice[] = [{ label: "Allow once", answer: "once" }];
  // Remembering only makes sense when a rule can express the approval.
  if (request.suggestedRules.length > 0) {
    choices.push(
      { label: `Allow for this session (${rules})`, answer: "session" },
      {
        label: `Always allow in this project (saves ${rules} to .claude/settings.local.json)`,
        answer: "always",
      },
    );
  }
  if (request.prefixRules.length > 0) {
    choices.push({
      label: `Always allow commands like this (saves ${request.prefixRules.join(", ")} to .claude/settings.local.json)`,
      answer: "always",
      remember: "prefix",
    });
  }
  choices.push({ label: "Deny (you can say why)", answer: "deny" });
  return choices;
}

/**
 * Reads lines one at a time; `undefined` once the input has ended. Starts reading only at the first
 * question, so a host that never needs to ask leaves its standard input alone.
 */
class LineReader implements LineSource {
  private readonly lines: string[] = [];
  private readonly waiting: Array<(line: string | undefined) => void> = [];
  private closed = false;
  private started = false;

  constructor(private readonly input: NodeJS.ReadableStream) {}

  private start(): void {
    if (this.started) return;
    this.started = true;
    // node:readline loads with the first question asked at a terminal, not with every host.
    const rl = process
      .getBuiltinModule("node:readline")
      .createInterface({ input: this.input, terminal: false, crlfDelay: Number.POSITIVE_INFINITY });
    rl.on("line", (line) => {
      const waiter = this.waiting.shift();
      if (waiter) waiter(line);
      else this.lines.push(line);
    });
    rl.on("close", () => {
      this.closed = true;
      for (const waiter of this.waiting.splice(0)) waiter(undefined);
    });
  }

  next(signal: AbortSignal): Promise<string | undefined> {
    this.start();
    if (this.lines.length > 0) return Promise.resolve(this.lines.shift());
    if (this.closed || signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = (line: string | undefined) => {
        signal.removeEventListener("abort", onAbort);
        resolve(line);
      };
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        resolve(undefined);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }
}

/** Where a terminal prompt reads its answers: one line at a time, undefined once input ended or the ask was cancelled. */
export interface LineSource {
  next(signal: AbortSignal): Promise<string | undefined>;
}

export interface TerminalHandlerOptions {
  /** The terminal's input; or `lines`, when the host already reads it (the agent's prompt line). */
  input?: NodeJS.ReadableStream;
  lines?: LineSource;
  output: NodeJS.WritableStream;
  /** Called before a question is shown (a host stops its spinner). */
  beforeAsk?: () => void;
}

/**
 * Asks a person at a terminal: shows the tool, what it touches and why it needs approval, then offers
 * allow once / for this session / always (saved to the project) / deny with optional feedback.
 * Concurrent calls are asked one after another, never interleaved.
 */
export function createTerminalHandler({
  input,
  lines,
  output,
  beforeAsk,
}: TerminalHandlerOptions): PermissionHandler {
  const reader: LineSource = lines ?? new LineReader(input ?? process.stdin);
  let queue: Promise<unknown> = Promise.resolve();

  async function prompt(request: PermissionRequest, signal: AbortSignal): Promise<PermissionAnswer> {
    beforeAsk?.();
    const choices = choicesFor(request);
    output.write(
      [
        "",
        `Permission needed: ${request.toolName} (${request.level}, ${request.mode} mode)`,
        `  ${describeSubject(request)}`,
        `  Why: ${request.reason}`,
        ...choices.map((choice, i) => `  ${i + 1}) ${choice.label}`),
        "",
      ].join("\n"),
    );
    for (;;) {
      output.write(`Choose 1-${choices.length}: `);
      const line = await reader.next(signal);
      if (line === undefined) {
        output.write("\n");
        const why = signal.aborted ? "the call was cancelled" : "the terminal input ended";
        return { behavior: "deny", message: `${request.reason}; nobody answered (${why})` };
      }
      const choice = choices[Number(line.trim()) - 1];
      if (!choice) {
        output.write(`Please type a number from 1 to ${choices.length}.\n`);
        continue;
      }
      if (choice.answer !== "deny") {
        return {
          behavior: "allow",
          scope: choice.answer,
          ...(choice.remember ? { remember: choice.remember } : {}),
        };
      }
      output.write("Reason for the model (optional, Enter to skip): ");
      const feedback = (await reader.next(signal))?.trim();
      return {
        behavior: "deny",
        message: feedback
          ? `The user declined ${request.toolName}: ${feedback}`
          : `The user declined ${request.toolName} (${request.reason})`,
      };
    }
  }

  return {
    name: "terminal",
    interactive: true,
    ask(request, signal) {
      const answer = queue.then(() => prompt(request, signal));
      queue = answer.catch(() => undefined);
      return answer;
    },
  };
}
