import { createInterface, type Interface } from "node:readline";
import type { AgentTerminal } from "../agent/host.js";
import type { AgentEvent } from "../agent/loop.js";
import { costReport } from "../agent/prices.js";
import type { PlanDecision, QuestionAnswers, UserQuestion } from "../core/host.js";
import { ToolResult } from "../core/result.js";
import { renderMessages } from "../messages/inbox.js";
import { createTerminalHandler, type LineSource } from "../permissions/handlers.js";
import type { AgentSession } from "./agent-session.js";

/** Two Ctrl-C presses within this long quit; one interrupts the running turn. */
const DOUBLE_INTERRUPT_MS = 2_000;
/** Lines of input history kept for the arrow keys. */
const HISTORY_SIZE = 500;
/** Characters of a tool's main argument shown on its line. */
const TOOL_ARG_PREVIEW = 70;

const HELP = `Commands: /cost (tokens and cost so far), /clear (start a new conversation), /help, /exit.
Ctrl-C interrupts the running turn; press it twice to quit.`;

/** The argument that says most about a call: its path, command, pattern or URL. */
function argPreview(input: unknown): string {
  const record = (input ?? {}) as Record<string, unknown>;
  const main = ["file_path", "notebook_path", "command", "pattern", "url", "query", "description", "prompt"]
    .map((k) => record[k])
    .find((v) => typeof v === "string") as string | undefined;
  const text = (main ?? JSON.stringify(record)).replace(/\s+/g, " ");
  return text.length > TOOL_ARG_PREVIEW ? `${text.slice(0, TOOL_ARG_PREVIEW)}…` : text;
}

/** A one-line spinner on a TTY (nothing on a pipe), stopped with a mark. */
function spinner(out: NodeJS.WriteStream) {
  const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
  let timer: NodeJS.Timeout | undefined;
  let label = "";
  return {
    start(text: string) {
      this.stop();
      label = text;
      if (!out.isTTY) return;
      let i = 0;
      out.write(`${frames[0]} ${label}`);
      timer = setInterval(() => out.write(`\r${frames[++i % frames.length]} ${label}`), 80);
    },
    /** Ends the line with ✓ or ✗ and a short note. */
    done(ok: boolean, note: string) {
      if (timer) clearInterval(timer);
      timer = undefined;
      out.write(`${out.isTTY ? "\r" : ""}${ok ? "✓" : "✗"} ${label}${note ? `  ${note}` : ""}\n`);
      label = "";
    },
    /** Clears a running spinner so a question can take the line. */
    stop() {
      if (!timer) return;
      clearInterval(timer);
      timer = undefined;
      out.write("\r\x1b[K");
    },
  };
}

/**
 * The interactive agent: a prompt line with history, the model's text as it streams, one line per tool call
 * with a spinner while it runs, and questions (permissions, AskUserQuestion, plan approval) asked on the same
 * line reader.
 */
