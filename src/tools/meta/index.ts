import type { AnyTool } from "../../core/tool.js";
import { askUserQuestionTool } from "./ask-user-question.js";
import { briefTool } from "./brief.js";
import { configTool } from "./config.js";
import { sendMessageTool } from "./send-message.js";
import { skillTool } from "./skill.js";
import { sleepTool } from "./sleep.js";
import { toolSearchTool } from "./tool-search.js";

export const metaTools: AnyTool[] = [
  toolSearchTool,
  askUserQuestionTool,
  sendMessageTool,
  skillTool,
  configTool,
  briefTool,
  sleepTool,
];
