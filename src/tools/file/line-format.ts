/** Read's line format, shared by every tool that shows file lines: `<number>\t<text>`. */

/** Lines longer than this are cut, so one minified line cannot flood the context. */
export const MAX_LINE_CHARS = 2000;

/** `length` is the line's full length when `text` holds only its start (a line streamed from a huge file). */
export function formatLine(text: string, number: number, length = text.length): string {
  if (length <= MAX_LINE_CHARS) return `${number}\t${text}`;
  const cut = length - MAX_LINE_CHARS;
  return `${number}\t${text.slice(0, MAX_LINE_CHARS)}... [line cut: ${cut} more characters; use Grep or Bash to see all of it]`;
}

/** The length of `formatLine(text, number, length)` for a line of `length` characters, without building it. */
export function formattedLength(number: number, length: number): number {
  if (length <= MAX_LINE_CHARS) return String(number).length + 1 + length;
  return formatLine("", number, length).length + MAX_LINE_CHARS;
}

export function formatNumberedLines(lines: readonly string[], firstLine: number): string {
  return lines.map((text, i) => formatLine(text, firstLine + i)).join("\n");
}
