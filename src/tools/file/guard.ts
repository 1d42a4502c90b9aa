import { readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import type { ToolContext } from "../../core/context.js";
import { InputError } from "../../core/errors.js";
import { type AtomicWriteOptions, atomicWrite, writeTarget } from "../../fs/atomic-write.js";
import { type DecodedText, MAX_DECODED_FILE_BYTES } from "../../fs/codec.js";
import { withFileLock } from "../../fs/file-lock.js";
import { nearestExisting } from "../../fs/missing-file.js";
import { changeDiff, contentHash, readStateSlot } from "../../fs/read-state.js";
import { readBounded, specialFileKind } from "../../fs/regular-file.js";

/**
 * The rules every file-changing tool shares: an existing file must have been read in this session, and
 * must not have changed since. "Changed" means different bytes; a touch or a no-op formatter run is not a
 * change. When the change is small enough to show, the refusal shows it and counts as a read of the new
 * content, so the next attempt can go ahead without reading the whole file again.
 */

/**
 * Runs `work` on the file a write to `path` lands in (a symlink's target), holding that file's lock:
 * the lock and the read-state both key on the real file, so a link and its target serialise together.
 */
export async function withWriteTarget<T>(path: string, work: (target: string) => Promise<T>): Promise<T> {
  const target = await writeTarget(path);
  return withFileLock(target, () => work(target));
}

/** The current bytes of `target`, or undefined when it does not exist. */
export async function readCurrent(target: string): Promise<Buffer | undefined> {
  try {
    const info = await stat(target);
    const special = specialFileKind(info);
    if (special) {
      throw new InputError(
        `${target} is ${special}; Write, Edit and NotebookEdit change regular files only, so nothing was written.`,
      );
    }
    const tooLarge = (size: string) =>
      new InputError(
        `${target} is ${size}, more than Write and Edit change (${MAX_DECODED_FILE_BYTES}); nothing was written. ` +
          "Change it with Bash instead (sed -i, or a script).",
      );
    if (info.size > MAX_DECODED_FILE_BYTES) throw tooLarge(`${info.size} bytes`);
    const bytes = info.isFile() ? await readBounded(target, MAX_DECODED_FILE_BYTES) : await readFile(target);
    if (!bytes) throw tooLarge("larger than its reported size");
    return bytes;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "EISDIR")
      throw new InputError(`${target} is a directory; give the path of a file inside it.`);
    if (code === "ENOTDIR") throw new InputError(await notUnderDirectoryMessage(target));
    throw error;
  }
}

/** Names the ancestor of `target` that is a file where a directory should be. */
async function notUnderDirectoryMessage(target: string): Promise<string> {
  const { fileInTheWay = dirname(target) } = await nearestExisting(target);
  return (
    `${target} cannot be a file: ${fileInTheWay} is a file, not a directory, so nothing was written. ` +
    "Choose a path whose parent directories are directories (or move that file away first)."
  );
}

/** Refuses (nothing written) unless this session read `target` and its bytes still hash to what was read. */
export function requireFreshRead(
  ctx: ToolContext,
  target: string,
  current: Buffer,
  view: string | undefined,
): void {
  const state = ctx.session.get(readStateSlot);
  const record = state.get(target);
  if (!record) {
    // An MCP client has a Read of its own; what it read is unknown here, so say which Read counts.
    const how = ctx.mcpClient
      ? "Read it with this MCP server's Read tool first (a read with the client's own Read tool does not count here; a partial read with offset/limit is enough), then retry."
      : "Read it first (a partial read with offset/limit is enough), then retry.";
    throw new InputError(
      `${target} already exists and has not been read in this session, so nothing was written. ${how}`,
    );
  }
  const hash = contentHash(current);
  if (record.hash === hash) return;
  const diff =
    record.snapshot !== undefined && view !== undefined ? changeDiff(record.snapshot, view) : undefined;
  if (diff === undefined) {
    throw new InputError(
      `${target} has changed on disk since you read it, so nothing was written. ` +
        "Read it again (the part you are changing is enough), then retry.",
    );
  }
  state.recordRead(target, hash, view);
  throw new InputError(
    `${target} has changed on disk since you read it, so nothing was written. This is what changed ` +
      `(- as you read it, + as it is now):\n${diff}\n` +
      "You have now seen the current content: check that your change still fits it, then retry.",
  );
}

/**
 * Refuses to change a file whose encoding cannot be written back exactly (a stateful encoding, or a
 * legacy one whose decoding does not round-trip): the write would alter bytes the caller never touched.
 */
export function requireWritableEncoding(path: string, decoded: DecodedText): void {
  if (!decoded.unwritable) return;
  const { encoding } = decoded.format;
  throw new InputError(
    `${path} cannot be changed: ${decoded.unwritable}. Nothing was changed. Convert it to UTF-8 first ` +
      `(iconv -f ${encoding} -t UTF-8), then Read it again; or leave it as it is.`,
  );
}

/**
 * Writes `bytes` atomically and records them as read: content this session wrote is content the model
 * knows. The hash is computed while the disk flushes. Returns a note for the result when the write did
 * something the caller should hear about (other hard links left with the old content), else "".
 */
export async function writeAndRecord(
  ctx: ToolContext,
  target: string,
  bytes: Uint8Array,
  view: string | undefined,
  options: Pick<AtomicWriteOptions, "createParents"> = {},
): Promise<string> {
  let hash = "";
  const { separatedLinks } = await atomicWrite(target, bytes, {
    ...options,
    whileSyncing: () => {
      hash = contentHash(bytes);
    },
  });
  ctx.session.get(readStateSlot).recordWrite(target, hash, view);
  if (separatedLinks === 0) return "";
  const links = separatedLinks === 1 ? "another hard link" : `${separatedLinks} other hard links`;
  return (
    `The file had ${links}, which still hold${separatedLinks === 1 ? "s" : ""} the old content: the write ` +
    "replaced this name only, so that it could be atomic."
  );
}