export function createTerminal() {
  const out = process.stdout;
  // Our own array, which readline keeps newest first, so answers to questions can be taken out of it.
  const history: string[] = [];
  const rl: Interface = createInterface({
    input: process.stdin,
    output: out,
    terminal: Boolean(process.stdin.isTTY),
    history,
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
    prompt: "> ",
  });
  const spin = spinner(out);
  const lines: LineSource = {
    next: (signal) =>
      new Promise((resolve) => {
        if (signal.aborted) return resolve(undefined);
        const onAbort = () => resolve(undefined);
        signal.addEventListener("abort", onAbort, { once: true });
        // The up arrow recalls prompts, not the "1" or "y" typed to a question: history is put back after.
        const prompts = [...history];
        rl.question("", { signal }, (answer) => {
          signal.removeEventListener("abort", onAbort);
          history.splice(0, history.length, ...prompts);
          resolve(answer);
        });
      }),
  };
  const ask = async (query: string, signal: AbortSignal) => {
    spin.stop();
    out.write(query);
    return lines.next(signal);
  };

  async function askQuestions(
    questions: readonly UserQuestion[],
    signal: AbortSignal,
  ): Promise<QuestionAnswers> {
    const answers: Record<string, string> = {};
    for (const q of questions) {
      out.write(`\n[${q.header}] ${q.question}\n`);
      for (const [i, o] of q.options.entries()) {
        out.write(`  ${i + 1}) ${o.label}${o.description ? ` — ${o.description}` : ""}\n`);
      }
      out.write(`  ${q.options.length + 1}) Other (type your own answer)\n`);
      for (;;) {
        const line = await ask(
          q.multiSelect ? "Choose numbers separated by commas: " : "Choose a number: ",
          signal,
        );
        if (line === undefined) return undefined;
        const picks = line.split(",").map((p) => Number(p.trim()));
        if (
          picks.length === 0 ||
          picks.some((n) => !Number.isInteger(n) || n < 1 || n > q.options.length + 1) ||
          (!q.multiSelect && picks.length > 1)
        ) {
          out.write(
            `Please type ${q.multiSelect ? "numbers" : "a number"} from 1 to ${q.options.length + 1}.\n`,
          );
          continue;
        }
        const labels = picks.filter((n) => n <= q.options.length).map((n) => q.options[n - 1]!.label);
        if (picks.includes(q.options.length + 1)) {
          const own = await ask("Your answer: ", signal);
          if (own === undefined) return undefined;
          labels.push(own.trim());
        }
        answers[q.question] = labels.join(", ");
        break;
      }
    }
    return answers;
  }

  async function approvePlan(plan: string, signal: AbortSignal): Promise<PlanDecision> {
    out.write(`\nThe agent's plan:\n\n${plan}\n\n`);
    for (;;) {
      const line = (await ask("Approve this plan and let the agent start? (y/n) ", signal))
        ?.trim()
        .toLowerCase();
      if (line === undefined) return { approved: false, feedback: "nobody answered" };
      if (line === "y" || line === "yes") return { approved: true };
      if (line === "n" || line === "no") {
        const feedback = (await ask("What should change? (Enter to skip) ", signal))?.trim();
        return { approved: false, ...(feedback ? { feedback } : {}) };
      }
    }
  }

  // Sub-agents run side by side, and each may ask: one question holds the terminal until it is answered.
  let asking: Promise<unknown> = Promise.resolve();
  const oneAtATime = <T>(ask: () => Promise<T>): Promise<T> => {
    const turn = asking.then(ask, ask);
    asking = turn.catch(() => undefined);
    return turn;
  };
  const permissions = createTerminalHandler({ lines, output: out, beforeAsk: () => spin.stop() });
  const io: AgentTerminal = {
    permissions: {
      name: permissions.name,
      interactive: permissions.interactive,
      ask: (request, signal) => oneAtATime(() => permissions.ask(request, signal)),
    },
    askQuestions: (questions, signal) => oneAtATime(() => askQuestions(questions, signal)),
    approvePlan: (plan, signal) => oneAtATime(() => approvePlan(plan, signal)),
  };

  async function run(session: AgentSession, firstPrompt: string | undefined): Promise<void> {
    const { agent, ctx, inbox } = session;
    out.write(
      `cc-tools agent · ${session.model} · ${ctx.workingDir} · ${ctx.permissionMode} mode\n${HELP}\n\n`,
    );
    let running: AbortController | undefined;
    let lastInterrupt = 0;
    let closed = false;
    let midLine = false;

    const onEvent = (event: AgentEvent) => {
      if (event.type === "text") {
        out.write(event.text);
        midLine = !event.text.endsWith("\n");
      } else if (event.type === "tool_start") {
        if (midLine) out.write("\n");
        midLine = false;
        spin.start(`${event.name}(${argPreview(event.input)})`);
      } else if (event.type === "tool_end") {
        const first = ToolResult.text(event.result).split("\n")[0]!.slice(0, TOOL_ARG_PREVIEW);
        spin.done(!event.result.isError, event.result.isError ? first : "");
      } else if (event.type === "retry") {
        out.write(
          `\n(the model API failed: ${event.error}; retrying in ${Math.round(event.delayMs / 100) / 10} s)\n`,
        );
      } else if (event.type === "compacted") {
        out.write(
          `\n(context ${event.how === "elided" ? "trimmed: old tool output elided" : "compacted: the history was summarised"})\n`,
        );
      }
    };

    const turn = async (prompt: string) => {
      running = new AbortController();
      try {
        const result = await agent.run(prompt, running.signal, onEvent);
        if (midLine) out.write("\n");
        midLine = false;
        if (result.stop !== "end_turn") out.write(`(${result.text})\n`);
      } finally {
        running = undefined;
      }
      // Messages and cron prompts that came in during the turn get a turn of their own.
      while (inbox.size > 0 && !closed) await turn(renderMessages(inbox.take()));
    };

    const close = async () => {
      if (closed) return;
      closed = true;
      running?.abort("quit");
      out.write(`\n${costReport(ctx.costTracker)}\n`);
      rl.close();
      await session.close("prompt_input_exit");
    };

    rl.on("SIGINT", () => {
      const now = Date.now();
      const twice = now - lastInterrupt < DOUBLE_INTERRUPT_MS;
      lastInterrupt = now;
      if (twice) return void close();
      if (running) {
        running.abort("interrupted by the user");
        spin.stop();
        out.write("\n(interrupted; press Ctrl-C again to quit)\n");
      } else {
        out.write("\n(press Ctrl-C again to quit, or type /exit)\n");
        rl.prompt();
      }
    });
    const unsubscribe = inbox.onDelivery(() => {
      if (!running && !closed) void turn(renderMessages(inbox.take())).then(() => !closed && rl.prompt());
    });

    if (firstPrompt?.trim()) await turn(firstPrompt);
    rl.prompt();
    for await (const line of rl) {
      const input = line.trim();
      if (input === "/exit" || input === "/quit") break;
      if (input === "/cost") out.write(`${costReport(ctx.costTracker)}\n`);
      else if (input === "/clear") {
        agent.clear();
        out.write("(new conversation)\n");
      } else if (input === "/help") out.write(`${HELP}\n`);
      else if (input.startsWith("/")) out.write(`Unknown command ${input}. ${HELP}\n`);
      else if (input) await turn(input);
      if (closed) break;
      rl.prompt();
    }
    unsubscribe();
    await close();
  }

  return { io, run };
}
