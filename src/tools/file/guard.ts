import { type BigIntStats, constants, type Stats } from "node:fs";
import { access, type FileHandle, lstat, open, readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import type { ToolContext } from "../../core/context.js";
import { InputError, ToolError } from "../../core/errors.js";
import {
  type AtomicWriteOptions,
  type AtomicWriteResult,
  atomicWrite,
  writeTarget,
} from "../../fs/atomic-write.js";
import { type DecodedText, decodeText, MAX_DECODED_FILE_BYTES } from "../../fs/codec.js";
import { assertLockHeld, withFileLock } from "../../fs/file-lock.js";
import { giveBuffer, takeBuffer } from "../../fs/kept-buffer.js";
import { nearestExisting } from "../../fs/missing-file.js";
import { changeDiff, contentHash, deferredHash, readStateSlot } from "../../fs/read-state.js";
import { readBounded, specialFileKind } from "../../fs/regular-file.js";

/**
 * The rules every file-changing tool shares: an existing file must have been read in this session, and
 * must not have changed since. "Changed" means different bytes; a touch or a no-op formatter run is not a
 * change. When the change is small enough to show, the refusal shows it and counts as a read of the new
 * content, so the next attempt can go ahead without reading the whole file again.
 */

/**
 * Runs `work` on the file a write to `path` lands in (a symlink's target), holding that file's lock (in
 * this process and across processes, see file-lock.ts): the lock and the read-state both key on the real
 * file, so a link and its target serialise together.
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
    await requireWritable(target, info);
    const bytes = info.isFile()
      ? await readBounded(target, MAX_DECODED_FILE_BYTES, takeBuffer)
      : await readFile(target);
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

/**
 * Refuses a file its owner made read-only (no write bit for anyone, or none for us), as an in-place writer
 * would: the atomic rename needs only the directory to be writable, so without this check a 0444 file
 * would be replaced anyway, even by root.
 */
async function requireWritable(target: string, info: Stats): Promise<void> {
  const readOnly = info.isFile() && (info.mode & 0o222) === 0;
  const denied =
    !readOnly &&
    (await access(target, constants.W_OK).then(
      () => false,
      () => true,
    ));
  if (!readOnly && !denied) return;
  const mode = (info.mode & 0o7777).toString(8).padStart(4, "0");
  throw new InputError(
    `${target} is read-only (mode ${mode}${denied ? ", not writable by this user" : ""}), so nothing was written. ` +
      "Its owner made it so on purpose, or it belongs to someone else: if it really should change, make it writable first (chmod u+w), then retry.",
  );
}

/** Names the ancestor of `target` that is a file where a directory should be. */
async function notUnderDirectoryMessage(target: string): Promise<string> {
  const { fileInTheWay = dirname(target) } = await nearestExisting(target);
  return (
    `${target} cannot be a file: ${fileInTheWay} is a file, not a directory, so nothing was written. ` +
    "Choose a path whose parent directories are directories (or move that file away first)."
  );
}

/**
 * Refuses (nothing written) unless this session read `target` and its bytes still hash to what was read.
 * `view` is the current text, or a function giving it: it is needed only to show a change, so a caller
 * that has not decoded the file need not decode it unless the file did change. `currentHash`, when the
 * caller has it, is contentHash(current).
 */
export function requireFreshRead(
  ctx: ToolContext,
  target: string,
  current: Buffer,
  view: string | undefined | (() => string | undefined),
  currentHash?: string,
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
  const hash = currentHash ?? contentHash(current);
  if (record.hash === hash) return;
  const text = typeof view === "function" && record.snapshot !== undefined ? view() : view;
  const shown = typeof text === "string" ? text : undefined;
  const diff =
    record.snapshot !== undefined && shown !== undefined ? changeDiff(record.snapshot, shown) : undefined;
  if (diff === undefined) {
    throw new InputError(
      `${target} has changed on disk since you read it, so nothing was written. ` +
        "Read it again (the part you are changing is enough), then retry.",
    );
  }
  state.recordRead(target, hash, shown);
  throw new InputError(
    `${target} has changed on disk since you read it, so nothing was written. This is what changed ` +
      `(- as you read it, + as it is now):\n${diff}\n` +
      "You have now seen the current content: check that your change still fits it, then retry.",
  );
}

/** How many times, and how far apart, a file another program is writing is re-read until it stops changing. */
const SETTLE_READS = 10;
const SETTLE_PAUSE_MS = 20;

/** Bytes compared per read when a file is checked against the content it should hold. */
const COMPARE_CHUNK_BYTES = 1024 * 1024;
/** Compare buffers kept for reuse, so checking a large file allocates no fresh memory each time. */
const SPARE_COMPARE_BUFFERS = 2;
const spareCompareBuffers: Buffer[] = [];

/**
 * True when the open file holds exactly `content` (pieces in order), from its start to its end. Read and
 * compared chunk by chunk through one small buffer: a check of a 10 MiB file costs no second 10 MiB copy.
 */
async function holds(handle: FileHandle, content: readonly Uint8Array[]): Promise<boolean> {
  const chunk = spareCompareBuffers.pop() ?? Buffer.allocUnsafe(COMPARE_CHUNK_BYTES);
  try {
    let position = 0;
    for (const piece of content) {
      for (let offset = 0; offset < piece.length; ) {
        const want = Math.min(chunk.length, piece.length - offset);
        const { bytesRead } = await handle.read(chunk, 0, want, position);
        if (bytesRead === 0) return false;
        if (!chunk.subarray(0, bytesRead).equals(piece.subarray(offset, offset + bytesRead))) return false;
        offset += bytesRead;
        position += bytesRead;
      }
    }
    // Nothing may follow: a file that grew holds more than the content.
    const { bytesRead } = await handle.read(chunk, 0, 1, position);
    return bytesRead === 0;
  } finally {
    if (spareCompareBuffers.length < SPARE_COMPARE_BUFFERS) spareCompareBuffers.push(chunk);
  }
}

/** All bytes of an open file, from its start: read in one go when it has not grown since its stat. */
async function readAll(handle: FileHandle): Promise<Buffer> {
  const { size } = await handle.stat();
  const chunks: Buffer[] = [];
  for (let position = 0; ; ) {
    // One byte more than the size, so a file that did not grow needs no second read to see its end.
    const buffer = Buffer.allocUnsafe(Math.max(size - position + 1, 64 * 1024));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return Buffer.concat(chunks);
    chunks.push(buffer.subarray(0, bytesRead));
    position += bytesRead;
    if (bytesRead < buffer.length) return Buffer.concat(chunks);
  }
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
 * Makes sure a change never silently replaces someone else's write. Another cc-tools process cannot
 * interleave (the lock); a writer that takes no lock (an editor, `sed -i`, a script) can. So:
 * - while the new content syncs to disk (duringSync), the file must still hold `basis`, the bytes the
 *   change was made from (compared while the disk works, not after it); a difference is refused once the
 *   caller's own checks, run beside it, have passed (refuseIfChanged);
 * - just before the rename (beforeRename), the name must still lead to that same file, a regular file (a
 *   program that saved by renaming its own file over it meanwhile keeps its file), and the file must not
 *   have been written since the compare: its size and times are as the compare found them, and were
 *   then already old enough to tell (COMPARED_SETTLED_MS), or its bytes are compared again;
 * - the file compared is kept open across the rename, so a write into it in the instant before the
 *   rename is seen afterwards (afterRename): its bytes (which now live only in the old file) are put back,
 *   and the change reports that it was not applied.
 * A new file is created with link(), which fails if the name appeared meanwhile.
 */
export class ReplaceCheck {
  private old: FileHandle | undefined;
  /** The file compared, as fstat saw it just before the compare. */
  private compared: BigIntStats | undefined;
  /** Its last change was COMPARED_SETTLED_MS or more before that fstat. */
  private settled = false;
  /** What the file held when duringSync found it changed (null: too large to show). */
  private changed: Buffer | null | undefined;

  constructor(
    private readonly ctx: ToolContext,
    private readonly target: string,
    private readonly basis: Buffer | undefined,
  ) {}

  async duringSync(): Promise<void> {
    if (!this.basis) return;
    this.old = await open(this.target, "r").catch(() => undefined);
    if (!this.old) throw deletedMessage(this.target);
    const comparedAt = BigInt(Date.now()) * NS_PER_MS;
    this.compared = await this.old.stat({ bigint: true });
    this.settled = this.compared.ctimeNs <= comparedAt - COMPARED_SETTLED_NS;
    if (await holds(this.old, [this.basis])) return;
    // Refused by refuseIfChanged, once the caller's checks passed: theirs is the refusal to give, and
    // only one refusal may record what the model was shown.
    const old = this.old;
    this.old = undefined;
    this.changed = await readToShow(old).finally(() => old.close().catch(() => undefined));
  }

  /** Refuses the change when duringSync found the file changed. */
  refuseIfChanged(): void {
    if (this.changed !== undefined) refusal(this.ctx, this.target, this.changed);
  }

  async beforeRename(): Promise<void> {
    await assertLockHeld(this.target);
    if (!this.basis) return;
    // lstat: a symlink put in its place is another file under the name, even one leading to it.
    const now = await lstat(this.target, { bigint: true }).catch(() => undefined);
    if (!now) throw deletedMessage(this.target);
    const compared = this.compared!;
    if (now.dev !== compared.dev || now.ino !== compared.ino) {
      await this.close();
      // Another regular file is judged by its content; anything else is not opened (a FIFO would block).
      const other = now.isFile() ? await open(this.target, "r").catch(() => undefined) : undefined;
      const bytes = other && (await readToShow(other).finally(() => other.close().catch(() => undefined)));
      if (bytes) requireFreshRead(this.ctx, this.target, bytes, decodeText(bytes)?.view);
      throw replacedMessage(this.target);
    }
    const held = await this.old!.stat({ bigint: true });
    const unchanged =
      held.size === compared.size && held.mtimeNs === compared.mtimeNs && held.ctimeNs === compared.ctimeNs;
    if ((this.settled && unchanged) || (await holds(this.old!, [this.basis]))) return;
    const bytes = await readToShow(this.old!);
    await this.close();
    refusal(this.ctx, this.target, bytes);
  }

  async afterRename(written: readonly Uint8Array[]): Promise<void> {
    if (!this.old) return;
    if (await holds(this.old, [this.basis!])) return this.close();
    let now = await readAll(this.old);
    // The other program may be between its truncate and its write: wait until its bytes settle.
    for (let i = 0; i < SETTLE_READS; i++) {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_PAUSE_MS));
      const again = await readAll(this.old);
      if (again.equals(now)) break;
      now = again;
    }
    await this.close();
    // Put back only over our own bytes: if the new file was written too, that write stands.
    const current = await open(this.target, "r").catch(() => undefined);
    const ours = current ? await holds(current, written).finally(() => current.close()) : false;
    if (ours) await atomicWrite(this.target, now);
    // Not an InputError: the file was touched (replaced, then put back), so this is not "refused before running".
    throw new ToolError(
      `${this.target} was written by another program at the same moment as this change, so that program's ` +
        "version was kept and this change was not applied. Read the file again, then retry.",
    );
  }

  async close(): Promise<void> {
    await this.old?.close().catch(() => undefined);
    this.old = undefined;
  }
}

