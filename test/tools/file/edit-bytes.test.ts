import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, fileContext } from "./util.js";

/**
 * Edits of realistic files through the whole pipeline, each checked byte for byte on disk: bytes outside
 * what the model changed stay as they were, whatever rung found the match. The files are UTF-8 (BOM
 * included, which readFileSync keeps as U+FEFF), so comparing the decoded text compares every byte.
 */

const BOM = "\ufeff";

async function editFile(name: string, content: string, input: { old_string: string; new_string: string }) {
  const ctx = fileContext();
  const path = join(ctx.workingDir, name);
  writeFileSync(path, content);
  await call(ctx, "Read", { file_path: path });
  const result = await call(ctx, "Edit", { file_path: path, ...input });
  return { result, text: readFileSync(path, "utf8"), rung: result.metadata?.rung };
}

describe("Edit keeps the file's trailing whitespace on lines it matched leniently", () => {
  const readme = [
    "# Release notes",
    "",
    "Maintained by the platform team  ",
    "Contact: ops@example.com  ",
    "Office hours: Tuesdays",
    "",
    "## 2.0",
    "- Faster start-up",
    "",
  ].join("\n");

  it("changes one line of a README with hard breaks and keeps the others' two trailing spaces", async () => {
    const { result, text, rung } = await editFile("README.md", readme, {
      old_string: "Maintained by the platform team\nContact: ops@example.com\nOffice hours: Tuesdays",
      new_string: "Maintained by the platform team\nContact: ops@example.com\nOffice hours: Thursdays",
    });
    expect(result.isError).toBe(false);
    expect(rung).toBe("trailing-whitespace");
    expect(text).toBe(readme.replace("Office hours: Tuesdays", "Office hours: Thursdays"));
  });

  it("keeps the hard breaks around a line the model inserts", async () => {
    const { text } = await editFile("README.md", readme, {
      old_string: "Maintained by the platform team\nContact: ops@example.com\n",
      new_string: "Maintained by the platform team\nPager: +1 555 0100\nContact: ops@example.com\n",
    });
    expect(text).toBe(readme.replace("Contact:", "Pager: +1 555 0100\nContact:"));
  });
});

describe("Edit adds no final newline the file lacks", () => {
  const config = ["[server]", "port = 8080", "host = localhost"];
  const forms: Array<[string, string, string]> = [
    ["LF", "", "\n"],
    ["CRLF", "", "\r\n"],
    ["UTF-8 with BOM", BOM, "\n"],
    ["UTF-8 with BOM and CRLF", BOM, "\r\n"],
  ];
  for (const [form, bom, eol] of forms) {
    it(`edits the last line of a ${form} config that has no final newline`, async () => {
      const content = bom + config.join(eol);
      // The model copies the last line with a newline after it, the way most lines look.
      const { result, text } = await editFile("app.ini", content, {
        old_string: "port = 8080\nhost = localhost\n",
        new_string: "port = 9090\nhost = localhost\n",
      });
      expect(result.isError).toBe(false);
      expect(text).toBe(`${bom}[server]${eol}port = 9090${eol}host = localhost`);
    });

    it(`edits with the model's CRLFs the last line of a ${form} config that has no final newline`, async () => {
      const content = bom + config.join(eol);
      const { text } = await editFile("app.ini", content, {
        old_string: "host = localhost\r\n",
        new_string: "host = 0.0.0.0\r\n",
      });
      expect(text).toBe(`${bom}[server]${eol}port = 8080${eol}host = 0.0.0.0`);
    });
  }

  it("still lets the model join the last line away when new_string drops the newline", async () => {
    const { text } = await editFile("app.ini", config.join("\n"), {
      old_string: "port = 8080\nhost = localhost\n",
      new_string: "port = 8080",
    });
    expect(text).toBe("[server]\nport = 8080");
  });

  it("keeps a final newline the file has", async () => {
    const { text } = await editFile("app.ini", `${config.join("\n")}  \n`, {
      old_string: "host = localhost\n",
      new_string: "host = 0.0.0.0\n",
    });
    expect(text).toBe("[server]\nport = 8080\nhost = 0.0.0.0\n");
  });
});

