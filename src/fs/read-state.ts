import { createHash } from "node:crypto";
import { structuredPatch } from "diff";
import type { SessionSlot } from "../core/session.js";
import { afterCalls } from "../process/memory.js";

/**
 * What this session has read, per file: a hash of the bytes it saw and the line ranges it was shown.
 * Write and Edit of an existing file need an entry (a partial read counts), and refuse when the file's
 * CONTENT has changed since; a touch or a formatter that leaves the bytes alone is no change. Small files
 * also keep the text that was read, so a refusal can show what changed instead of asking for a re-read.
 */

/** Files up to this many characters keep their text for change diffs. */
const SNAPSHOT_MAX_CHARS = 256 * 1024;
/** Total snapshot text one session keeps; the oldest snapshots are dropped first (hashes stay). */
const SNAPSHOT_BUDGET_CHARS = 16 * 1024 * 1024;
/** Longest change diff shown in a refusal; a longer change needs a fresh Read. */
export const CHANGE_DIFF_MAX_LINES = 60;
/** Lines of context around each change in those diffs. */
const CHANGE_DIFF_CONTEXT = 2;
/** jsdiff gives up after this long and the refusal asks for a Read instead. */
const CHANGE_DIFF_TIMEOUT_MS = 200;

/** 1-based inclusive line range. */
export type LineRange = [first: number, last: number];

export interface FileReadRecord {
  hash: string;
  ranges: LineRange[];
  /** The view text that was read, when small enough to keep. */
  snapshot?: string;
}

/** True when a file of `chars` characters keeps its text, so callers can skip building text that would be dropped. */
export function keepsSnapshot(chars: number): boolean {
  return chars <= SNAPSHOT_MAX_CHARS;
}

/** Hash of a content, given whole or as pieces in order (the same content hashes the same either way). */
export function contentHash(bytes: Uint8Array | readonly Uint8Array[]): string {
  // sha256 is hardware-accelerated here and faster than md5 or sha1 on large files.
  const hash = createHash("sha256");
  for (const piece of bytes instanceof Uint8Array ? [bytes] : bytes) hash.update(piece);
  return hash.digest("base64url");
}

/** Bytes contentHashBetweenTurns hashes per turn of the event loop: under a millisecond each. */
const HASH_SLICE_BYTES = 128 * 1024;

/**
 * contentHash of `bytes`, taken a slice per turn of the event loop. For a caller that waits on the disk
 * meanwhile (a write, its sync): the hash fills those waits on this thread instead of adding to the call
 * after them, and other work of the process goes on between its slices. `bytes` must not change until
 * it resolves.
 */
export async function contentHashBetweenTurns(bytes: Uint8Array): Promise<string> {
  const hash = createHash("sha256");
  for (let at = 0; at < bytes.length; at += HASH_SLICE_BYTES) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve));
    hash.update(bytes.subarray(at, at + HASH_SLICE_BYTES));
  }
  return hash.digest("base64url");
}

/**
 * How long after a write its content is hashed at the latest, while calls keep running (a host whose
 * calls overlap without a break): the buffers it holds are let go then.
 */
const DEFERRED_HASH_DELAY_MS = 50;

/**
 * The hash of content just written, computed off the write's critical path: once the call has answered
 * and no call runs (afterCalls), on the first read of it (the next Write or Edit of that file, a saved
 * session), or DEFERRED_HASH_DELAY_MS later, whichever comes first. Not at the end of the write itself:
 * releasing the file lock and building the result are still to come then. `content` must not change
 * until then; `done` runs once it is hashed (the caller may then reuse the buffers).
 */
export function deferredHash(content: Uint8Array | readonly Uint8Array[], done?: () => void): () => string {
  let hash: string | undefined;
  let pending: readonly Uint8Array[] | Uint8Array | undefined = content;
  const settle = () => {
    if (hash === undefined) {
      hash = contentHash(pending!);
      pending = undefined; // The content can be collected (or reused) once hashed.
      clearTimeout(timer);
      unsettled.delete(settle);
      // `done` may hold the content too (a buffer to give back): let go of it with the content.
      const finished = done;
      done = undefined;
      finished?.();
    }
    return hash;
  };
  const timer = setTimeout(settle, DEFERRED_HASH_DELAY_MS);
  timer.unref();
  unsettled.add(settle);
  afterCalls(settle);
  return settle;
}

/** Hashes not yet taken: each holds the content it will hash. */
const unsettled = new Set<() => string>();

/**
 * Takes every pending hash now, so the content each holds is let go (or given back for reuse) at once:
 * a change of a large file that follows another before the first one's hash was taken would otherwise
 * need a second buffer of the file's size while the first still waits to be hashed.
 */
export function settlePendingHashes(): void {
  for (const settle of [...unsettled]) settle();
}

