import type { HookEvent } from "../core/settings.js";

/**
 * What each hook event tells its hooks, beyond the fields every event carries (session_id, cwd,
 * permission_mode, hook_event_name): Claude Code's payloads, so existing hook scripts work unchanged.
 */
export interface HookPayloads {
  PreToolUse: { tool_name: string; tool_input: unknown; tool_use_id: string };
  PostToolUse: { tool_name: string; tool_input: unknown; tool_use_id: string; tool_response: unknown };
  UserPromptSubmit: { prompt: string };
  Stop: { stop_hook_active: boolean };
  SubagentStop: { stop_hook_active: boolean; agent_id?: string; agent_type?: string };
  SessionStart: { source: "startup" | "resume" | "clear" | "compact" };
  SessionEnd: { reason: "clear" | "logout" | "prompt_input_exit" | "other" };
  Notification: { message: string; notification_type?: string };
  PreCompact: { trigger: "manual" | "auto"; custom_instructions: string };
}

/** The payload field an event's `matcher` is tested against; events without one run every hook. */
export const MATCHED_FIELD: { [E in HookEvent]?: keyof HookPayloads[E] } = {
  PreToolUse: "tool_name",
  PostToolUse: "tool_name",
  SessionStart: "source",
  PreCompact: "trigger",
  Notification: "notification_type",
  SubagentStop: "agent_type",
};

/**
 * Events whose hooks can stop what is happening with exit code 2 (or a "block" decision): the tool call,
 * the prompt, or the agent's wish to stop (it is made to go on). The others only observe.
 */
export const BLOCKING_EVENTS: ReadonlySet<HookEvent> = new Set<HookEvent>([
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SubagentStop",
]);

/** Events whose hooks' plain standard output (exit 0, not JSON) is added to the conversation as context. */
export const STDOUT_IS_CONTEXT: ReadonlySet<HookEvent> = new Set<HookEvent>([
  "UserPromptSubmit",
  "SessionStart",
]);