describe("Edit compares indentation by level, tabs and spaces alike", () => {
  const go = [
    "package main",
    "",
    'import "fmt"',
    "",
    "func main() {",
    "\tfor i := 0; i < 3; i++ {",
    "\t\tfmt.Println(i)",
    "\t",
    "\t}",
    "}",
    "",
  ].join("\n");

  it("edits a Go file from a string indented with four spaces, writing tabs", async () => {
    const { result, text, rung } = await editFile("main.go", go, {
      old_string: "    for i := 0; i < 3; i++ {\n        fmt.Println(i)\n\n    }\n",
      new_string:
        "    for i := 0; i < 3; i++ {\n        if i > 0 {\n            fmt.Println(i)\n        }\n\n    }\n",
    });
    expect(result.isError).toBe(false);
    expect(rung).toBe("indentation-level");
    expect(result.text).toContain("Matched after comparing indentation by level");
    // The blank line the model kept keeps the file's lone tab.
    expect(text).toBe(go.replace("\t\tfmt.Println(i)\n", "\t\tif i > 0 {\n\t\t\tfmt.Println(i)\n\t\t}\n"));
  });

  const makefile = [
    ".PHONY: build test",
    "",
    "build:",
    "\tgo build ./...",
    "",
    "test: build",
    "\tgo test ./...",
    "",
  ].join("\n");

  it("keeps a Makefile recipe's tab when the model types spaces", async () => {
    const { result, text, rung } = await editFile("Makefile", makefile, {
      old_string: "test: build\n    go test ./...\n",
      new_string: "test: build\n    go vet ./...\n    go test -race ./...\n",
    });
    expect(result.isError).toBe(false);
    expect(rung).toBe("indentation-level");
    expect(text).toBe(makefile.replace("\tgo test ./...\n", "\tgo vet ./...\n\tgo test -race ./...\n"));
  });

  it("accepts eight spaces for a tab and keeps alignment spaces after the tabs", async () => {
    const c = "int f(void)\n{\n\treturn g(a,\n\t         b);\n}\n";
    const { text, rung } = await editFile("f.c", c, {
      old_string: "        return g(a,\n                 b);",
      new_string: "        return g(a,\n                 b,\n                 c);",
    });
    expect(rung).toBe("indentation-level");
    expect(text).toBe("int f(void)\n{\n\treturn g(a,\n\t         b,\n\t         c);\n}\n");
  });

  it("writes spaces into a space-indented Python file when the model types tabs", async () => {
    const py = "def run():\n    if ready:\n        go()\n    return 0\n";
    const { text, rung } = await editFile("run.py", py, {
      old_string: "\tif ready:\n\t\tgo()\n",
      new_string: "\tif ready:\n\t\tgo()\n\t\tlog()\n",
    });
    expect(rung).toBe("indentation-level");
    expect(text).toBe("def run():\n    if ready:\n        go()\n        log()\n    return 0\n");
  });

  const handler = [
    "func load(path string) error {",
    "\tdata, err := os.ReadFile(path)",
    "\tif err != nil {",
    "\t\treturn err",
    "\t}",
    "\treturn parse(data)",
    "}",
    "",
  ].join("\n");

  it("takes old_string starting mid-line, at the text, with spaces for the tabs below", async () => {
    const { result, text, rung } = await editFile("load.go", handler, {
      old_string: "if err != nil {\n        return err\n    }",
      new_string: 'if err != nil {\n        return fmt.Errorf("load %s: %w", path, err)\n    }',
    });
    expect(result.isError).toBe(false);
    expect(rung).toBe("indentation-level");
    expect(text).toBe(handler.replace("\t\treturn err", '\t\treturn fmt.Errorf("load %s: %w", path, err)'));
  });

  it("writes a changed mid-line first line after the file's indentation", async () => {
    const { text } = await editFile("load.go", handler, {
      old_string: "data, err := os.ReadFile(path)\n    if err != nil {",
      new_string: "data, err := readAll(path)\n    if err != nil {",
    });
    expect(text).toBe(handler.replace("os.ReadFile(path)", "readAll(path)"));
  });

  it("takes a dedented copy typed with spaces, and indents new lines to the file's depth", async () => {
    const { text, rung } = await editFile("load.go", handler, {
      old_string: "if err != nil {\n    return err\n}",
      new_string: "if err != nil {\n    log.Print(err)\n    return err\n}",
    });
    expect(rung).toBe("indentation-level");
    expect(text).toBe(handler.replace("\t\treturn err", "\t\tlog.Print(err)\n\t\treturn err"));
  });

  it("refuses when the spaces-for-tabs match is not unique", async () => {
    const twice = "a:\n\techo x\nb:\n\techo x\n";
    const { result, text } = await editFile("Makefile", twice, {
      old_string: "    echo x",
      new_string: "    echo y",
    });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/matches 2 places .*comparing indentation by level.*lines 2, 4/s);
    expect(text).toBe(twice);
  });

  it("refuses when the depths differ on one line", async () => {
    const { result } = await editFile("main.go", go, {
      old_string: "    for i := 0; i < 3; i++ {\n    fmt.Println(i)",
      new_string: "x",
    });
    expect(result.isError).toBe(true);
    expect(result.text).toContain("not found");
  });
});

