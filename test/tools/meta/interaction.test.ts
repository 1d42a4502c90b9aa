import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createHost, type HostMessage, type UserQuestion } from "../../../src/core/host.js";
import { ToolResult } from "../../../src/core/result.js";
import { runTool } from "../../../src/executor/run.js";
import { autoHandler } from "../../../src/permissions/handlers.js";
import { tempDir, testContext } from "../../helpers/context.js";

type Ctx = ReturnType<typeof testContext>;

async function call(ctx: Ctx, name: string, input: Record<string, unknown>, signal?: AbortSignal) {
  const result = await runTool(name, input, ctx, { signal });
  return { result, text: ToolResult.text(result), meta: result.metadata ?? {} };
}

const question = (q: string, multiSelect = false): UserQuestion => ({
  question: q,
  header: "Choice",
  options: [
    { label: "Red", description: "warm" },
    { label: "Blue", description: "cool" },
  ],
  multiSelect,
});

describe("AskUserQuestion", () => {
  it("asks through the host and returns the answers", async () => {
    const asked: UserQuestion[][] = [];
    const host = createHost(
      {
        askQuestions: async (questions) => {
          asked.push([...questions]);
          return { "Which color?": "Blue", "Which others?": "Red, Blue" };
        },
      },
      autoHandler,
    );
    const ctx = testContext({ host });
    const answered = await call(ctx, "AskUserQuestion", {
      questions: [question("Which color?"), question("Which others?", true)],
    });
    expect(answered.result.isError).toBe(false);
    expect(answered.text).toBe(
      'The user answered your questions: "Which color?"="Blue", "Which others?"="Red, Blue". Continue with these answers in mind.',
    );
    expect(asked[0]![1]!.multiSelect).toBe(true);
  });

  it("reports a dismissed question, and rejects repeated questions or labels and bad shapes", async () => {
    const host = createHost({ askQuestions: async () => undefined }, autoHandler);
    const ctx = testContext({ host });
    const dismissed = await call(ctx, "AskUserQuestion", { questions: [question("Q?")] });
    expect(dismissed.result.isError).toBe(true);
    expect(dismissed.text).toContain("did not answer");
    const twice = await call(ctx, "AskUserQuestion", { questions: [question("Q?"), question("Q?")] });
    expect(twice.text).toContain('"Q?" is asked twice');
    const labels = {
      ...question("L?"),
      options: [
        { label: "A", description: "" },
        { label: "A", description: "" },
      ],
    };
    expect((await call(ctx, "AskUserQuestion", { questions: [labels] })).text).toContain('option "A" twice');
    const one = { ...question("One?"), options: [{ label: "A", description: "" }] };
    expect((await call(ctx, "AskUserQuestion", { questions: [one] })).text).toContain("options");
    const header = { ...question("H?"), header: "a header that is too long" };
    expect((await call(ctx, "AskUserQuestion", { questions: [header] })).text).toContain("header");
  });

  it("is refused where nobody can answer", async () => {
    const ctx = testContext();
    const refused = await call(ctx, "AskUserQuestion", { questions: [question("Q?")] });
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toContain(
      "AskUserQuestion is not available here: it needs a person to answer questions",
    );
  });
});

describe("SendMessage", () => {
  it("delivers to a named recipient; an unknown one gets the list of known ones", async () => {
    const inbox: HostMessage[] = [];
    const host = createHost(
      {
        deliverMessage: (m) => {
          if (m.to !== "reviewer") return false;
          inbox.push(m);
          return true;
        },
        recipients: () => ["reviewer", "main"],
      },
      autoHandler,
    );
    const ctx = testContext({ host });
    const sent = await call(ctx, "SendMessage", {
      to: "reviewer",
      message: "please look",
      summary: "review",
    });
    expect(sent.result.isError).toBe(false);
    expect(inbox).toEqual([
      { from: ctx.sessionId, to: "reviewer", message: "please look", summary: "review" },
    ]);
    const unknown = await call(ctx, "SendMessage", { to: "nobody", message: "x" });
    expect(unknown.result.isError).toBe(true);
    expect(unknown.text).toBe(
      '<tool_use_error>No recipient named "nobody". Reachable now: reviewer, main.</tool_use_error>',
    );
    const long = await call(ctx, "SendMessage", { to: "reviewer", message: "x", summary: "s".repeat(201) });
    expect(long.text).toContain("summary");
  });
});

describe("Brief", () => {
  it("checks attachments exist in the workspace and returns structured metadata", async () => {
    const ctx = testContext();
    writeFileSync(join(ctx.workingDir, "shot.png"), "png");
    mkdirSync(join(ctx.workingDir, "dir"));
    const sent = await call(ctx, "Brief", { message: "Done: see the screenshot", attachments: ["shot.png"] });
    expect(sent.text).toBe(
      `Message sent to the user with 1 attachment (${join(ctx.workingDir, "shot.png")}).`,
    );
    const brief = sent.meta.brief as {
      status: string;
      attachments: Array<{ size: number; isImage: boolean }>;
    };
    expect(brief.status).toBe("normal");
    expect(brief.attachments[0]).toMatchObject({ size: 3, isImage: true, mimeType: "image/png" });
    const bad = await call(ctx, "Brief", {
      message: "x",
      attachments: ["missing.txt", "dir", join(tempDir(), "f")],
      status: "proactive",
    });
    expect(bad.result.isError).toBe(true);
    expect(bad.text).toContain("missing.txt does not exist");
    expect(bad.text).toContain("dir is not a regular file");
    expect(bad.text).toContain("is outside the workspace");
  });
});

describe("Sleep", () => {
  it("sleeps, says for how long, and wakes early when cancelled", async () => {
    const ctx = testContext();
    const slept = await call(ctx, "Sleep", { duration_ms: 50 });
    expect(slept.text).toMatch(/^Slept for \d+ ms\.$/);
    expect(slept.meta.interrupted).toBe(false);
    expect(slept.meta.sleptMs as number).toBeGreaterThanOrEqual(49);
    const controller = new AbortController();
    setTimeout(() => controller.abort("stop"), 50);
    const cut = await call(ctx, "Sleep", { duration_ms: 300_000 }, controller.signal);
    expect(cut.text).toMatch(/Interrupted after \d+ ms of the 300 s requested/);
    expect(cut.meta.interrupted).toBe(true);
    const tooLong = await call(ctx, "Sleep", { duration_ms: 300_001 });
    expect(tooLong.result.isError).toBe(true);
    expect(tooLong.text).toContain("duration_ms");
  });
});
