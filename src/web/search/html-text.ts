import { parseHTML } from "linkedom";

/** The text of an HTML fragment (a snippet with <strong> marks and entities), whitespace collapsed. */
export function htmlText(fragment: string): string {
  if (!/[<&]/.test(fragment)) return fragment.replace(/\s+/g, " ").trim();
  const { document } = parseHTML(`<!doctype html><html><body>${fragment}</body></html>`);
  return (document.body.textContent ?? "").replace(/\s+/g, " ").trim();
}