/**
 * How long before the compare the file's last change must be for its size and times, unchanged at the
 * rename, to show that it was not written since: every write sets its ctime to the kernel's clock, which
 * moves a tick (at most 10 ms) at a time, so a write in the tick of the file's last change can leave its
 * times as they were. A file changed more recently is compared again. (A write that began before the
 * compare and is still landing carries the time it began: it is put back after the rename.)
 */
const COMPARED_SETTLED_MS = 20;
const NS_PER_MS = 1_000_000n;
const COMPARED_SETTLED_NS = BigInt(COMPARED_SETTLED_MS) * NS_PER_MS;

/** Refuses a change because the file now holds `now`, showing what changed where the session can. */
function refusal(ctx: ToolContext, target: string, now: Buffer | null): never {
  if (now) requireFreshRead(ctx, target, now, decodeText(now)?.view);
  throw changedMessage(target);
}

/** The bytes of a file found changed, to show what changed; null when it is larger than a change reads. */
async function readToShow(file: FileHandle): Promise<Buffer | null> {
  const { size } = await file.stat();
  return size > MAX_DECODED_FILE_BYTES ? null : readAll(file);
}

function replacedMessage(target: string): InputError {
  return new InputError(
    `${target} was replaced by another file while this change was being written, so nothing was written. Read it again, then retry.`,
  );
}

