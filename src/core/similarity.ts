/** How alike two strings are, from 0 to 1, ignoring case: for "did you mean" suggestions. */
export function similarity(a: string, b: string): number {
  // Dice coefficient over character bigrams: cheap, and forgiving of swapped or missing letters.
  const grams = (s: string) => {
    const out = new Map<string, number>();
    for (let i = 0; i < s.length - 1; i++) out.set(s.slice(i, i + 2), (out.get(s.slice(i, i + 2)) ?? 0) + 1);
    return out;
  };
  const x = grams(a.toLowerCase());
  const y = grams(b.toLowerCase());
  let shared = 0;
  for (const [g, n] of x) shared += Math.min(n, y.get(g) ?? 0);
  const total = Math.max(a.length - 1, 0) + Math.max(b.length - 1, 0);
  return total === 0 ? 0 : (2 * shared) / total;
}
