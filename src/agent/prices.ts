import type { CostTracker, Usage } from "../core/cost.js";

/**
 * Dollars per million tokens, by model family, as Anthropic's price list gave them on PRICES_AS_OF; later
 * models of a family are counted at that family's tier until this table is updated. A model not listed (a
 * local model, a new family) costs nothing in the summary, which says its price is unknown.
 */
export const PRICES_AS_OF = "2025-11-24";

interface Price {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

const PRICES: Array<{ match: RegExp; price: Price }> = [
  { match: /opus-4-[5-9]|opus-[5-9]/, price: { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5 } },
  { match: /opus/, price: { input: 15, output: 75, cacheWrite: 18.75, cacheRead: 1.5 } },
  { match: /sonnet/, price: { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 } },
  { match: /haiku-4|haiku-[5-9]/, price: { input: 1, output: 5, cacheWrite: 1.25, cacheRead: 0.1 } },
  { match: /haiku/, price: { input: 0.8, output: 4, cacheWrite: 1, cacheRead: 0.08 } },
];

export function priceOf(model: string): Price | undefined {
  return PRICES.find((p) => p.match.test(model))?.price;
}

/** What `usage` of `model` cost, in dollars; undefined when the model's price is unknown. */
export function costOf(model: string, usage: Required<Usage>): number | undefined {
  const price = priceOf(model);
  if (!price) return undefined;
  return (
    (usage.inputTokens * price.input +
      usage.outputTokens * price.output +
      usage.cacheWriteTokens * price.cacheWrite +
      usage.cacheReadTokens * price.cacheRead) /
    1_000_000
  );
}

/** The whole session's cost, sub-agents included, in dollars (models of unknown price count as 0). */
export function totalCost(tracker: CostTracker): number {
  let total = 0;
  for (const [model, usage] of tracker.byModel()) total += costOf(model, usage) ?? 0;
  return total;
}

/** Lines for `/cost` and the end of a run: tokens and dollars per model, then the total. */
export function costReport(tracker: CostTracker): string {
  const lines: string[] = [];
  for (const [model, u] of tracker.byModel()) {
    const cost = costOf(model, u);
    lines.push(
      `${model}: ${u.inputTokens} input, ${u.outputTokens} output, ${u.cacheWriteTokens} cache write, ` +
        `${u.cacheReadTokens} cache read tokens — ${cost === undefined ? "price unknown" : `$${cost.toFixed(4)}`}`,
    );
  }
  if (lines.length === 0) return "No model calls yet.";
  lines.push(`Total: $${totalCost(tracker).toFixed(4)} (prices as of ${PRICES_AS_OF})`);
  return lines.join("\n");
}
