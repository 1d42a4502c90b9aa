import { lazyModule } from "../core/lazy-module.js";

/** Only pages in a legacy charset (or a UTF-16 one) need it. */
const iconvLite = lazyModule<typeof import("iconv-lite")>("iconv-lite");

/**
 * A response body as text, in the charset the server declared (Content-Type), else the one the page
 * declares (a BOM, `<meta charset>`), else UTF-8 when the bytes are valid UTF-8, else windows-1252: what
 * browsers assume for an undeclared legacy page.
 */

/** How far into an HTML page a `<meta charset>` is looked for (browsers look at the first 1024 bytes). */
const META_SNIFF_BYTES = 4096;

export function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

export function charsetParameter(contentType: string | null): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? "");
  return match?.[1]?.toLowerCase();
}

function metaCharset(bytes: Buffer): string | undefined {
  const head = bytes.subarray(0, META_SNIFF_BYTES).toString("latin1");
  const direct = /<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.-]+)/i.exec(head);
  return direct?.[1]?.toLowerCase();
}

function bomCharset(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  return undefined;
}

function isValidUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Labels browsers read as windows-1252, whose bytes 0x80-0x9F are letters and quotes, not controls. */
const WINDOWS_1252_LABELS = new Set([
  "iso-8859-1",
  "iso8859-1",
  "latin1",
  "l1",
  "us-ascii",
  "ascii",
  "cp819",
]);

/** Labels of UTF-8, decoded without iconv-lite. */
const UTF8_LABELS = new Set(["utf-8", "utf8", "unicode-1-1-utf-8"]);

/** The charset to decode a body with. */
export function detectCharset(bytes: Buffer, contentType: string | null, html: boolean): string {
  const declared =
    bomCharset(bytes) ?? charsetParameter(contentType) ?? (html ? metaCharset(bytes) : undefined);
  if (declared && WINDOWS_1252_LABELS.has(declared)) return "windows-1252";
  if (declared && UTF8_LABELS.has(declared)) return "utf-8";
  if (declared && iconvLite().encodingExists(declared)) return declared;
  return isValidUtf8(bytes) ? "utf-8" : "windows-1252";
}

export function decodeBody(bytes: Buffer, contentType: string | null, html: boolean): string {
  const charset = detectCharset(bytes, contentType, html);
  // Both strip a BOM, so the text starts with the content, and both replace invalid bytes with U+FFFD.
  if (charset === "utf-8") return new TextDecoder("utf-8").decode(bytes);
  return iconvLite().decode(bytes, charset);
}
