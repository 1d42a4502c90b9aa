import type { SessionSlot } from "../core/session.js";
import { CACHE_MAX_CHARS, CACHE_TTL_MS } from "./limits.js";
import type { Page } from "./page.js";

/**
 * Pages fetched in this session, by the URL asked for, for CACHE_TTL_MS: a model that fetches a page
 * again with another prompt does not fetch it twice. Bounded by the characters held; the oldest entry
 * goes first. Per session, because what a session may fetch (its rules) is its own.
 */
export class PageCache {
  private readonly entries = new Map<string, { page: Page; storedAt: number }>();
  private chars = 0;

  constructor(
    private readonly ttlMs = CACHE_TTL_MS,
    private readonly maxChars = CACHE_MAX_CHARS,
    private readonly now: () => number = Date.now,
  ) {}

  get(url: string): Page | undefined {
    const entry = this.entries.get(url);
    if (!entry) return undefined;
    if (this.now() - entry.storedAt > this.ttlMs) {
      this.delete(url);
      return undefined;
    }
    return entry.page;
  }

  set(url: string, page: Page): void {
    this.delete(url);
    if (page.text.length > this.maxChars) return;
    this.entries.set(url, { page, storedAt: this.now() });
    this.chars += page.text.length;
    for (const key of this.entries.keys()) {
      if (this.chars <= this.maxChars) break;
      this.delete(key);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private delete(url: string): void {
    const entry = this.entries.get(url);
    if (!entry) return;
    this.chars -= entry.page.text.length;
    this.entries.delete(url);
  }
}

export const pageCacheSlot: SessionSlot<PageCache> = {
  key: "web-page-cache",
  create: () => new PageCache(),
};
