/**
 * Finds where JSON text first goes wrong, with a reason, for error messages that point at the spot.
 * Node's JSON.parse does not always report a position, so this scans the text itself. Returns undefined
 * when the text is valid.
 */
export function locateJsonError(text: string): { offset: number; reason: string } | undefined {
  let i = 0;
  const fail = (reason: string): never => {
    throw { offset: i, reason };
  };
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail("unexpected character");
  };
  const string = () => {
    i++;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c === "\\") {
        i++;
        if (!'"\\/bfnrtu'.includes(text[i] ?? "")) fail("invalid escape in a string");
        if (text[i] === "u" && !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail("invalid \\u escape");
      } else if (c < " ") fail("unescaped control character in a string");
      i++;
    }
    fail("unterminated string");
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) fail("invalid number");
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") container("}", true);
    else if (c === "[") container("]", false);
    else if (c === '"') string();
    else if (c === "t") literal("true");
    else if (c === "f") literal("false");
    else if (c === "n") literal("null");
    else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) number();
    else fail(c === undefined ? "unexpected end of text" : `unexpected character ${JSON.stringify(c)}`);
  };
  const container = (close: string, object: boolean): void => {
    i++;
    ws();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (object) {
        if (text[i] !== '"') fail(text[i] === close ? "trailing comma" : "expected a quoted key");
        string();
        ws();
        if (text[i] !== ":") fail("expected ':' after a key");
        i++;
      } else if (text[i] === close) fail("trailing comma");
      value();
      ws();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === close) {
        i++;
        return;
      }
      fail(`expected ',' or '${close}'`);
    }
  };
  try {
    value();
    ws();
    if (i < text.length) fail("unexpected text after the end");
    return undefined;
  } catch (error) {
    return error as { offset: number; reason: string };
  }
}
