/**
 * The built-in search runs patterns as JavaScript regular expressions, without the `u` flag so that
 * needless escapes such as `\:` or `\-` stay legal as they are in rg. Differences from ripgrep's syntax:
 * - Translated: a leading inline flag group such as `(?i)`, `(?s)` or `(?is)`; `(?P<name>...)` named
 *   groups; `\A` and `\z` (start and end of the text).
 * - Not available: other inline flags (`(?x)` verbose mode, flags in the middle of a pattern), Unicode
 *   classes like `\p{Greek}` without the `u` flag, `[[:alpha:]]` POSIX classes.
 * - Accepted here but refused by rg: look-around (`(?=`, `(?<!`) and back-references (`\1`).
 * Like rg, `^` and `$` match at every line start and end.
 */
import { InputError } from "../core/errors.js";

const LEADING_FLAGS = /^\(\?([imsU]+)\)/;

/** Translates an rg-style pattern; throws InputError with the engine's reason when it is not valid. */
export function toJsRegExp(pattern: string, options: { ignoreCase: boolean; multiline: boolean }): RegExp {
  let source = pattern;
  const flags = new Set(["g", "m"]);
  if (options.ignoreCase) flags.add("i");
  if (options.multiline) flags.add("s");
  const leading = LEADING_FLAGS.exec(source);
  if (leading) {
    for (const f of leading[1]!) if (f === "i" || f === "s") flags.add(f);
    source = source.slice(leading[0].length);
  }
  source = source
    .replace(/\(\?P</g, "(?<")
    .replace(/(^|[^\\])\\A/g, "$1(?<![\\s\\S])")
    .replace(/(^|[^\\])\\z/g, "$1(?![\\s\\S])");
  if (!options.multiline && /\n|(^|[^\\])\\n/.test(source)) {
    throw new InputError("The pattern contains a line break: set multiline: true to match across lines.");
  }
  try {
    return new RegExp(source, [...flags].join(""));
  } catch (error) {
    throw new InputError(
      `The pattern is not a valid regular expression: ${(error as Error).message}\n` +
        "Escape special characters with a backslash (e.g. \\( or \\.) to match them literally.",
    );
  }
}
