/**
 * The two ways cc-tools says "did you mean": `similarity` for file names and lines (forgiving of swapped or
 * missing letters), `closestNames` for short identifiers such as tool names (edit distance).
 */

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

/** Levenshtein distance: insertions, deletions and substitutions each cost one. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

/** The candidates closest to `name` (ignoring case), nearest first: a few edits away, or containing it. */
export function closestNames(name: string, candidates: readonly string[], max = 3): string[] {
  const lower = name.toLowerCase();
  return candidates
    .map((c) => ({ c, d: c.toLowerCase() === lower ? 0 : editDistance(lower, c.toLowerCase()) }))
    .filter(({ c, d }) => d <= Math.max(2, Math.floor(c.length / 3)) || c.toLowerCase().includes(lower))
    .sort((a, b) => a.d - b.d)
    .slice(0, max)
    .map(({ c }) => c);
}
