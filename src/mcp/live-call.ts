import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import {
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequest,
  inputRequired,
  inputResponse,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { Progress } from "../core/context.js";
import type { ToolResult } from "../core/result.js";
import type { Place } from "../executor/arrival-order.js";
import type { ProgressChannel } from "./progress.js";

/** How long a question may wait for the person at the client. */
const ELICITATION_TIMEOUT_MS = 10 * 60_000;

/**
 * Most calls of one connection that may wait for their client's answers at once (2026-07-28): a client
 * that starts calls and never answers them cannot pile up suspended runs; past it the oldest is stopped.
 */
export const MAX_WAITING_CALLS = 64;

/** A form question, as MCP elicitation carries it. */
export type Form = Parameters<ServerContext["mcpReq"]["elicitInput"]>[0] & { mode: "form" };

/** The client's answer to a form. */
export interface FormAnswer {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown>;
}

/**
 * What a call uses of the request a round came in: the SDK's context for it, or a direct call's
 * (src/mcp/direct-calls.ts).
 */
export interface CallRound {
  mcpReq: Pick<
    ServerContext["mcpReq"],
    "id" | "_meta" | "signal" | "envelope" | "inputResponses" | "requestState" | "notify" | "elicitInput"
  >;
}

/** Nobody can be asked from where the question came; the message says why. */
export class NobodyToAsk extends Error {}

const CALL_ENDED =
  "the call that started this work has ended, and on the 2026-07-28 revision questions travel only within a call";

/** What one round of a call gives the client: the call's result, or the questions it waits on. */
export type RoundOutcome = { result: ToolResult } | { questions: Record<string, InputRequest> };

interface OpenQuestion {
  request: InputRequest;
  settle(answer: FormAnswer): void;
  fail(error: Error): void;
}

/**
 * One tools/call, as the person at the client answers its questions.
 *
 * On a 2025 revision a question is a request to the client, made while the call runs. The 2026-07-28
 * revision has no requests to the client: a call that needs an answer ends unfinished (`input_required`)
 * with its questions and a handle (`requestState`), and the client calls again with the answers. The call
 * does not start over: its run waits where it asked, and the retry that names the handle resumes it. So a
 * tool runs once, its hooks run once, and a sub-agent that asks keeps its place and its conversation.
 */
export class LiveCall {
  /** The request of the round being served: the first, or the retry that brought answers. */
  private round: CallRound;
  private progress: ProgressChannel | undefined;
  private readonly open = new Map<string, OpenQuestion>();
  /** The keys of the questions the last round sent: only answers to those are taken. */
  private sent = new Set<string>();
  private asked = 0;
  /** Questions being asked now; while there are any, the call is out of the arrival order. */
  private asking = 0;
  private place: Place | undefined;
  private wake: (() => void) | undefined;
  private ended = false;
  private cachedHandle: string | undefined;
  /** The call's run; set by the first round. */
  run: Promise<ToolResult> | undefined;
  /** Stops the run: each round's cancellation reaches it, and so does an unanswered question's expiry. */
  readonly controller = new AbortController();

  constructor(
    first: CallRound,
    /** Whether the client said at initialize that it elicits (the 2025 revisions). */
    private readonly initializeElicits: () => boolean,
    /** The call's tool and arguments: a retry must name the same call. */
    readonly called: { name: string; args: unknown } = { name: "", args: {} },
  ) {
    this.round = first;
  }

  /**
   * The handle a retry names this call by (`requestState`): random, and only ever looked up among this
   * connection's waiting calls, so a client can resume only a call it was handed.
   */
  get handle(): string {
    this.cachedHandle ??= randomBytes(16).toString("base64url");
    return this.cachedHandle;
  }

  /** A 2026-07-28 request carries its envelope. */
  private get inBand(): boolean {
    return this.round.mcpReq.envelope !== undefined;
  }

  /** Whether the person at the client can be asked: the request's envelope says on 2026-07-28, initialize before. */
  elicits(): boolean {
    const envelope = this.round.mcpReq.envelope as
      | Record<string, { elicitation?: unknown } | undefined>
      | undefined;
    return envelope ? Boolean(envelope[CLIENT_CAPABILITIES_META_KEY]?.elicitation) : this.initializeElicits();
  }

  /**
   * Asks the person at the client; rejects when the signal aborts first, or when nobody can be asked.
   * Meanwhile the call is out of the arrival order, so the calls after it do not wait for a person's answer
   * that may never come; once answered it takes a place again, behind the calls that went ahead.
   */
  async ask(form: Form, signal: AbortSignal): Promise<FormAnswer> {
    // Work that outlives its call (a background agent) has no place to leave or take.
    const inOrder = !this.ended;
    if (inOrder && this.asking++ === 0) this.place?.leave();
    try {
      return await this.askPerson(form, signal);
    } finally {
      if (inOrder && --this.asking === 0) await this.place?.rejoin(signal);
    }
  }

  private askPerson(form: Form, signal: AbortSignal): Promise<FormAnswer> {
    if (!this.inBand) {
      return this.round.mcpReq.elicitInput(form, { signal, timeout: ELICITATION_TIMEOUT_MS });
    }
    if (this.ended) return Promise.reject(new NobodyToAsk(CALL_ENDED));
    if (signal.aborted) return Promise.reject(signal.reason);
    this.asked += 1;
    const key = `question-${this.asked}`;
    return new Promise<FormAnswer>((resolve, reject) => {
      const close = () => {
        signal.removeEventListener("abort", onAbort);
        this.open.delete(key);
      };
      const onAbort = () => {
        close();
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.open.set(key, {
        request: inputRequired.elicit(form),
        settle: (answer) => {
          close();
          resolve(answer);
        },
        fail: (error) => {
          close();
          reject(error);
        },
      });
      this.wake?.();
    });
  }

  /** The call's place in the connection's arrival order, once its turn came. */
  enter(place: Place): void {
    this.place = place;
  }

  /**
   * Starts the call's run (the first round). Once it settles, nothing more can be asked in band: work it
   * left running (a background agent) that still waits on a question is told nobody can answer.
   */
  start(run: Promise<ToolResult>): void {
    this.run = run;
    const end = () => {
      this.ended = true;
      for (const question of [...this.open.values()]) question.fail(new NobodyToAsk(CALL_ENDED));
    };
    run.then(end, end);
  }

  /**
   * A retry's answers settle the questions they answer; the others stay open and are asked again. Only
   * answers to questions the client was sent count, under the answers' own keys (not through `__proto__`).
   */
  takeAnswers(responses: Record<string, unknown> | undefined): void {
    for (const [key, question] of [...this.open]) {
      if (!responses || !this.sent.has(key) || !Object.hasOwn(responses, key)) continue;
      const answer = inputResponse(responses, key);
      if (answer.kind === "elicit") {
        question.settle({ action: answer.action, ...(answer.content ? { content: answer.content } : {}) });
      }
    }
  }

  /** Makes `call` the round being served, its progress going to `progress`, until the round ends. */
  attach(call: CallRound, progress: ProgressChannel): void {
    this.round = call;
    this.progress = progress;
  }

  /** The run's progress goes to the round being served (a client's progress token is per request). */
  readonly reportProgress = (progress: Progress): void => {
    this.progress?.report(progress);
  };

  /** Serves a round: waits until the run ends or waits on a question, and says which. */
  async serveRound(): Promise<RoundOutcome> {
    const run = this.run;
    if (!run) throw new Error("a call's round was served before its run started");
    try {
      for (;;) {
        const asking = new Promise<undefined>((resolve) => {
          this.wake = () => resolve(undefined);
          if (this.open.size > 0) resolve(undefined);
        });
        const outcome = await Promise.race([run.then((result) => ({ result })), asking]);
        this.wake = undefined;
        if (outcome) return outcome;
        // Questions asked at the same moment (a sub-agent's parallel calls) go out in one round: a client
        // allows a call only so many rounds.
        await new Promise((resolve) => setImmediate(resolve));
        // Withdrawn meanwhile (the call was cancelled): wait again.
        if (this.open.size === 0) continue;
        this.sent = new Set(this.open.keys());
        return { questions: Object.fromEntries([...this.open].map(([key, q]) => [key, q.request])) };
      }
    } finally {
      this.wake = undefined;
      this.progress = undefined;
    }
  }
}

/** The call being served: a tool's questions go to the person at the client through it. */
export const currentCall = new AsyncLocalStorage<LiveCall>();

/**
 * The calls of one connection that wait for their client's answers (2026-07-28), by handle. A call waits
 * ELICITATION_TIMEOUT_MS at most; then it is stopped, as a call whose client went away.
 */
export class WaitingCalls {
  private readonly calls = new Map<string, { call: LiveCall; timer: NodeJS.Timeout }>();

  constructor(private readonly timeoutMs = ELICITATION_TIMEOUT_MS) {}

  /** Keeps `call` until its client's retry: at most timeoutMs, and no longer than its run lasts. */
  park(call: LiveCall): void {
    if (this.calls.size >= MAX_WAITING_CALLS) {
      const [oldest] = this.calls.keys();
      if (oldest !== undefined) this.stop(oldest, "too many calls of this connection wait for answers");
    }
    const handle = call.handle;
    const timer = setTimeout(
      () => this.stop(handle, "nobody answered the call's question in time"),
      this.timeoutMs,
    );
    timer.unref();
    this.calls.set(handle, { call, timer });
    // A run that ends while parked (its connection closing, say) needs no answer any more.
    const forget = () => {
      if (this.calls.get(handle)?.call === call) this.take(handle);
    };
    call.run?.then(forget, forget);
  }

  /** The call waiting under `handle`, taken off the list (its expiry cancelled). */
  private take(handle: string): LiveCall | undefined {
    const waiting = this.calls.get(handle);
    if (!waiting) return undefined;
    clearTimeout(waiting.timer);
    this.calls.delete(handle);
    return waiting.call;
  }

  private stop(handle: string, reason: string): void {
    this.take(handle)?.controller.abort(reason);
  }

  /**
   * The waiting call a retry resumes, taken off the list; or why there is none: the handle is unknown (the
   * question expired, the connection is not the one that asked) or names another call.
   */
  resume(handle: string, called: LiveCall["called"]): LiveCall | string {
    const waiting = this.calls.get(handle);
    if (!waiting) {
      return "No call is waiting for this answer: it was answered already, its question expired unanswered, or it was asked on another connection. Nothing was run for this answer; make the call again if it is still needed.";
    }
    const { name, args } = waiting.call.called;
    if (name !== called.name || !isDeepStrictEqual(args, called.args)) {
      return "This answer (requestState) belongs to a call with another tool or other arguments, so nothing was run for it. Retry the call it was given for, unchanged.";
    }
    return this.take(handle)!;
  }

  /** Stops every waiting call (the connection ended). */
  abortAll(reason: string): void {
    for (const handle of [...this.calls.keys()]) this.stop(handle, reason);
  }
}