function mergeRange(ranges: readonly LineRange[], range: LineRange): LineRange[] {
  const all = [...ranges, range].sort((a, b) => a[0] - b[0]);
  const merged: LineRange[] = [];
  for (const r of all) {
    const last = merged.at(-1);
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged;
}

/** The ranges read of content `hash` after `previous`: joined with its own when it read the same content. */
function rangesAfter(previous: FileReadRecord | undefined, hash: string, range?: LineRange): LineRange[] {
  if (!range) return [];
  return previous?.hash === hash ? mergeRange(previous.ranges, range) : [range];
}

export class ReadState {
  private readonly files = new Map<string, FileReadRecord>();
  private snapshotChars = 0;

  get(path: string): FileReadRecord | undefined {
    return this.files.get(path);
  }

  /** Records a Read of `range` (undefined for non-text files) of content with hash `hash`. */
  recordRead(path: string, hash: string, view: string | undefined, range?: LineRange): void {
    this.store(path, { hash, ranges: rangesAfter(this.files.get(path), hash, range) }, view);
  }

  /**
   * recordRead for content given as its bytes, hashed after the call (deferredHash): once no call runs,
   * on the first read of the record, or DEFERRED_HASH_DELAY_MS later. The ranges, which join the earlier read's only when
   * the content is the one read then, are worked out with the hash, and the earlier record let go.
   * `bytes` must not change until then; `done` runs once they are hashed.
   */
  recordReadLater(
    path: string,
    bytes: Uint8Array,
    view: string | undefined,
    range?: LineRange,
    done?: () => void,
  ): void {
    let previous = this.files.get(path);
    let ranges: LineRange[] | undefined;
    const settle = () => {
      ranges ??= rangesAfter(previous, hash(), range);
      previous = undefined;
      return ranges;
    };
    const hash = deferredHash(bytes, () => {
      settle();
      // `done` may hold the bytes (a buffer to give back): the record, which lives on, must not.
      const finished = done;
      done = undefined;
      finished?.();
    });
    this.store(
      path,
      {
        get hash() {
          return hash();
        },
        get ranges() {
          hash();
          return settle();
        },
      },
      view,
    );
  }

  /**
   * Records content this session wrote itself: the model knows it, so it counts as read. The hash may be
   * given as a function (see deferredHash): it is then computed the first time anything reads it.
   */
  recordWrite(path: string, hash: string | (() => string), view: string | undefined): void {
    const ranges = this.files.get(path)?.ranges ?? [];
    this.store(
      path,
      typeof hash === "string"
        ? { hash, ranges }
        : {
            get hash() {
              return hash();
            },
            ranges,
          },
      view,
    );
  }

  forget(path: string): void {
    this.drop(path);
  }

  private drop(path: string): void {
    const old = this.files.get(path);
    if (old?.snapshot !== undefined) this.snapshotChars -= old.snapshot.length;
    this.files.delete(path);
  }

  private store(path: string, record: FileReadRecord, view: string | undefined): void {
    this.drop(path);
    if (view !== undefined && keepsSnapshot(view.length)) {
      record.snapshot = view;
      this.snapshotChars += view.length;
    }
    // Map order is recency order: re-inserting moves the entry to the end, so eviction drops the oldest.
    this.files.set(path, record);
    for (const [key, entry] of this.files) {
      if (this.snapshotChars <= SNAPSHOT_BUDGET_CHARS) break;
      if (entry.snapshot !== undefined && key !== path) {
        this.snapshotChars -= entry.snapshot.length;
        entry.snapshot = undefined;
      }
    }
  }

  /**
   * The saved form (`--session`): hashes and line ranges, never the text read. A state file on disk must
   * not become a copy of the project's files; after a restart a changed file asks for a fresh Read
   * instead of showing the diff.
   */
  toJSON(): Record<string, FileReadRecord> {
    const out: Record<string, FileReadRecord> = {};
    for (const [path, entry] of this.files) out[path] = { hash: entry.hash, ranges: entry.ranges };
    return out;
  }

  static fromJSON(data: unknown): ReadState {
    const state = new ReadState();
    if (!data || typeof data !== "object") return state;
    // Text in a state file saved by an older version is not trusted or kept: hashes are enough.
    for (const [path, value] of Object.entries(data as Record<string, Partial<FileReadRecord>>)) {
      if (typeof value?.hash !== "string") continue;
      const ranges = Array.isArray(value.ranges) ? value.ranges : [];
      state.store(path, { hash: value.hash, ranges }, undefined);
    }
    return state;
  }
}

export const readStateSlot: SessionSlot<ReadState> = {
  key: "file-read-state",
  create: () => new ReadState(),
  save: (state) => state.toJSON(),
  load: (data) => ReadState.fromJSON(data),
};

/** Marks, in a change diff, that the line above it ends the file without a newline. */
const NO_FINAL_NEWLINE = "\\ (no newline at the end of the file)";

/** A short unified diff of what changed, with file line numbers; undefined when too long to show. */
export function changeDiff(before: string, after: string): string | undefined {
  const patch = structuredPatch("", "", before, after, undefined, undefined, {
    context: CHANGE_DIFF_CONTEXT,
    timeout: CHANGE_DIFF_TIMEOUT_MS,
  });
  if (!patch) return undefined;
  const lines: string[] = [];
  for (const hunk of patch.hunks) {
    lines.push(
      `@@ lines ${hunk.oldStart}-${hunk.oldStart + Math.max(hunk.oldLines - 1, 0)} then, ${hunk.newStart}-${hunk.newStart + Math.max(hunk.newLines - 1, 0)} now @@`,
    );
    // jsdiff's "no newline at end of file" marks stay (reworded): without them a change of only the
    // final newline shows as a line replaced by itself.
    lines.push(...hunk.lines.map((l) => (l.startsWith("\\") ? NO_FINAL_NEWLINE : l)));
    if (lines.length > CHANGE_DIFF_MAX_LINES) return undefined;
  }
  return lines.join("\n");
}
