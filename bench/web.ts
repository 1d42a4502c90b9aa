/**
 * WebFetch through the whole pipeline (runTool, in process) turning a 2 MB documentation page from a
 * loopback server into Markdown, against curl fetching the same bytes. Each run asks for a new URL, so
 * the session's page cache never answers.
 */
import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createToolContext } from "../src/context.js";
import { ToolResult } from "../src/core/result.js";
import { Session } from "../src/core/session.js";
import { runTool } from "../src/executor/run.js";
import { emptySettings } from "../src/settings/types.js";
import { type Bench, timePair } from "./lib.js";

const PAGE_BYTES = 2 * 1024 * 1024;
// Asynchronous: the server answering curl runs in this process.
const run = promisify(execFile);

/** The test fixture's article repeated into one long page, with its navigation, ads and scripts around it. */
function bigPage(): string {
  const page = readFileSync(new URL("../test/fixtures/web/docs-page.html", import.meta.url), "utf8");
  const [head, rest] = page.split('<article class="doc">') as [string, string];
  const [article, tail] = rest.split("</article>") as [string, string];
  const sections: string[] = [];
  let size = head.length + tail.length;
  for (let i = 0; size < PAGE_BYTES; i++) {
    const section = article.replaceAll("<h1>", `<h2 id="s${i}">`).replaceAll("</h1>", "</h2>");
    sections.push(section);
    size += section.length;
  }
  return `${head}<article class="doc"><h1>The whole manual</h1>${sections.join("")}</article>${tail}`;
}

const bench: Bench = async (report) => {
  const html = bigPage();
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const dir = join(tmpdir(), `cc-tools-bench-web-${process.pid}`);
  const session = new Session({ dir });
  const ctx = createToolContext({
    workingDir: tmpdir(),
    permissionMode: "default",
    session,
    config: { ...emptySettings(tmpdir()), env: { ANTHROPIC_API_KEY: "", ANTHROPIC_AUTH_TOKEN: "" } },
    rules: [{ rule: "WebFetch(domain:127.0.0.1)", behavior: "allow", source: { scope: "cli", root: "/" } }],
  });
  let n = 0;
  try {
    const times = await timePair(
      async () => {
        const result = await runTool(
          "WebFetch",
          { url: `http://127.0.0.1:${port}/manual?run=${n++}`, prompt: "" },
          ctx,
        );
        if (result.isError || !ToolResult.text(result).includes("# The whole manual")) {
          throw new Error(`bench: WebFetch failed: ${ToolResult.text(result).slice(0, 300)}`);
        }
      },
      () => run("curl", ["-s", "-o", "/dev/null", `http://127.0.0.1:${port}/manual`]),
      5,
      1,
    );
    report({
      name: `WebFetch a ${PAGE_BYTES / (1024 * 1024)} MB HTML page into Markdown (loopback)`,
      baseline: "curl (bytes only)",
      ...times,
      note: "Readability + turndown on linkedom",
    });
  } finally {
    server.close();
    await session.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
