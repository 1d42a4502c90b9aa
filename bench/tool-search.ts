/**
 * ToolSearch over 1,000 registered tools (the built-ins plus generated embedder tools with realistic names,
 * descriptions and parameters), through the whole pipeline (runTool, in process), against a plain
 * case-insensitive substring scan of the same tools. The index is built on the first search of a tool pool
 * and reused while the pool is unchanged; the note says what the first search costs.
 */
import { performance } from "node:perf_hooks";
import * as z from "zod";
import { createToolContext } from "../src/context.js";
import { ToolResult } from "../src/core/result.js";
import { type AnyTool, defineTool } from "../src/core/tool.js";
import { runTool } from "../src/executor/run.js";
import { builtinTools } from "../src/registry.js";
import { type Bench, timePair } from "./lib.js";

const TOOL_COUNT = 1_000;
const VERBS = ["create", "list", "delete", "update", "get", "search", "sync", "export", "import", "archive"];
const NOUNS = [
  "issue",
  "invoice",
  "customer",
  "deployment",
  "ticket",
  "document",
  "invoice_line",
  "branch",
  "dashboard",
  "alert",
  "user",
  "bucket",
];
const SERVICES = ["github", "stripe", "jira", "datadog", "slack", "s3", "linear", "notion", "pagerduty"];

function generated(count: number): AnyTool[] {
  const tools: AnyTool[] = [];
  for (let i = 0; tools.length < count; i++) {
    const verb = VERBS[i % VERBS.length]!;
    const noun = NOUNS[Math.floor(i / VERBS.length) % NOUNS.length]!;
    const service = SERVICES[Math.floor(i / (VERBS.length * NOUNS.length)) % SERVICES.length]!;
    tools.push(
      defineTool({
        name: `mcp__${service}__${verb}_${noun}_${i}`,
        description: `${verb[0]!.toUpperCase()}${verb.slice(1)}s a ${noun.replace("_", " ")} in ${service}. Returns the ${noun} as JSON with its id, status and owner.`,
        permissionLevel: "readOnly",
        inputSchema: z.strictObject({
          [`${noun}_id`]: z.string(),
          project: z.string().optional(),
          limit: z.number().optional(),
        }),
        execute: async () => ToolResult.success("ok"),
      }),
    );
  }
  return tools;
}

const bench: Bench = async (report) => {
  const own = generated(TOOL_COUNT - builtinTools().size);
  const ctx = createToolContext({
    workingDir: process.cwd(),
    tools: own,
    permissionMode: "bypassPermissions",
  });
  const query = { query: "create stripe invoice", max_results: 5 };
  const first = performance.now();
  const result = await runTool("ToolSearch", query, ctx);
  const firstMs = performance.now() - first;
  if (result.isError) throw new Error(ToolResult.text(result));
  const all = [...ctx.tools];
  const words = query.query.split(" ");
  const { oursMs, baselineMs } = await timePair(
    () => runTool("ToolSearch", query, ctx),
    () =>
      all
        .filter((t) => words.some((w) => `${t.name} ${t.description}`.toLowerCase().includes(w)))
        .slice(0, query.max_results)
        .map((t) => t.toDefinition()),
    50,
    5,
  );
  report({
    name: `ToolSearch over ${all.length} tools`,
    baseline: "substring scan",
    oursMs,
    baselineMs,
    targetMs: 5,
    note: `BM25+ ranked; the first search (building the index) took ${firstMs.toFixed(1)} ms`,
  });
};

export default bench;
