import { InputError, ToolError } from "../../core/errors.js";

/** PDF text per page, with page markers. pdf-parse (and pdf.js under it) is loaded only when a PDF is read. */

/** Most pages one Read returns; larger documents are read in ranges with `pages`. */
export const MAX_PDF_PAGES_PER_READ = 20;

/** Parses `pages` ("3", "1-5", "1,3,7-9") into ascending page numbers. */
export function parsePageRanges(spec: string): number[] {
  const pages = new Set<number>();
  for (const part of spec.split(",").map((p) => p.trim())) {
    const match = /^(\d+)(?:\s*-\s*(\d+))?$/.exec(part);
    const first = Number(match?.[1]);
    const last = Number(match?.[2] ?? match?.[1]);
    if (!match || first < 1 || last < first) {
      throw new InputError(
        `pages "${spec}" is not a page range: use forms like "3", "1-5" or "1,3,7-9" (pages count from 1).`,
      );
    }
    for (let p = first; p <= last; p++) pages.add(p);
  }
  return [...pages].sort((a, b) => a - b);
}

export interface PdfText {
  text: string;
  totalPages: number;
}

/** pdf.js's own failures (a broken or locked file) as errors that say what to do instead. */
function unreadable(path: string, error: unknown): ToolError {
  const { name, message } = error as Error;
  if (name === "PasswordException") {
    return new ToolError(
      `${path} is password-protected, so its text cannot be read. Decrypt it first (e.g. qpdf --decrypt with the password) and Read the copy.`,
    );
  }
  return new ToolError(
    `${path} starts like a PDF but cannot be parsed (${message}): it is probably truncated or corrupt. ` +
      "Check it with Bash (file, ls -l), or try another extractor such as pdftotext.",
  );
}

async function extract(
  parser: InstanceType<typeof import("pdf-parse")["PDFParse"]>,
  pagesSpec: string | undefined,
): Promise<PdfText> {
  const { total } = await parser.getInfo();
  const requested = pagesSpec === undefined ? undefined : parsePageRanges(pagesSpec);
  const beyond = requested?.filter((p) => p > total) ?? [];
  if (beyond.length > 0)
    throw new InputError(
      `The PDF has ${total} pages; page ${beyond[0]} does not exist. Ask for pages 1-${total}.`,
    );
  if (requested && requested.length > MAX_PDF_PAGES_PER_READ) {
    throw new InputError(
      `Ask for at most ${MAX_PDF_PAGES_PER_READ} pages per Read (you asked for ${requested.length}).`,
    );
  }
  const pages = requested ?? Array.from({ length: Math.min(total, MAX_PDF_PAGES_PER_READ) }, (_, i) => i + 1);
  const result = await parser.getText({ partial: pages, pageJoiner: "" });
  const parts = result.pages.map(
    (p) =>
      `--- Page ${p.num} of ${total} ---\n${p.text.trim() || "[no extractable text on this page: it may be a scanned image]"}`,
  );
  if (!requested && total > pages.length) {
    parts.push(
      `[Pages 1-${pages.length} of ${total} shown. Read the rest with pages, e.g. pages: "${pages.length + 1}-${Math.min(total, 2 * pages.length)}".]`,
    );
  }
  return { text: parts.join("\n\n"), totalPages: total };
}

export async function pdfText(path: string, bytes: Buffer, pagesSpec: string | undefined): Promise<PdfText> {
  const { PDFParse } = await import("pdf-parse");
  const parser = new PDFParse({ data: new Uint8Array(bytes) });
  try {
    return await extract(parser, pagesSpec);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw unreadable(path, error);
  } finally {
    await parser.destroy();
  }
}
