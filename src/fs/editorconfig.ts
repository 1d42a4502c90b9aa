import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import picomatch from "picomatch";
import { DEFAULT_FORMAT, type Encoding, type TextFormat } from "./codec.js";

/**
 * The format of a file the tools create, from the .editorconfig files above it (`end_of_line`, `charset`).
 * Existing files keep their own format; this only decides the bytes of new ones.
 */

type NewFileFormat = Pick<TextFormat, "encoding" | "bom" | "newline">;

const CHARSETS: Record<string, { encoding: Encoding; bom: boolean }> = {
  "utf-8": { encoding: "utf8", bom: false },
  "utf-8-bom": { encoding: "utf8", bom: true },
  "utf-16le": { encoding: "utf16le", bom: true },
  "utf-16be": { encoding: "utf16be", bom: true },
  latin1: { encoding: "latin1", bom: false },
};

interface Section {
  glob: string;
  props: Record<string, string>;
}

function parse(text: string): { root: boolean; sections: Section[] } {
  let root = false;
  const sections: Section[] = [];
  let current: Section | undefined;
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.*)\]$/.exec(line);
    if (header) {
      current = { glob: header[1]!, props: {} };
      sections.push(current);
      continue;
    }
    const eq = line.indexOf("=");
    if (eq === -1) continue;
    const key = line.slice(0, eq).trim().toLowerCase();
    const value = line
      .slice(eq + 1)
      .trim()
      .toLowerCase();
    if (current) current.props[key] = value;
    else if (key === "root") root = value === "true";
  }
  return { root, sections };
}

/** EditorConfig globs without a slash match the name in any directory below the file's directory. */
function matches(glob: string, configDir: string, file: string): boolean {
  const pattern = glob.includes("/") ? glob.replace(/^\//, "") : `**/${glob}`;
  return picomatch(pattern, { dot: true })(relative(configDir, file).split("\\").join("/"));
}

function readConfig(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** The properties that apply to `file`, nearest .editorconfig winning. */
function propertiesFor(file: string): Record<string, string> {
  const layers: Array<Record<string, string>> = [];
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const text = readConfig(join(dir, ".editorconfig"));
    if (text !== undefined) {
      const { root, sections } = parse(text);
      const layer: Record<string, string> = {};
      for (const s of sections) if (matches(s.glob, dir, file)) Object.assign(layer, s.props);
      layers.push(layer);
      if (root) break;
    }
    if (dirname(dir) === dir) break;
  }
  return Object.assign({}, ...layers.reverse());
}

export function newFileFormat(file: string): NewFileFormat {
  const props = propertiesFor(file);
  const charset = CHARSETS[props.charset ?? ""];
  const eol = props.end_of_line;
  return {
    encoding: charset?.encoding ?? DEFAULT_FORMAT.encoding,
    bom: charset?.bom ?? DEFAULT_FORMAT.bom,
    newline: eol === "crlf" ? "\r\n" : eol === "cr" ? "\r" : eol === "lf" ? "\n" : DEFAULT_FORMAT.newline,
  };
}
