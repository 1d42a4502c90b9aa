import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createToolContext } from "../../src/context.js";
import type { PermissionMode } from "../../src/core/permission-level.js";
import { type ContextFactory, createToolSession } from "../../src/mcp/server.js";
import type { PermissionRuleEntry } from "../../src/permissions/types.js";
import { emptySettings } from "../../src/settings/types.js";
import { tempDir } from "../helpers/context.js";

// The three kinds of MCP client a server meets, as real SDK clients in memory: one without elicitation
// (most editors, and Claude Code headless before it declared it), one that cancels every question at once
// (`claude -p`), and one whose user answers.

// The refusals below are logged as warnings on purpose; one test reads them, the rest need not print them.
process.env.CC_TOOLS_LOG = "silent";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface Question {
  message: string;
  schema: { properties: Record<string, { enum?: string[] }> };
}
type Answer = { action: "accept" | "decline" | "cancel"; content?: Record<string, string> };

/** The rules alone judge here: with the OS sandbox on, a sandboxed command would need no approval. */
function rulesOnly(dir: string) {
  const config = emptySettings(dir);
  config.sandbox.enabled = false;
  return config;
}

function factory(
  workingDir: string,
  options: { mode?: PermissionMode; approvesCalls?: boolean; rules?: PermissionRuleEntry[] } = {},
): ContextFactory {
  return (session, host) =>
    createToolContext({
      workingDir,
      session,
      host,
      permissionMode: options.mode ?? "default",
      rules: options.rules,
      config: rulesOnly(workingDir),
      mcpClient: { approvesCalls: options.approvesCalls ?? true },
    });
}

async function connect(makeContext: ContextFactory, answer?: (q: Question) => Answer | Promise<Answer>) {
  const session = createToolSession(makeContext, undefined);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await session.server.connect(serverSide);
  const client = new Client(
    { name: "test", version: "1" },
    { capabilities: answer ? { elicitation: { form: {} } } : {} },
  );
  if (answer) {
    client.setRequestHandler("elicitation/create", (request) => {
      const params = request.params as unknown as { message: string; requestedSchema: Question["schema"] };
      return answer({ message: params.message, schema: params.requestedSchema });
    });
  }
  await client.connect(clientSide);
  cleanups.push(async () => {
    await client.close();
    await session.dispose();
  });
  return client;
}

