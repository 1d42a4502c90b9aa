import type { AnyTool } from "../../core/tool.js";
import { cronCreateTool } from "./cron-create.js";
import { cronDeleteTool } from "./cron-delete.js";
import { cronListTool } from "./cron-list.js";

export const scheduleTools: AnyTool[] = [cronCreateTool, cronDeleteTool, cronListTool];
