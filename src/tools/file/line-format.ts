/** Read's line format, shared by every tool that shows file lines: `<number>\t<text>`. */

/** Lines longer than this are cut, so one minified line cannot flood the context. */
export const MAX_LINE_CHARS = 2000;

export function formatLine(text: string, number: number): string {
  if (text.length <= MAX_LINE_CHARS) return `${number}\t${text}`;
  const cut = text.length - MAX_LINE_CHARS;
  return `${number}\t${text.slice(0, MAX_LINE_CHARS)}... [line cut: ${cut} more characters; use Grep or Bash to see all of it]`;
}

export function formatNumberedLines(lines: readonly string[], firstLine: number): string {
  return lines.map((text, i) => formatLine(text, firstLine + i)).join("\n");
}
