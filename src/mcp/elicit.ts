import { errorMessage } from "../core/errors.js";
import { log } from "../core/log.js";
import type { PermissionAnswer, PermissionHandler, PermissionRequest } from "../permissions/types.js";
import { currentCall, type Form, type FormAnswer, NobodyToAsk } from "./live-call.js";

/**
 * A cancel faster than this came from no person: nobody reads a question and dismisses it that quickly.
 * Headless clients (`claude -p`) declare elicitation and cancel every request at once.
 */
export const INSTANT_CANCEL_MS = 1_000;

/** Lines of an edit's old and new text shown in a question; the rest is counted, not shown. */
const QUESTION_DIFF_LINES = 12;
/** Argument lines shown for a tool the question cannot describe in its own terms (another server's tool). */
const QUESTION_ARGUMENT_LINES = 20;
/** Characters of a command or a value shown in a question. */
const QUESTION_TEXT_CHARS = 1_000;

/** The choices, worded for the person; the values are the words themselves, so no client shows a code. */
const ALLOW_ONCE = "Allow once";
const ALLOW_SESSION = "Allow for this session";
const ALLOW_ALWAYS = "Always allow in this project";
const DENY = "Deny";

/** Remembering an answer needs a rule that expresses it; without one, only "once" or "deny" make sense. */
function choicesFor(request: PermissionRequest): string[] {
  return request.suggestedRules.length > 0
    ? [ALLOW_ONCE, ALLOW_SESSION, ALLOW_ALWAYS, DENY]
    : [ALLOW_ONCE, DENY];
}

function clip(text: string, max = QUESTION_TEXT_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}

/** Up to QUESTION_DIFF_LINES lines of `text`, each marked with `mark`. */
function marked(text: string, mark: string): string[] {
  const lines = text.split("\n");
  const shown = lines.slice(0, QUESTION_DIFF_LINES).map((line) => `${mark} ${clip(line, 200)}`);
  if (lines.length > shown.length) shown.push(`${mark} … ${lines.length - shown.length} more lines`);
  return shown;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** Arguments as lines a person reads: `key: value`, nested fields as `key.field: value`, lists joined. */
function argumentLines(value: unknown, prefix = ""): string[] {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return prefix ? [`${prefix}: (empty)`] : [];
    return entries.flatMap(([key, inner]) => argumentLines(inner, prefix ? `${prefix}.${key}` : key));
  }
  if (Array.isArray(value)) {
    const shown = value.map((item) => (item !== null && typeof item === "object" ? "…" : String(item)));
    return [`${prefix}: ${clip(shown.join(", "), 200)}`];
  }
  return [`${prefix}: ${clip(String(value), 200)}`];
}

/** What the call will do, for a person: the command, the file and a short diff, or the arguments. */
export function describeCall(request: PermissionRequest): string {
  const input = (request.input ?? {}) as Record<string, unknown>;
  const { subject, toolName } = request;
  const path = subject.kind === "path" ? subject.path : str(input.file_path ?? input.notebook_path);
  if (subject.kind === "command") {
    const where = subject.cwd ? ` in ${subject.cwd}` : "";
    const about = str(input.description) ? `\n(${str(input.description)})` : "";
    return `Run this ${subject.shell === "bash" ? "command" : "PowerShell command"}${where}:\n${indent(clip(subject.command))}${about}`;
  }
  if (toolName === "Edit" && path) {
    const scope = input.replace_all === true ? " (every occurrence)" : "";
    const diff = [...marked(str(input.old_string) ?? "", "-"), ...marked(str(input.new_string) ?? "", "+")];
    return `Change ${path}${scope}:\n${indent(diff.join("\n"))}`;
  }
  if (toolName === "Write" && path) {
    const content = str(input.content) ?? "";
    const lines = content === "" ? 0 : content.split("\n").length;
    return `Write ${path} (${lines} line${lines === 1 ? "" : "s"}):\n${indent(marked(content, "+").join("\n"))}`;
  }
  if (subject.kind === "path") return `${subject.access === "read" ? "Read" : "Change"} ${subject.path}`;
  if (subject.kind === "url") return `Fetch ${subject.url}`;
  const server = /^mcp__([^_]+(?:_[^_]+)*?)__(.+)$/.exec(toolName);
  const what = server ? `Use the tool ${server[2]} of the MCP server ${server[1]}` : `Use ${toolName}`;
  const args = argumentLines(input).slice(0, QUESTION_ARGUMENT_LINES);
  return args.length > 0 ? `${what} with\n${indent(args.join("\n"))}` : what;
}

