import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ToolCallContext } from "../core/context.js";
import { errorMessage } from "../core/errors.js";
import { ToolResult } from "../core/result.js";
import { type AddressPolicy, isPublicAddress, type Resolver, systemResolver } from "./address.js";
import { type PromptAnswer, promptModelFor } from "./apply-prompt.js";
import { pageCacheSlot } from "./cache.js";
import { allowRuleNamesHost } from "./host-rules.js";
import type { CrossHostRedirect } from "./http.js";
import { MAX_PAGE_CHARS, PROMPT_INPUT_MAX_CHARS } from "./limits.js";
import { type Page, readPage } from "./page.js";
import { fetchTarget, isLoopbackHost, literalAddress, sameHostName } from "./url.js";

/** What WebFetch does once its call is allowed: fetch (or take from the cache), read, cut, apply the prompt. */

export interface WebFetchInput {
  url: string;
  prompt: string;
}

/** Seams for tests: a resolver, what counts as public, and a shorter time-out. */
export interface WebFetchOptions {
  resolve?: Resolver;
  isPublic?: (address: string) => boolean;
  timeoutMs?: number;
}

/** The page text cut to `max` characters at a line end when one is near, and how many lines were kept. */
export function cutText(text: string, max: number): { shown: string; lines: number } | undefined {
  if (text.length <= max) return undefined;
  const lineEnd = text.lastIndexOf("\n", max);
  const shown = lineEnd > max * 0.8 ? text.slice(0, lineEnd) : text.slice(0, max);
  return { shown, lines: shown.split("\n").length };
}

function savePage(ctx: ToolCallContext, page: Page): string {
  const host = new URL(page.url).hostname.replace(/[^A-Za-z0-9.-]/g, "_");
  const path = join(ctx.session.dir, `webfetch-${host}-${randomUUID().slice(0, 8)}.md`);
  writeFileSync(path, page.text, "utf8");
  return path;
}

function redirectResult(redirect: CrossHostRedirect, prompt: string): ToolResult {
  const text =
    `${redirect.from} redirects (HTTP ${redirect.status}) to another host: ${redirect.to}\n\n` +
    "WebFetch does not follow redirects to other hosts, so the rules for that host can decide. To get the " +
    `page, call WebFetch again with url "${redirect.to}"${prompt.trim() ? " and the same prompt" : ""}.`;
  return ToolResult.success(text, {
    redirect: { from: redirect.from, to: redirect.to, status: redirect.status },
  });
}

function header(page: Page, requested: string): string {
  const lines = [`URL: ${page.url}${page.url === requested ? "" : ` (redirected from ${requested})`}`];
  lines.push(`Content-Type: ${page.contentType}`);
  return lines.join("\n");
}

/** The prompt model's answer about the page, or the note to put above the content when there is none. */
async function answerPrompt(
  prompt: string,
  page: Page,
  ctx: ToolCallContext,
): Promise<{ answer: PromptAnswer; modelRead: number } | { note: string }> {
  if (prompt.trim() === "") return { note: "" };
  const model = promptModelFor(ctx);
  const instead = "The page content follows; answer the prompt from it.\n\n";
  if (!model) {
    return {
      note: `Note: the prompt was not applied, because no model is configured (set ANTHROPIC_API_KEY, and ANTHROPIC_BASE_URL for another endpoint). ${instead}`,
    };
  }
  const content = page.text.slice(0, PROMPT_INPUT_MAX_CHARS);
  try {
    const answer = await model.apply({ prompt, content, url: page.url, signal: ctx.signal });
    if (answer.usage) ctx.costTracker.add(answer.model, answer.usage);
    if (answer.text.trim() === "") {
      return {
        note: `Note: the prompt was not applied: the model (${model.description}) gave no answer. ${instead}`,
      };
    }
    return { answer, modelRead: content.length };
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    return {
      note: `Note: the prompt was not applied: the model (${model.description}) failed: ${errorMessage(error)}. ${instead}`,
    };
  }
}

/**
 * Whether a person's approval of this very call covers reaching `hostname` on a private address: only when
 * the URL they were shown named that address plainly (`localhost`, `127.0.0.1`, `[::1]`, `10.0.0.5`). A
 * name that merely resolves to one (`docs.example` → 169.254.169.254) does not tell a person what they
 * are allowing, so it still needs a rule that names it.
 */
function approvedPrivateHost(ctx: ToolCallContext, target: URL, hostname: string): boolean {
  if (ctx.approvedByUser !== true || !sameHostName(hostname, target.hostname)) return false;
  return literalAddress(target.hostname) !== undefined || isLoopbackHost(target.hostname);
}

export async function runWebFetch(
  input: WebFetchInput,
  ctx: ToolCallContext,
  options: WebFetchOptions = {},
): Promise<ToolResult> {
  const target = fetchTarget(input.url);
  const cache = ctx.session.get(pageCacheSlot);
  let page = cache.get(target.href);
  const cached = page !== undefined;
  if (!page) {
    const rules = ctx.rules();
    let approvalUsed = false;
    const policy: AddressPolicy = {
      resolve: options.resolve ?? systemResolver,
      isPublic: options.isPublic ?? isPublicAddress,
      allowsPrivate: (hostname) => {
        if (allowRuleNamesHost(rules, hostname)) return true;
        if (!approvedPrivateHost(ctx, target, hostname)) return false;
        approvalUsed = true;
        return true;
      },
    };
    const outcome = await readPage(target, { policy, signal: ctx.signal, timeoutMs: options.timeoutMs });
    if (outcome.kind === "crossHostRedirect") return redirectResult(outcome, input.prompt);
    page = outcome;
    // A page reached on one call's approval is not served to later calls that have none.
    if (!approvalUsed) cache.set(target.href, page);
  }

  const cut = cutText(page.text, MAX_PAGE_CHARS);
  const savedTo = cut ? savePage(ctx, page) : undefined;
  const metadata = {
    url: page.url,
    status: page.status,
    contentType: page.contentType,
    chars: page.text.length,
    cached,
    ...(savedTo ? { savedTo } : {}),
  };
  const rest = cut
    ? `\n\n[The page is ${page.text.length} characters; this shows the first ${cut.shown.length} (lines 1-${cut.lines}). ` +
      `The whole page is saved as ${page.format === "markdown" ? "Markdown" : "text"} in ${savedTo}: Read it with ` +
      `offset ${cut.lines + 1} to continue, or call WebFetch again with a prompt that asks for the part you need.]`
    : "";

  const outcome = await answerPrompt(input.prompt, page, ctx);
  if ("answer" in outcome) {
    const { answer, modelRead } = outcome;
    const read = cut
      ? `\n(The model read the first ${modelRead} of ${page.text.length} characters; the whole page is in ${savedTo}.)`
      : "";
    return ToolResult.success(`${answer.text}\n\nSource: ${page.url}${read}`, {
      ...metadata,
      promptApplied: true,
      model: answer.model,
    });
  }
  const { note } = outcome;
  const body =
    page.text.trim() === ""
      ? `[The page has no text${page.format === "markdown" ? " once its scripts, styles and navigation are left out; it is probably built by JavaScript, which WebFetch does not run. Look for an API, a raw or printable version, or search for the content" : ""}.]`
      : (cut?.shown ?? page.text);
  return ToolResult.success(`${note}${header(page, target.href)}\n\n${body}${rest}`, {
    ...metadata,
    promptApplied: false,
  });
}
