/**
 * `npm run bench`: every benchmark module, each reporting our time against a raw tool's in the same run.
 * Prints a table of ratios and whether each meets its target. `npm run bench -- grep` runs only matching
 * modules. Exits 0 either way: a benchmark informs, it does not gate (the machines are shared and noisy).
 */
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Bench, BenchRow } from "./lib.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const filter = process.argv.slice(2);
const modules = readdirSync(here)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts" && f !== "lib.ts")
  .filter((f) => filter.length === 0 || filter.some((w) => f.includes(w)))
  .sort();

const rows: BenchRow[] = [];
for (const file of modules) {
  process.stderr.write(`bench: ${file}...\n`);
  const mod = (await import(new URL(file, import.meta.url).href)) as { default: Bench };
  await mod.default((row) => {
    rows.push(row);
    const ratio = row.oursMs / row.baselineMs;
    process.stderr.write(
      `  ${row.name}: ${row.oursMs.toFixed(1)} ms vs ${row.baselineMs.toFixed(1)} ms (${ratio.toFixed(2)}x)\n`,
    );
  });
}

const verdict = (r: BenchRow) => {
  const ratioOk = r.targetRatio === undefined || r.oursMs / r.baselineMs <= r.targetRatio;
  const msOk = r.targetMs === undefined || r.oursMs <= r.targetMs;
  if (r.targetRatio === undefined && r.targetMs === undefined) return "-";
  return ratioOk && msOk ? "meets" : "MISSES";
};
const table = rows.map((r) => ({
  benchmark: r.name,
  "ours (ms)": r.oursMs.toFixed(1),
  baseline: r.baseline,
  "baseline (ms)": r.baselineMs.toFixed(1),
  ratio: (r.oursMs / r.baselineMs).toFixed(2),
  target: [
    r.targetRatio !== undefined ? `<= ${r.targetRatio}x` : "",
    r.targetMs !== undefined ? `<= ${r.targetMs} ms` : "",
  ]
    .filter(Boolean)
    .join(", "),
  verdict: verdict(r),
  note: r.note ?? "",
}));
console.table(table);