describe("Edit matches ASCII typed for no-break spaces, dashes and ellipses", () => {
  const notes = [
    "# Pricing \u2014 2024",
    "",
    "The base plan costs 10\u00a0\u20ac per month\u2026 billed yearly.",
    "Pages 10\u201320 cover the co\u2011operative discount.",
    "",
  ].join("\n");

  it("edits Markdown and keeps the file's NBSP, dashes and ellipsis where the model kept the text", async () => {
    const { result, text, rung } = await editFile("pricing.md", notes, {
      old_string:
        "The base plan costs 10 \u20ac per month... billed yearly.\nPages 10-20 cover the co-operative discount.",
      new_string:
        "The base plan costs 12 \u20ac per month... billed yearly.\nPages 10-20 cover the co-operative discount.",
    });
    expect(result.isError).toBe(false);
    expect(rung).toBe("look-alikes");
    expect(text).toBe(notes.replace("costs 10\u00a0", "costs 12\u00a0"));
  });

  it("takes -- for an em dash", async () => {
    const { text, rung } = await editFile("pricing.md", notes, {
      old_string: "# Pricing -- 2024",
      new_string: "# Pricing -- 2025",
    });
    expect(rung).toBe("look-alikes");
    expect(text).toBe(notes.replace("2024", "2025"));
  });

  const ts = [
    "/**",
    " * Retries the request \u2014 at most three times \u2014 then gives up.",
    " */",
    'export const SAVE_LABEL = "Save\u00a0changes";',
    "",
  ].join("\n");

  it("edits a TypeScript comment and keeps both em dashes and the NBSP in the string below", async () => {
    const { result, text } = await editFile("retry.ts", ts, {
      old_string:
        ' * Retries the request - at most three times - then gives up.\n */\nexport const SAVE_LABEL = "Save changes";',
      new_string:
        ' * Retries the request - at most five times - then gives up.\n */\nexport const SAVE_LABEL = "Save changes";',
    });
    expect(result.isError).toBe(false);
    expect(text).toBe(ts.replace("three", "five"));
  });

  it("writes text the model adds as typed", async () => {
    const { text } = await editFile("retry.ts", ts, {
      old_string: 'export const SAVE_LABEL = "Save changes";',
      new_string: 'export const SAVE_LABEL = "Save changes";\nexport const UNDO_LABEL = "Undo - last";',
    });
    expect(text).toBe(`${ts.slice(0, -1)}\nexport const UNDO_LABEL = "Undo - last";\n`);
  });

  it("refuses when the look-alike match is not unique", async () => {
    const twice = "a \u2013 b\nc\na \u2014 b\n";
    const { result, text } = await editFile("t.md", twice, { old_string: "a - b", new_string: "x" });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/matches 2 places .*look-alikes.*lines 1, 3/s);
    expect(text).toBe(twice);
  });

  it("refuses two kinds of drift at once, and the hint still finds the region", async () => {
    const go = "func f() {\n\t// Retry \u2014 at most twice\n\treturn nil\n}\n";
    const { result, text } = await editFile("f.go", go, {
      old_string: "    // Retry -- at most twice\n    return nil",
      new_string: "    return err",
    });
    expect(result.isError).toBe(true);
    expect(result.text).toContain("The closest text in the file is at lines 2-3");
    expect(text).toBe(go);
  });
});
