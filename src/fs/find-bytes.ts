/**
 * Finding a byte string in a large buffer, fast whatever its bytes. Node's Buffer.indexOf searches a
 * needle of 7 bytes or more with Boyer-Moore-Horspool, which skips little when the needle is made of bytes
 * the text is full of: `value_98923 =` in the bench's 12.5 MB of code took 7.3 ms to rule out a second
 * occurrence (1.7 GB/s), and `98923 =` 2.2 ms. A shorter needle is searched by memchr on its first byte,
 * which is as fast as that byte is rare. So a long needle is looked for by its anchor, the (up to) six
 * bytes that start at its rarest byte in a sample of the text, and each place the anchor occurs is checked
 * for the whole needle; where even its rarest byte is common, or the anchor turns out to occur too often,
 * the whole needle is searched as before.
 */

/** Needles up to this long are what Buffer.indexOf already searches by memchr on their first byte. */
const ANCHOR_MAX_BYTES = 6;
/** Texts shorter than this are searched whole: the sample would cost more than it saves. */
const ANCHORED_MIN_BYTES = 256 * 1024;
/** Bytes of the text counted to tell a rare byte from a common one, in SAMPLE_WINDOWS windows spread over it. */
const SAMPLE_BYTES = 64 * 1024;
const SAMPLE_WINDOWS = 8;
/**
 * How rare the anchor's first byte must be in the sample, as one in so many bytes: memchr stops at each.
 * At one in 68 to 87, searching a 6-byte anchor through 12.5 MB took 2.2 ms, against 7.3 for the whole
 * needle.
 */
const RARE_BYTE_SHARE = 32;
/** Start bytes (the rarest first) whose anchors are tried in the sample. */
const ANCHOR_TRIES = 8;
/** Bytes of a long needle whose positions are considered for its anchor. */
const ANCHOR_SCOPE_BYTES = 1024;
/**
 * Places an anchor may occur, as one in so many bytes, before checking each (a call into Buffer.indexOf
 * and a Buffer.compare from JavaScript, about 60 ns) costs more than searching the whole needle: where
 * the sample shows more, or the text turns out to hold more, the whole needle is searched.
 */
const MAX_ANCHOR_SHARE = 4096;

export interface FindOptions {
  /** Texts shorter than this are searched with the whole needle (ANCHORED_MIN_BYTES). */
  anchoredFrom?: number;
  /** Anchors checked before the rest is searched with the whole needle (by default from the text's size). */
  maxCandidates?: number;
  /** Bytes of the text counted to choose the anchor (SAMPLE_BYTES). */
  sampleBytes?: number;
}

/**
 * The first two places `needle` occurs in `text` (overlapping occurrences count: "aa" occurs twice in
 * "aaa"), -1 for each that does not exist: for a caller that needs the match and whether it is unique.
 */
export function firstTwoOccurrences(
  text: Buffer,
  needle: Buffer,
  options: FindOptions = {},
): [number, number] {
  const {
    anchoredFrom = ANCHORED_MIN_BYTES,
    maxCandidates = Math.ceil(text.length / MAX_ANCHOR_SHARE),
    sampleBytes = SAMPLE_BYTES,
  } = options;
  const at =
    needle.length > ANCHOR_MAX_BYTES && text.length >= anchoredFrom
      ? anchorAt(text, needle, sampleBytes)
      : -1;
  if (at === -1) return firstTwoOfWhole(text, needle, 0);
  const anchor = needle.subarray(at, at + ANCHOR_MAX_BYTES);
  const found: number[] = [];
  let candidates = 0;
  for (let hit = text.indexOf(anchor, at); hit !== -1; hit = text.indexOf(anchor, hit + 1)) {
    const start = hit - at;
    if (++candidates > maxCandidates) {
      // Every earlier start was ruled out (no anchor there, or no match): the rest is searched whole.
      const [first, second] = firstTwoOfWhole(text, needle, start);
      return found.length === 1 ? [found[0]!, first] : [first, second];
    }
    if (start + needle.length <= text.length && needle.compare(text, start, start + needle.length) === 0) {
      found.push(start);
      if (found.length === 2) return [found[0]!, found[1]!];
    }
  }
  return [found[0] ?? -1, -1];
}

/** The first two occurrences of the whole needle from `from` on. */
function firstTwoOfWhole(text: Buffer, needle: Buffer, from: number): [number, number] {
  const first = text.indexOf(needle, from);
  return [first, first === -1 ? -1 : text.indexOf(needle, first + 1)];
}

/**
 * Where in `needle` its anchor starts: of the anchors that start at its rarest bytes in a sample of
 * `text`, the one the sample holds least often; -1 when none starts at a byte rare enough
 * (RARE_BYTE_SHARE), or the best occurs too often (MAX_ANCHOR_SHARE). The sample is SAMPLE_WINDOWS
 * windows spread over the text, and a byte is as common as in the window that holds it most: a byte
 * rare in the middle of a text but everywhere at its ends would stop memchr at nearly every byte.
 */
function anchorAt(text: Buffer, needle: Buffer, sampleBytes: number): number {
  const windowBytes = Math.max(1, Math.floor(sampleBytes / SAMPLE_WINDOWS));
  const windows = Array.from({ length: SAMPLE_WINDOWS }, (_, i) => {
    const middle = Math.floor(((i + 0.5) * text.length) / SAMPLE_WINDOWS);
    const from = Math.min(Math.max(0, middle - (windowBytes >> 1)), Math.max(0, text.length - windowBytes));
    return text.subarray(from, from + windowBytes);
  });
  const densest = new Uint32Array(256);
  const counts = new Uint32Array(256);
  for (const window of windows) {
    counts.fill(0);
    for (let i = 0; i < window.length; i++) counts[window[i]!]!++;
    for (let b = 0; b < 256; b++) if (counts[b]! > densest[b]!) densest[b] = counts[b]!;
  }
  const scope = Math.min(needle.length, ANCHOR_SCOPE_BYTES);
  const starts = Array.from({ length: scope }, (_, i) => i)
    .filter((i) => densest[needle[i]!]! * RARE_BYTE_SHARE <= windowBytes)
    .sort((a, b) => densest[needle[a]!]! - densest[needle[b]!]!)
    .slice(0, ANCHOR_TRIES);
  // Counted only up to one more than the sample may hold, or than the best so far.
  let fewest = Math.floor((windowBytes * SAMPLE_WINDOWS) / MAX_ANCHOR_SHARE) + 1;
  let best = -1;
  for (const start of starts) {
    const anchor = needle.subarray(start, start + ANCHOR_MAX_BYTES);
    let seen = 0;
    for (const window of windows)
      for (let i = window.indexOf(anchor); i !== -1 && seen < fewest; i = window.indexOf(anchor, i + 1))
        seen++;
    if (seen < fewest) {
      best = start;
      fewest = seen;
    }
    if (fewest === 0) break;
  }
  return best;
}
