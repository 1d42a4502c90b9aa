import { spilledPreview } from "../core/spill.js";
import { MAX_OUTPUT_FILE_BYTES, type OutputSnapshot } from "./capture.js";

/** Leading blank lines and trailing whitespace carry nothing for the model. */
const LEADING_BLANK_LINES = /^(?:[ \t]*\r?\n)+/;

/** The output as the model sees it: whole, or head and tail with the path of the file holding all of it. */
export function renderOutput(output: OutputSnapshot): string {
  if (output.whole !== undefined || output.file === undefined)
    return (output.whole ?? output.head).replace(LEADING_BLANK_LINES, "").trimEnd();
  const preview = spilledPreview(
    output.head.replace(LEADING_BLANK_LINES, ""),
    output.tail.trimEnd(),
    output.totalChars,
    output.file,
  );
  return output.fileComplete
    ? preview
    : `${preview}\n(The file holds only the first ${MAX_OUTPUT_FILE_BYTES / 1024 / 1024} MB of the output.)`;
}