function deletedMessage(target: string): InputError {
  return new InputError(
    `${target} was deleted while this change was being written, so nothing was written. Check whether it should still exist, then retry.`,
  );
}

function changedMessage(target: string): InputError {
  return new InputError(
    `${target} has changed on disk since you read it, so nothing was written. Read it again (the part you are changing is enough), then retry.`,
  );
}

/**
 * Runs `first` and `second` side by side and waits for both to settle (neither is left running behind a
 * failure of the other); the first failure, in that order, is what it throws.
 */
async function bothSettled(
  first: (() => void | Promise<void>) | undefined,
  second: () => Promise<void>,
): Promise<void> {
  const outcomes = await Promise.allSettled([(async () => first?.())(), second()]);
  for (const outcome of outcomes) if (outcome.status === "rejected") throw outcome.reason;
}

/**
 * Writes `bytes` (one buffer, or pieces in order) atomically in place of `basis` (the bytes the change
 * was made from, read under the lock; undefined for a new file) and records them as read: content this
 * session wrote is content the model knows. Its hash is computed after the call answered (deferredHash):
 * a call that needs it sooner (the next Edit of the file) computes it then. Returns a note
 * for the result when the write did something the caller should hear about (other hard links left with
 * the old content), else "".
 */
export async function writeAndRecord(
  ctx: ToolContext,
  target: string,
  basis: Buffer | undefined,
  bytes: Uint8Array | readonly Uint8Array[],
  view: string | undefined,
  options: Pick<AtomicWriteOptions, "createParents" | "whileSyncing"> = {},
): Promise<string> {
  const pieces = bytes instanceof Uint8Array ? [bytes] : bytes;
  const check = new ReplaceCheck(ctx, target, basis);
  let result: AtomicWriteResult;
  try {
    result = await atomicWrite(target, pieces, {
      ...options,
      createOnly: !basis,
      // The caller's checks first: theirs (a file changed since it was read) is the refusal to give.
      whileSyncing: async () => {
        await bothSettled(options.whileSyncing, () => check.duringSync());
        check.refuseIfChanged();
      },
      beforeRename: () => check.beforeRename(),
      afterRename: () => check.afterRename(pieces),
    });
  } catch (error) {
    await check.close();
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    throw new InputError(
      `${target} was created by another program while this was being written, so nothing was written. Read it, then retry.`,
    );
  }
  const { separatedLinks } = result;
  // The pieces may be views of the basis: it is reused only once they are hashed.
  const hash = deferredHash(pieces, basis && (() => giveBuffer(basis)));
  ctx.session.get(readStateSlot).recordWrite(target, hash, view);
  if (separatedLinks === 0) return "";
  const links = separatedLinks === 1 ? "another hard link" : `${separatedLinks} other hard links`;
  return (
    `The file had ${links}, which still hold${separatedLinks === 1 ? "s" : ""} the old content: the write ` +
    "replaced this name only, so that it could be atomic."
  );
}
