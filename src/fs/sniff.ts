import { extname } from "node:path";

/** What a file holds, decided from its first bytes (the extension only breaks ties). */
export type FileKind =
  | { kind: "image"; mediaType: "image/png" | "image/jpeg" | "image/gif" | "image/webp" }
  | { kind: "pdf" }
  | { kind: "notebook" }
  | { kind: "text" };

/** How many leading bytes the sniffers need. */
export const SNIFF_HEAD_BYTES = 512;

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
