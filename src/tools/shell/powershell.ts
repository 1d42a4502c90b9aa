import { powershellAdapter } from "../../process/shells.js";
import { DEFAULT_TIMEOUT_MS, defineShellTool, MAX_TIMEOUT_MS } from "./shared.js";

export const powershellTool = defineShellTool(
  powershellAdapter,
  [
    "Runs a PowerShell 7 command (pwsh -NoProfile -NonInteractive) and returns its output and exit status.",
    "",
    "- The working directory persists between calls (it is shared with Bash); variables do not.",
    "- Nothing can be typed in: Read-Host and confirmation prompts fail or are stopped. Pass -Force / -Confirm:$false where a cmdlet would ask.",
    `- Time limit: ${DEFAULT_TIMEOUT_MS / 1000} s by default, \`timeout\` up to ${MAX_TIMEOUT_MS / 1000} s; run_in_background starts a task for TaskOutput / TaskStop.`,
    "- Long output is saved to a file; the result shows its start, its end and the file's path.",
    "- Fails with a clear message when pwsh is not installed.",
  ].join("\n"),
);
