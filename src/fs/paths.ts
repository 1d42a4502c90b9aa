import { readdir, stat } from "node:fs/promises";
import { basename, dirname, extname, join } from "node:path";
import type { ToolContext } from "../core/context.js";
import type { PermissionSubject } from "../core/tool.js";

/** What a file holds, decided from its first bytes (the extension only breaks ties). */
export type FileKind =
  | { kind: "image"; mediaType: "image/png" | "image/jpeg" | "image/gif" | "image/webp" }
  | { kind: "pdf" }
  | { kind: "notebook" }
  | { kind: "text" };

/** How many leading bytes the sniffers need. */
export const SNIFF_HEAD_BYTES = 512;
/** Most names offered as "did you mean". */
const MAX_SUGGESTIONS = 3;

interface Signature {
  offset: number;
  bytes: string;
  label: string;
}

// Bytes as latin1 strings, so a signature reads like the format documents it.
const BINARY_SIGNATURES: readonly Signature[] = [
  { offset: 0, bytes: "PK\x03\x04", label: "ZIP archive (or a format built on it: jar, docx, xlsx, apk)" },
  { offset: 0, bytes: "\x1f\x8b", label: "gzip-compressed data" },
  { offset: 0, bytes: "BZh", label: "bzip2-compressed data" },
  { offset: 0, bytes: "\xfd7zXZ\x00", label: "xz-compressed data" },
  { offset: 0, bytes: "7z\xbc\xaf\x27\x1c", label: "7-Zip archive" },
  { offset: 0, bytes: "\x28\xb5\x2f\xfd", label: "zstd-compressed data" },
  { offset: 257, bytes: "ustar", label: "tar archive" },
  { offset: 0, bytes: "\x7fELF", label: "ELF executable or shared library" },
  { offset: 0, bytes: "\xcf\xfa\xed\xfe", label: "Mach-O executable" },
  { offset: 0, bytes: "\xca\xfe\xba\xbe", label: "Java class file or Mach-O universal binary" },
  { offset: 0, bytes: "MZ", label: "Windows executable (PE)" },
  { offset: 0, bytes: "\x00asm", label: "WebAssembly module" },
  { offset: 0, bytes: "SQLite format 3\x00", label: "SQLite database" },
  { offset: 0, bytes: "PAR1", label: "Parquet file" },
  { offset: 0, bytes: "BM", label: "BMP image (not a format Read can show)" },
  { offset: 0, bytes: "II*\x00", label: "TIFF image (not a format Read can show)" },
  { offset: 0, bytes: "MM\x00*", label: "TIFF image (not a format Read can show)" },
  { offset: 0, bytes: "\x00\x00\x01\x00", label: "ICO image (not a format Read can show)" },
  { offset: 4, bytes: "ftyp", label: "MP4/QuickTime media or HEIC/AVIF image" },
  { offset: 0, bytes: "ID3", label: "MP3 audio" },
  { offset: 0, bytes: "OggS", label: "Ogg media" },
  { offset: 0, bytes: "fLaC", label: "FLAC audio" },
  { offset: 0, bytes: "wOFF", label: "WOFF font" },
  { offset: 0, bytes: "wOF2", label: "WOFF2 font" },
  { offset: 0, bytes: "\x00\x01\x00\x00", label: "TrueType font" },
  { offset: 0, bytes: "OTTO", label: "OpenType font" },
];

function at(head: Buffer, offset: number, bytes: string): boolean {
  return (
    head.length >= offset + bytes.length && head.toString("latin1", offset, offset + bytes.length) === bytes
  );
}

/**
 * Classifies a file from its path and first SNIFF_HEAD_BYTES bytes. "text" means "not a format with
 * its own reader": the codec then decides between text and binary, and binaryLabel names the latter.
 */
