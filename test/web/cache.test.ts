import { describe, expect, it } from "vitest";
import { PageCache } from "../../src/web/cache.js";
import type { Page } from "../../src/web/page.js";

const page = (text: string): Page => ({
  kind: "page",
  url: "https://example.com/",
  status: 200,
  contentType: "text/html",
  format: "markdown",
  title: undefined,
  text,
});

describe("PageCache", () => {
  it("forgets a page after its time-to-live", () => {
    let now = 0;
    const cache = new PageCache(15 * 60_000, 1_000, () => now);
    cache.set("a", page("aaa"));
    now = 15 * 60_000;
    expect(cache.get("a")?.text).toBe("aaa");
    now += 1;
    expect(cache.get("a")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("holds at most its budget of characters, dropping the oldest pages first", () => {
    const cache = new PageCache(60_000, 10, () => 0);
    cache.set("a", page("1234"));
    cache.set("b", page("5678"));
    cache.set("c", page("90ab"));
    expect(cache.get("a")).toBeUndefined();
    expect(cache.get("b")?.text).toBe("5678");
    expect(cache.get("c")?.text).toBe("90ab");
    // A page larger than the whole budget is not kept, and evicts nothing.
    cache.set("huge", page("x".repeat(11)));
    expect(cache.get("huge")).toBeUndefined();
    expect(cache.size).toBe(2);
    // Setting a key again replaces it and counts it once.
    cache.set("b", page("56"));
    cache.set("d", page("cdef"));
    expect([cache.get("b")?.text, cache.get("c")?.text, cache.get("d")?.text]).toEqual([
      "56",
      "90ab",
      "cdef",
    ]);
  });
});
