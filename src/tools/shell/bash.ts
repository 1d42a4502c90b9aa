import { bashAdapter } from "../../process/shells.js";
import { DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_TIMEOUT_MS, defineShellTool, MAX_TIMEOUT_MS } from "./shared.js";

export const bashTool = defineShellTool(
  bashAdapter,
  [
    "Runs a bash command and returns its output (stdout and stderr interleaved) and exit status.",
    "",
    "- The working directory persists between calls (`cd src` then `pwd` shows src); environment variables and shell functions do not. The directory cannot leave the workspace and its additional directories.",
    "- stdin is empty (/dev/null) and nothing can be typed in: commands that prompt are stopped early. Use non-interactive flags (-y, --yes, --no-edit) and never open editors or pagers.",
    `- Time limit: ${DEFAULT_TIMEOUT_MS / 1000} s by default, \`timeout\` up to ${MAX_TIMEOUT_MS / 1000} s. On time-out the command and everything it started are killed.`,
    "- For servers, watchers and long builds, set run_in_background and follow the task with TaskOutput / TaskStop; processes a foreground command leaves behind are stopped when it finishes.",
    `- Output past ${DEFAULT_MAX_OUTPUT_CHARS} characters is saved to a file; the result shows its start, its end and the file's path.`,
    "- Where the OS sandbox is on, only the workspace, its additional directories and $TMPDIR are writable (use $TMPDIR, not /tmp), .claude/ and .git/config stay read-only, and the network reaches only allowed hosts; the result says when the sandbox blocked something.",
    "- Prefer the dedicated tools for files: Read, Edit, Write, Glob and Grep rather than cat, sed, find and grep.",
    "- Quote paths that contain spaces. Chain dependent steps with &&; each part of a compound command is checked against the permission rules.",
  ].join("\n"),
);
