/**
 * The search without ripgrep, in TypeScript: same records, same rules (ignore files, hidden files, VCS
 * dirs, globs, types, binary files, long lines), JavaScript regex syntax (see js-regex.ts). Slower than rg
 * on large trees; used only when no rg binary is found or CC_TOOLS_RIPGREP=off.
 */
import { readFile, stat } from "node:fs/promises";
import { typeFilter } from "./globs.js";
import { toJsRegExp } from "./js-regex.js";
import { NewestFirst } from "./mtime.js";
import { displayPath } from "./paths.js";
import type { ContentQuery, FileLines, FileQuery, GrepQuery, SearchBackend } from "./query.js";
import { countLines, hasMatch, looksBinary, scanRecords } from "./scan.js";
import { walkFiles } from "./walk.js";

/** Files read at once: enough to hide disk latency, few enough to bound memory. */
const READ_CONCURRENCY = 8;
/** Larger files are skipped: reading them whole would cost more memory than a search should. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Reads every candidate file (in batches) and hands its text to `visit`, which returns false to stop.
 * Binary files are skipped unless the query asks for them or names the file itself (as rg does).
 */
async function eachText(
  query: GrepQuery,
  visit: (path: string, text: string, binary: boolean) => boolean,
): Promise<boolean> {
  const typeTest = typeFilter(query.type);
  let batch: string[] = [];
  const flush = async (): Promise<boolean> => {
    const texts = await Promise.all(
      batch.map(async (file) => {
        const info = await stat(file).catch(() => undefined);
        if (!info || info.size > MAX_FILE_BYTES) return undefined;
        const bytes = await readFile(file).catch(() => undefined);
        if (!bytes) return undefined;
        const binary = looksBinary(bytes);
        if (binary && !query.searchBinary && !query.rootIsFile) return undefined;
        return { text: bytes.toString("utf8"), binary };
      }),
    );
    for (let i = 0; i < batch.length; i++) {
      const read = texts[i];
      if (read && !visit(displayPath(query.cwd, batch[i]!), read.text, read.binary)) return false;
    }
    batch = [];
    return true;
  };
  for await (const file of walkFiles(query, typeTest)) {
    // Files permission rules forbid reading are never opened.
    if (query.exclude?.(displayPath(query.cwd, file))) continue;
    batch.push(file);
    if (batch.length >= READ_CONCURRENCY && !(await flush())) return false;
  }
  return flush();
}

export const builtinBackend: SearchBackend = {
  name: "builtin",

  async newestFiles(query: FileQuery, limit: number) {
    const byTime = new NewestFirst(query.cwd);
    for await (const file of walkFiles(query)) {
      const path = displayPath(query.cwd, file);
      if (!query.exclude?.(path)) byTime.add(path);
    }
    return { newest: byTime.newest(limit), total: byTime.size };
  },

  async matchingFiles(query) {
    const regex = toJsRegExp(query.pattern, query);
    const out: string[] = [];
    await eachText(query, (path, text) => {
      if (hasMatch(text, regex, query.multiline)) {
        out.push(path);
        query.onPath?.(path);
      }
      return true;
    });
    return out;
  },

  async countMatches(query) {
    const regex = toJsRegExp(query.pattern, query);
    const out: Array<[string, number]> = [];
    await eachText(query, (path, text) => {
      const n = countLines(text, regex, query.multiline);
      if (n > 0) out.push([path, n]);
      return true;
    });
    return out;
  },

  async matchingLines(query: ContentQuery) {
    const regex = toJsRegExp(query.pattern, query);
    const files: FileLines[] = [];
    const binaryMatches: string[] = [];
    let total = 0;
    const finished = await eachText(query, (path, text, binary) => {
      if (binary) {
        if (hasMatch(text, regex, query.multiline)) binaryMatches.push(path);
        return true;
      }
      const records = scanRecords(text, regex, query);
      if (records.length === 0) return true;
      files.push({ path, records });
      total += records.length;
      return total < query.maxRecords;
    });
    return { files, binaryMatches, cutShort: !finished };
  },
};