export function sniffKind(path: string, head: Buffer): FileKind {
  if (at(head, 0, "\x89PNG\r\n\x1a\n")) return { kind: "image", mediaType: "image/png" };
  if (at(head, 0, "\xff\xd8\xff")) return { kind: "image", mediaType: "image/jpeg" };
  if (at(head, 0, "GIF87a") || at(head, 0, "GIF89a")) return { kind: "image", mediaType: "image/gif" };
  if (at(head, 0, "RIFF") && at(head, 8, "WEBP")) return { kind: "image", mediaType: "image/webp" };
  if (at(head, 0, "%PDF-")) return { kind: "pdf" };
  if (extname(path).toLowerCase() === ".ipynb") return { kind: "notebook" };
  return { kind: "text" };
}

/** Names binary data by its signature, else by its extension. */
export function binaryLabel(path: string, head: Buffer): string {
  const signature = BINARY_SIGNATURES.find((s) => at(head, s.offset, s.bytes));
  if (signature) return signature.label;
  const ext = extname(path);
  return ext ? `binary data (a ${ext} file)` : "binary data";
}

export function similarity(a: string, b: string): number {
  // Dice coefficient over character bigrams: cheap, and forgiving of swapped or missing letters.
  const grams = (s: string) => {
    const out = new Map<string, number>();
    for (let i = 0; i < s.length - 1; i++) out.set(s.slice(i, i + 2), (out.get(s.slice(i, i + 2)) ?? 0) + 1);
    return out;
  };
  const x = grams(a.toLowerCase());
  const y = grams(b.toLowerCase());
  let shared = 0;
  for (const [g, n] of x) shared += Math.min(n, y.get(g) ?? 0);
  const total = Math.max(a.length - 1, 0) + Math.max(b.length - 1, 0);
  return total === 0 ? 0 : (2 * shared) / total;
}

/** Least similarity for a name to be offered as "did you mean". */
const MIN_SIMILARITY = 0.5;

/** Names in the file's directory close to its name (same stem, other case, a typo). */
async function closeNames(path: string): Promise<string[]> {
  const entries = await readdir(dirname(path)).catch(() => [] as string[]);
  const name = basename(path).toLowerCase();
  const stemOf = (n: string) => n.slice(0, n.length - extname(n).length).toLowerCase();
  const stem = stemOf(name);
  // Stems are compared, not whole names: a shared ".ts" says nothing about which file was meant.
  const score = (entry: string) =>
    entry.toLowerCase() === name || stemOf(entry) === stem ? 2 : similarity(stemOf(entry), stem);
  return entries
    .map((entry) => ({ entry, score: score(entry) }))
    .filter((c) => c.score >= MIN_SIMILARITY)
    .sort((a, b) => b.score - a.score)
    .slice(0, MAX_SUGGESTIONS)
    .map((c) => c.entry);
}

async function nearestExistingDir(path: string): Promise<string> {
  let dir = dirname(path);
  while (
    dirname(dir) !== dir &&
    !(await stat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    dir = dirname(dir);
  return dir;
}

/** The message for a path that does not exist: where we looked, and the closest names there. */
export async function missingFileMessage(path: string, workingDir: string): Promise<string> {
  const lines = [`File does not exist: ${path} (working directory: ${workingDir}).`];
  const dirExists = await stat(dirname(path)).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!dirExists) {
    const existing = await nearestExistingDir(path);
    lines.push(`Its directory does not exist either; the nearest existing ancestor is ${existing}.`);
  }
  const names = dirExists ? await closeNames(path) : [];
  if (names.length > 0) {
    lines.push(`Did you mean ${names.map((n) => join(dirname(path), n)).join(", ")}?`);
  } else {
    lines.push("Use Glob to find the file by name.");
  }
  return lines.join(" ");
}

/** What permission rules see for a file tool's call: the absolute path, read or written. */
export function pathSubject(ctx: ToolContext, path: string, access: "read" | "write"): PermissionSubject {
  return { kind: "path", path: ctx.resolvePath(path), access };
}