function question(request: PermissionRequest): string {
  return `${describeCall(request)}\n\ncc-tools asks because ${request.reason}.`;
}

/** The rules, as the model should name them to the user. */
function rulesToAllow(request: PermissionRequest): string {
  return request.suggestedRules.map((rule) => `\`${rule}\``).join(" and ");
}

/**
 * The refusal when nobody could be asked: one sentence the model can act on, and the configuration
 * advice for the user in the server's log (stderr), where people running the server look.
 */
export function noOneAsked(request: PermissionRequest, why: string): PermissionAnswer {
  const rules = rulesToAllow(request);
  const next = rules
    ? `Ask the user to allow ${rules} in cc-tools' permissions, then retry.`
    : "No permission rule can allow it: ask the user to run it themselves.";
  const how = rules
    ? `To allow it, add ${rules.replaceAll("`", '"')} to permissions.allow in ${request.workingDir}/.claude/settings.local.json, or start 'cc-tools mcp' with ${request.suggestedRules.map((r) => `--allow '${r}'`).join(" ")}`
    : "No allow rule can cover it (an ask rule or the Dangerous level needs a person each time): use a client that shows cc-tools' questions, or run it yourself";
  log.warn(
    `refused ${request.toolName}: ${request.reason}; no user could be asked (${why}). ${how}. See docs/MCP.md, "Permissions under MCP".`,
  );
  return {
    behavior: "deny",
    message: `${request.reason}, and no user could be asked (${why}). ${next}`,
  };
}

/** The answer a choice means; anything but one of the choices offered denies. */
function answerFor(choice: unknown, request: PermissionRequest): PermissionAnswer {
  if (!choicesFor(request).includes(choice as string)) {
    return { behavior: "deny", message: `the answer was not one of the choices offered (${request.reason})` };
  }
  switch (choice) {
    case ALLOW_ONCE:
      return { behavior: "allow", scope: "once" };
    case ALLOW_SESSION:
      return { behavior: "allow", scope: "session" };
    case ALLOW_ALWAYS:
      return { behavior: "allow", scope: "always" };
    default:
      return { behavior: "deny", message: `the user denied it when asked (${request.reason})` };
  }
}

/** The form that asks for a permission decision: the question, and the choices as one enum. */
function permissionForm(request: PermissionRequest): Form {
  return {
    mode: "form",
    message: question(request),
    requestedSchema: {
      type: "object",
      properties: {
        decision: {
          type: "string",
          title: "Your answer",
          enum: choicesFor(request),
          default: ALLOW_ONCE,
        },
      },
      required: ["decision"],
    },
  };
}

/**
 * Asks the person at the MCP client through elicitation when the client supports it: by a request to the
 * client on a 2025 revision, within the call itself on 2026-07-28 (live-call.ts). A client without it, or
 * one that cancels without showing anyone the question, gets a refusal that says nobody could be asked.
 */
export function elicitationHandler(): PermissionHandler {
  return {
    name: "mcp-elicitation",
    interactive: true,
    async ask(request, signal) {
      const call = currentCall.getStore();
      if (!call?.elicits()) return noOneAsked(request, "this MCP client cannot show cc-tools' questions");
      const started = Date.now();
      let result: FormAnswer;
      try {
        result = await call.ask(permissionForm(request), signal);
      } catch (error) {
        if (signal.aborted)
          return { behavior: "deny", message: "the call was cancelled while waiting for permission" };
        return noOneAsked(
          request,
          error instanceof NobodyToAsk
            ? error.message
            : `asking through the MCP client failed: ${errorMessage(error)}`,
        );
      }
      if (result.action === "decline") {
        return { behavior: "deny", message: `the user declined it when asked (${request.reason})` };
      }
      if (result.action === "cancel") {
        return Date.now() - started < INSTANT_CANCEL_MS
          ? noOneAsked(request, "the MCP client cancelled the question at once, without showing it to anyone")
          : { behavior: "deny", message: `the user dismissed the question (${request.reason})` };
      }
      return answerFor(result.content?.decision, request);
    },
  };
}
