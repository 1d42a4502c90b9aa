import * as z from "zod";
import type { ToolCallContext, ToolContext } from "./context.js";
import type { HostCapability } from "./host.js";
import type { PermissionLevel } from "./permission-level.js";
import type { ToolResult } from "./result.js";

/** A JSON Schema (draft-07) object as sent to models and MCP clients. */
export type JsonSchema = Record<string, unknown>;

/** The model-facing definition of a tool: the Anthropic Messages API's shape. */
export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

/**
 * What a call touches, so permission rules can match it: `Read(./secrets/**)` matches a path,
 * `Bash(npm test:*)` a command, `WebFetch(domain:x)` a URL, `Skill(name)` a plain specifier.
 */
export type PermissionSubject =
  | { kind: "none" }
  | { kind: "path"; path: string; access: "read" | "write" }
  /** `cwd`: where the command starts, so relative redirect targets are judged where they land. */
  | { kind: "command"; command: string; shell: "bash" | "powershell"; cwd?: string }
  | { kind: "url"; url: string }
  | { kind: "specifier"; value: string };

export interface Tool<Schema extends z.ZodType = z.ZodType> {
  readonly name: string;
  /** Other names models use for this tool (`Agent` for `Task`); `findTool` resolves them. */
  readonly aliases: readonly string[];
  readonly description: string;
  readonly permissionLevel: PermissionLevel;
  /**
   * True when a call changes nothing (MCP's readOnlyHint, which clients use to skip their own prompt).
   * Unset means: as the level says (None and ReadOnly tools read only).
   */
  readonly readOnly?: boolean;
  readonly inputSchema: Schema;
  /** Longest text the result may carry before the executor spills it to a file. */
  readonly maxResultChars: number;
  /** Runs the tool. May throw ToolError; the executor turns every throw into an error result. */
  execute(input: z.output<Schema>, ctx: ToolCallContext): Promise<ToolResult>;
  /** True when this call may run in parallel with other concurrency-safe calls. */
  isConcurrencySafe(input: z.output<Schema>): boolean;
  /** What permission rules are matched against for this call. */
  permissionSubject(input: z.output<Schema>, ctx: ToolContext): PermissionSubject;
  /** What the host must provide for this tool to work (a person to ask, a model); see ToolSet.availableFor. */
  readonly requires: readonly HostCapability[];
  /** Why the tool cannot work on this machine (`pwsh` is not installed), or undefined when it can. */
  unavailableReason(): string | undefined;
  /** Left out of the tools sent up front; ToolSearch brings its definition into the conversation. */
  readonly deferred: boolean;
  /** The JSON Schema and description a model sees; computed once. */
  toDefinition(): ToolDefinition;
}

/** Default budget for a tool's result text; tools with their own limits (Bash, Read) set theirs. */
export const DEFAULT_MAX_RESULT_CHARS = 100_000;

export interface ToolSpec<Schema extends z.ZodType> {
  name: string;
  aliases?: readonly string[];
  description: string;
  permissionLevel: PermissionLevel;
  /** Set to false for a tool that needs no permission yet changes things (TaskStop kills processes). */
  readOnly?: boolean;
  inputSchema: Schema;
  maxResultChars?: number;
  execute(input: z.output<Schema>, ctx: ToolCallContext): Promise<ToolResult>;
  /** Defaults to true for None and ReadOnly tools, false otherwise. */
  isConcurrencySafe?(input: z.output<Schema>): boolean;
  permissionSubject?(input: z.output<Schema>, ctx: ToolContext): PermissionSubject;
  requires?: readonly HostCapability[];
  unavailableReason?(): string | undefined;
  deferred?: boolean;
}

/** Derives the draft-07 JSON Schema of a tool's input, as models and MCP clients see it. */
export function inputJsonSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { target: "draft-07", io: "input" }) as JsonSchema;
  delete json.$schema;
  return json;
}

/**
 * Refuses an input schema that is not zod 4's. A zod 3 schema (or a zod 3 copy of another package) would
 * fail later, deep in schema conversion, with a message about neither; zod 4 schemas carry `_zod`.
 */
export function assertZod4Schema(schema: unknown, toolName: string): void {
  if (schema !== null && typeof schema === "object" && "_zod" in schema) return;
  throw new TypeError(
    `Tool "${toolName}": inputSchema is not a zod 4 schema${schema && typeof schema === "object" && "_def" in schema ? " (it looks like zod 3)" : ""}. ` +
      'cc-tools needs zod 4 (a peer dependency, 4.6 or later): install zod@^4.6 and build the schema with `import * as z from "zod"` ' +
      '(with zod 3.25, `from "zod/v4"`).',
  );
}

/** Builds a Tool from a spec: one call per tool file. */
export function defineTool<Schema extends z.ZodType>(spec: ToolSpec<Schema>): Tool<Schema> {
  assertZod4Schema(spec.inputSchema, spec.name);
  let definition: ToolDefinition | undefined;
  const readOnly = spec.readOnly ?? (spec.permissionLevel === "none" || spec.permissionLevel === "readOnly");
  return {
    name: spec.name,
    aliases: spec.aliases ?? [],
    description: spec.description,
    permissionLevel: spec.permissionLevel,
    readOnly,
    inputSchema: spec.inputSchema,
    maxResultChars: spec.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
    execute: spec.execute,
    isConcurrencySafe: spec.isConcurrencySafe ?? (() => readOnly),
    permissionSubject: spec.permissionSubject ?? (() => ({ kind: "none" })),
    requires: spec.requires ?? [],
    unavailableReason: spec.unavailableReason ?? (() => undefined),
    deferred: spec.deferred ?? false,
    toDefinition() {
      definition ??= {
        name: spec.name,
        description: spec.description,
        input_schema: inputJsonSchema(spec.inputSchema),
      };
      return definition;
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every input type.
export type AnyTool = Tool<any>;
