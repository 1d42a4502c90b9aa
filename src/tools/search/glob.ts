import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import picomatch from "picomatch";
import * as z from "zod";
import type { ToolCallContext } from "../../core/context.js";
import { PermissionLevel } from "../../core/permission-level.js";
import { ToolResult } from "../../core/result.js";
import { defineTool } from "../../core/tool.js";
import { ToolName } from "../../core/tool-names.js";
import { hiddenFromSearch } from "../../permissions/read-restriction.js";
import { prestartForSearch } from "../../process/prestart.js";
import { hiddenNote, searchBackendHiding } from "../../search/backend.js";
import { IgnoreRules } from "../../search/ignore-rules.js";
import { searchRoot } from "../../search/root.js";

/** Most paths listed; newest first, so the files being worked on come before old ones. */
const MAX_GLOB_RESULTS = 250;

const inputSchema = z.strictObject({
  pattern: z.string().min(1).describe('Glob to match, e.g. "**/*.ts", "src/**/*.test.ts" or "*.md".'),
  path: z.string().optional().describe("Directory to search in; defaults to the working directory."),
});

type Input = z.output<typeof inputSchema>;

/**
 * A pattern that starts somewhere else — absolute (`/repo/src/**\/*.ts`), or with `.` or `..` in its fixed
 * part (`./src/*.ts`, `../lib/**`) — becomes a search root and a glob relative to it: ripgrep matches globs
 * against paths below the root, which never start with those. A pattern without wildcards names one path.
 */
function splitPattern(input: Input): { path: string | undefined; pattern: string } {
  const { prefix, base, glob } = picomatch.scan(input.pattern);
  const segments = base.split("/");
  const relocated = isAbsolute(base) || prefix !== "" || segments.includes(".") || segments.includes("..");
  if (!relocated) return { path: input.path, pattern: input.pattern };
  const from = isAbsolute(base) ? base : join(input.path ?? ".", base);
  // A leading `/` anchors the rest to the new root: `./src/*.ts` must not match `src/x/app.ts`.
  if (!glob) return { path: dirname(from), pattern: `/${basename(from)}` };
  return { path: from, pattern: `/${glob}` };
}

async function execute(input: Input, ctx: ToolCallContext): Promise<ToolResult> {
  const { path, pattern } = splitPattern(input);
  const { root, isFile } = await searchRoot(ctx, path, "Glob", "directory");
  if (isFile) {
    return ToolResult.rejected(
      `${root} is a file, not a directory. Give Glob the directory to search in as path.`,
    );
  }
  const backend = await searchBackendHiding(hiddenFromSearch(ctx, "Glob"));
  const listing = backend.newestFiles(
    {
      cwd: ctx.workingDir,
      root,
      rootIsFile: false,
      globs: [pattern],
      // Claude Code's Glob lists ignored files too; the result says how many of them there are.
      respectIgnore: false,
      signal: ctx.signal,
      session: ctx.session,
      onProgress: (n) => ctx.reportProgress({ progress: n, message: `${n} files listed so far` }),
    },
    MAX_GLOB_RESULTS,
  );
  // rg may have run in the session's waiting shell (also when it then failed): the next command gets another.
  const { newest: shown, total } = await listing.finally(() => prestartForSearch(ctx));
  if (total === 0)
    return ToolResult.success(`No files found${hiddenNote(backend)}`, { backend: backend.name });
  const rules = new IgnoreRules(root, { explicitRoot: false });
  const ignored = shown.filter((p) => rules.ignoresFile(resolve(ctx.workingDir, p))).length;
  const notes: string[] = [];
  if (total > shown.length) {
    notes.push(
      `(Showing the ${shown.length} most recently modified of ${total} matching files; ` +
        "narrow the pattern or path to see the others.)",
    );
  }
  if (ignored > 0) {
    notes.push(
      `(${ignored} of the ${shown.length} files shown ${ignored === 1 ? "is" : "are"} ignored by .gitignore or similar.)`,
    );
  }
  const text =
    (notes.length > 0 ? `${shown.join("\n")}\n\n${notes.join("\n")}` : shown.join("\n")) +
    hiddenNote(backend);
  return ToolResult.success(text, { backend: backend.name, matches: total, ignored });
}

export const globTool = defineTool({
  name: ToolName.Glob,
  description:
    'Finds files by name with a glob pattern such as "**/*.ts" or "src/**/*.{js,jsx}". A pattern ' +
    'without "/" matches file names at any depth. Hidden and git-ignored files are included (the ' +
    `result says how many of the shown files are ignored); .git is not. Lists at most ${MAX_GLOB_RESULTS} ` +
    "paths, most recently modified first. Use Grep to search file contents.",
  permissionLevel: PermissionLevel.ReadOnly,
  inputSchema,
  isConcurrencySafe: () => true,
  permissionSubject: (input, ctx) => ({
    kind: "path",
    path: ctx.resolvePath(splitPattern(input).path ?? "."),
    access: "read",
  }),
  execute: (input, ctx) => execute(input, ctx),
});
