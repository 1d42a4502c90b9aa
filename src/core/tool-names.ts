/**
 * Every built-in tool's name, at the bottom of the module graph: descriptions and messages can name another
 * tool ("read it with TaskOutput") without importing it. The names are Claude Code's, since models are
 * trained on them.
 */
export const ToolName = {
  Read: "Read",
  Write: "Write",
  Edit: "Edit",
  NotebookEdit: "NotebookEdit",
  Bash: "Bash",
  PowerShell: "PowerShell",
  Glob: "Glob",
  Grep: "Grep",
  Task: "Task",
  WebFetch: "WebFetch",
  WebSearch: "WebSearch",
  ListMcpResources: "ListMcpResources",
  ReadMcpResource: "ReadMcpResource",
  TaskCreate: "TaskCreate",
  TaskGet: "TaskGet",
  TaskUpdate: "TaskUpdate",
  TaskList: "TaskList",
  TaskStop: "TaskStop",
  TaskOutput: "TaskOutput",
  TodoWrite: "TodoWrite",
  CronCreate: "CronCreate",
  CronDelete: "CronDelete",
  CronList: "CronList",
  EnterPlanMode: "EnterPlanMode",
  ExitPlanMode: "ExitPlanMode",
  EnterWorktree: "EnterWorktree",
  ExitWorktree: "ExitWorktree",
  ToolSearch: "ToolSearch",
  AskUserQuestion: "AskUserQuestion",
  SendMessage: "SendMessage",
  Brief: "Brief",
  Sleep: "Sleep",
  Config: "Config",
  Skill: "Skill",
} as const;

export type ToolName = (typeof ToolName)[keyof typeof ToolName];