const text = (result: { content?: unknown }) =>
  ((result.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? "").join("\n");

function rule(text: string, behavior: PermissionRuleEntry["behavior"], root: string): PermissionRuleEntry {
  return { rule: text, behavior, source: { scope: "cli", root } };
}

describe("one consent: the client's approval counts inside the workspace", () => {
  it("a client without elicitation: edits and commands inside run, the rest is refused saying who to ask", async () => {
    const dir = tempDir();
    const outside = tempDir("cc-tools-outside-");
    const client = await connect(factory(dir, { rules: [rule("Bash(rm:*)", "deny", dir)] }));

    const bash = await client.callTool({ name: "Bash", arguments: { command: "touch made && echo ok" } });
    expect(text(bash)).toContain("ok");
    expect(existsSync(join(dir, "made"))).toBe(true);
    const write = await client.callTool({
      name: "Write",
      arguments: { file_path: join(dir, "new.txt"), content: "hi\n" },
    });
    expect(write.isError).toBeFalsy();
    expect(readFileSync(join(dir, "new.txt"), "utf8")).toBe("hi\n");

    const far = join(outside, "far.txt");
    const logged: string[] = [];
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      logged.push(String(chunk));
      return true;
    });
    process.env.CC_TOOLS_LOG = "warn";
    const refused = await client
      .callTool({ name: "Write", arguments: { file_path: far, content: "x" } })
      .finally(() => {
        stderr.mockRestore();
        process.env.CC_TOOLS_LOG = "silent";
      });
    // The configuration advice is for the person running the server: in its log, with where to put it.
    expect(logged.join("")).toMatch(
      /refused Write: .*far\.txt.*permissions\.allow in .*settings\.local\.json.*--allow 'Edit\(/,
    );
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain("no user could be asked");
    expect(text(refused)).toMatch(/Ask the user to allow `Edit\(.*far\.txt\)`/);
    expect(text(refused)).not.toContain("--allow"); // configuration advice goes to the log, not the model
    expect(existsSync(far)).toBe(false);

    const redirected = await client.callTool({
      name: "Bash",
      arguments: { command: `echo x > ${join(outside, "r.txt")}` },
    });
    expect(redirected.isError).toBe(true);
    expect(existsSync(join(outside, "r.txt"))).toBe(false);

    for (const control of [".mcp.json", ".claude/settings.json", ".git/config"]) {
      const result = await client.callTool({
        name: "Write",
        arguments: { file_path: join(dir, control), content: "{}" },
      });
      expect(result.isError, control).toBe(true);
      expect(existsSync(join(dir, control)), control).toBe(false);
    }
    const sneaky = await client.callTool({ name: "Bash", arguments: { command: "echo '{}' > .mcp.json" } });
    expect(sneaky.isError).toBe(true);
    expect(existsSync(join(dir, ".mcp.json"))).toBe(false);

    writeFileSync(join(dir, "keep"), "k");
    const denied = await client.callTool({ name: "Bash", arguments: { command: "rm keep" } });
    expect(text(denied)).toContain("Bash(rm:*)");
    expect(existsSync(join(dir, "keep"))).toBe(true);
  });

  it("ask rules and reads outside the workspace still need a person", async () => {
    const dir = tempDir();
    const outside = tempDir("cc-tools-outside-");
    writeFileSync(join(outside, "secret.txt"), "s");
    const client = await connect(factory(dir, { rules: [rule("Bash(git push:*)", "ask", dir)] }));
    const push = await client.callTool({ name: "Bash", arguments: { command: "git push origin main" } });
    expect(push.isError).toBe(true);
    expect(text(push)).toContain("Bash(git push:*)");
    expect(text(push)).toContain("no user could be asked");
    const read = await client.callTool({
      name: "Read",
      arguments: { file_path: join(outside, "secret.txt") },
    });
    expect(read.isError).toBe(true);
    expect(text(read)).toMatch(/Ask the user to allow `Read\(/);
  });

  it("--permission-mode (no client approval) keeps asking for every edit and command", async () => {
    const dir = tempDir();
    const client = await connect(factory(dir, { approvesCalls: false }));
    const bash = await client.callTool({ name: "Bash", arguments: { command: "touch made" } });
    expect(bash.isError).toBe(true);
    expect(text(bash)).toContain("Ask the user to allow `Bash(touch made)`");
    expect(existsSync(join(dir, "made"))).toBe(false);
  });

  it("a client that cancels at once is reported as nobody asked, not as the user's dismissal", async () => {
    const dir = tempDir();
    const questions: Question[] = [];
    const client = await connect(factory(dir), (q) => {
      questions.push(q);
      return { action: "cancel" };
    });
    const outside = join(tempDir("cc-tools-outside-"), "x.txt");
    const result = await client.callTool({ name: "Write", arguments: { file_path: outside, content: "x" } });
    expect(questions).toHaveLength(1);
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("no user could be asked");
    expect(text(result)).toContain("cancelled the question at once");
    expect(text(result)).not.toMatch(/dismissed/);
    expect(existsSync(outside)).toBe(false);
  });

  it("a client whose user answers sees the change in words and chooses among the four answers", async () => {
    const dir = tempDir();
    const outsideDir = tempDir("cc-tools-outside-");
    const target = join(outsideDir, "notes.txt");
    writeFileSync(target, "alpha\nbeta\n");
    const questions: Question[] = [];
    const answers = ["Deny", "Allow for this session"];
    const client = await connect(factory(dir), (q) => {
      questions.push(q);
      return { action: "accept", content: { decision: answers.shift() ?? "Deny" } };
    });
    // Reading outside the workspace is asked too: answered for the session.
    answers.unshift("Allow once");
    const read = await client.callTool({ name: "Read", arguments: { file_path: target } });
    expect(text(read)).toContain("alpha");

    const edit = { file_path: target, old_string: "beta", new_string: "gamma" };
    const denied = await client.callTool({ name: "Edit", arguments: edit });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toContain("the user denied it");
    expect(readFileSync(target, "utf8")).toBe("alpha\nbeta\n");

    const allowed = await client.callTool({ name: "Edit", arguments: edit });
    expect(allowed.isError).toBeFalsy();
    expect(readFileSync(target, "utf8")).toBe("alpha\ngamma\n");

    const question = questions[1]!;
    expect(question.message).toContain(`Change ${target}`);
    expect(question.message).toContain("- beta");
    expect(question.message).toContain("+ gamma");
    expect(question.message).not.toMatch(/[{}]|allow_once|old_string/);
    expect(question.schema.properties.decision!.enum).toEqual([
      "Allow once",
      "Allow for this session",
      "Always allow in this project",
      "Deny",
    ]);
    // "for this session" holds: the same change again is not asked.
    const again = await client.callTool({
      name: "Edit",
      arguments: { file_path: target, old_string: "gamma", new_string: "delta" },
    });
    expect(again.isError).toBeFalsy();
    expect(questions).toHaveLength(3);
  });

  it("calls after one that waits for its user's answer do not wait with it", async () => {
    const dir = tempDir();
    const target = join(tempDir("cc-tools-outside-"), "later.txt");
    let answer!: (a: Answer) => void;
    const client = await connect(factory(dir), () => new Promise<Answer>((resolve) => (answer = resolve)));
    const waiting = client.callTool({ name: "Write", arguments: { file_path: target, content: "x" } });
    const next = await client.callTool({
      name: "Write",
      arguments: { file_path: join(dir, "b.txt"), content: "b" },
    });
    expect(next.isError).toBeFalsy();
    expect(existsSync(target)).toBe(false);
    answer({ action: "accept", content: { decision: "Allow once" } });
    expect((await waiting).isError).toBeFalsy();
    expect(readFileSync(target, "utf8")).toBe("x");
  });

  it("a command question shows the command, not JSON", async () => {
    const dir = tempDir();
    const questions: Question[] = [];
    const client = await connect(factory(dir, { approvesCalls: false }), (q) => {
      questions.push(q);
      return { action: "decline" };
    });
    const result = await client.callTool({
      name: "Bash",
      arguments: { command: "npm test", description: "Run the tests" },
    });
    expect(text(result)).toContain("the user declined it");
    expect(questions[0]!.message).toContain("    npm test");
    expect(questions[0]!.message).toContain("(Run the tests)");
    expect(questions[0]!.message).not.toMatch(/[{}"]/);
  });

  it("an Edit of a file read with the client's own Read says which Read counts", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "src", "a.ts"), "x\n");
    const client = await connect(factory(dir));
    const result = await client.callTool({
      name: "Edit",
      arguments: { file_path: join(dir, "src", "a.ts"), old_string: "x", new_string: "y" },
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("has not been read");
    expect(text(result)).toContain("this MCP server's Read tool");
  });
});
