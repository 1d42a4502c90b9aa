import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type StandIn, startStandIn, text, toolCall } from "../agent/standin.js";
import { tempDir } from "../helpers/context.js";
import { CLI } from "./cli.js";

/** The interactive agent as a person uses it: in a real terminal (tmux), typing and reading the screen. */

const sessions: string[] = [];
const stands: StandIn[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) {
    try {
      execFileSync("tmux", ["kill-session", "-t", s], { stdio: "ignore" });
    } catch {
      // already gone
    }
  }
  while (stands.length > 0) await stands.pop()!.close();
});

const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });
const screen = (name: string) => tmux("capture-pane", "-p", "-t", name, "-S", "-200");
const alive = (name: string) => {
  try {
    tmux("has-session", "-t", name);
    return true;
  } catch {
    return false;
  }
};

async function waitFor(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Starts `cc-tools agent` on the stand-in in a new tmux session and waits for its prompt; returns the session. */
async function startAgent(stand: StandIn, dir: string): Promise<string> {
  const name = `cc-agent-${process.pid}-${Date.now()}`;
  sessions.push(name);
  const command = [
    `ANTHROPIC_API_KEY=test-key ANTHROPIC_BASE_URL=${stand.url} CC_TOOLS_LOG=silent CLAUDE_CONFIG_DIR=${join(dir, ".home")}`,
    `${process.execPath} ${CLI} agent --cwd ${dir}`,
  ].join(" ");
  tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "50", command);
  // tmux trims the prompt's trailing space.
  await waitFor(
    () =>
      screen(name)
        .split("\n")
        .some((line) => line.trim() === ">"),
    "the prompt",
  );
  return name;
}

describe("cc-tools agent (interactive, in tmux)", () => {
  it("streams the answer, asks before a write, shows the tool line, recalls prompts, starts over on /clear, answers /cost, and quits on Ctrl-C twice", async () => {
    const dir = tempDir("cc-tools-agent-tty-");
    const stand = await startStandIn([
      toolCall("Write", { file_path: "hello.txt", content: "hi\n" }),
      text("Done writing hello.txt."),
      text("A fresh start."),
    ]);
    stands.push(stand);
    const name = await startAgent(stand, dir);

    tmux("send-keys", "-t", name, "write hello.txt", "Enter");
    await waitFor(() => screen(name).includes("Permission needed: Write"), "the permission question");
    expect(existsSync(join(dir, "hello.txt"))).toBe(false);
    tmux("send-keys", "-t", name, "1", "Enter");
    await waitFor(() => screen(name).includes("Done writing hello.txt."), "the final answer");
    expect(readFileSync(join(dir, "hello.txt"), "utf8")).toBe("hi\n");
    expect(screen(name)).toMatch(/✓ Write\(hello\.txt\)/);

    // The up arrow recalls the prompt, not the "1" typed to the permission question.
    const lastLine = () => screen(name).trimEnd().split("\n").at(-1)!;
    tmux("send-keys", "-t", name, "Up");
    await waitFor(() => lastLine() === "> write hello.txt", "the earlier prompt");
    tmux("send-keys", "-t", name, "C-u");

    // /clear starts over: the next request carries only the new prompt.
    tmux("send-keys", "-t", name, "/clear", "Enter");
    await waitFor(() => screen(name).includes("(new conversation)"), "the new conversation");
    tmux("send-keys", "-t", name, "start again", "Enter");
    await waitFor(() => screen(name).includes("A fresh start."), "the answer after /clear");
    expect(stand.requests.at(-1).messages).toEqual([
      { role: "user", content: [{ type: "text", text: "start again" }] },
    ]);

    tmux("send-keys", "-t", name, "/cost", "Enter");
    await waitFor(() => screen(name).includes("Total: $"), "the cost report");

    tmux("send-keys", "-t", name, "C-c");
    await waitFor(() => screen(name).includes("press Ctrl-C again"), "the quit hint");
    tmux("send-keys", "-t", name, "C-c");
    await waitFor(() => !alive(name), "the agent to quit");
  });

  it("asks the questions of sub-agents running side by side one at a time", async () => {
    const dir = tempDir("cc-tools-agent-tty-");
    const ask = (who: string) =>
      toolCall("AskUserQuestion", {
        questions: [
          {
            question: `Which colour for ${who}?`,
            header: who,
            options: [
              { label: `red-${who}`, description: "red" },
              { label: `blue-${who}`, description: "blue" },
            ],
            multiSelect: false,
          },
        ],
      });
    const stand = await startStandIn([
      (request) => {
        const first = JSON.stringify(request.messages[0]);
        const answered = JSON.stringify(request.messages).includes("tool_result");
        for (const who of ["alpha", "beta"])
          if (first.includes(`SUBTASK ${who}`)) return answered ? text(`${who} done`) : ask(who);
        if (answered) return text("both done");
        return {
          content: ["alpha", "beta"].map((who) => ({
            type: "tool_use" as const,
            id: `task-${who}`,
            name: "Task",
            input: { description: who, prompt: `SUBTASK ${who}` },
          })),
        };
      },
    ]);
    stands.push(stand);
    const name = await startAgent(stand, dir);
    tmux("send-keys", "-t", name, "ask both", "Enter");
    await waitFor(() => /Which colour for (alpha|beta)\?/.test(screen(name)), "the first question");
    // Only one question is on the screen until it is answered.
    await new Promise((r) => setTimeout(r, 500));
    expect(screen(name).match(/Which colour for/g)).toHaveLength(1);
    tmux("send-keys", "-t", name, "1", "Enter");
    await waitFor(() => (screen(name).match(/Which colour for/g) ?? []).length === 2, "the second question");
    tmux("send-keys", "-t", name, "2", "Enter");
    await waitFor(() => screen(name).includes("both done"), "the final answer");
    const answers = JSON.stringify(stand.requests.map((r) => r.messages.at(-1)));
    expect(answers).toMatch(/red-(alpha|beta)/);
    expect(answers).toMatch(/blue-(alpha|beta)/);
  });
});
