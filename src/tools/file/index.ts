import type { AnyTool } from "../../core/tool.js";
import { editTool } from "./edit.js";
import { notebookEditTool } from "./notebook-edit.js";
import { readTool } from "./read.js";
import { writeTool } from "./write.js";

export const fileTools: AnyTool[] = [readTool, writeTool, editTool, notebookEditTool];
