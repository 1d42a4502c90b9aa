/**
 * `npm run bench`: every benchmark module, each reporting our time against a raw tool's (and an installed
 * peer's) in the same run. Prints a markdown table of ratios and whether each meets its target, and writes
 * the same as JSON to bench/results/. Exits 0 either way: a benchmark informs, it does not gate (the
 * machines are shared and noisy).
 *
 *   npm run bench                       all modules
 *   npm run bench -- peers scale        only modules whose file name contains a word
 *   npm run bench -- --quick            fewer runs, no 50k-file tree
 *   npm run bench -- --tree DIR         your own tree for the corpus rows
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { findRipgrep } from "../src/search/ripgrep.js";
import type { Bench, BenchRow, MemoryRow } from "./lib.js";
import { describeMachine, machineLine } from "./support/machine.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const { values, positionals } = parseArgs({
  options: { quick: { type: "boolean", default: false }, tree: { type: "string" } },
  allowPositionals: true,
});
const modules = readdirSync(here)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts" && f !== "lib.ts")
  .filter((f) => positionals.length === 0 || positionals.some((w) => f.includes(w)))
  .sort();

const started = new Date();
const machine = describeMachine(await findRipgrep());
const rows: BenchRow[] = [];
const memory: MemoryRow[] = [];
const info: string[] = [];
const t0 = performance.now();
for (const file of modules) {
  process.stderr.write(`bench: ${file}...\n`);
  const mod = (await import(new URL(file, import.meta.url).href)) as { default: Bench };
  await mod.default(
    (row) => {
      rows.push(row);
      const peer = row.peerMs !== undefined ? `, ${row.peer} ${row.peerMs.toFixed(1)} ms` : "";
      process.stderr.write(
        `  ${row.name}: ${row.oursMs.toFixed(1)} ms vs ${row.baseline} ${row.baselineMs.toFixed(1)} ms${peer}\n`,
      );
    },
    {
      quick: values.quick ?? false,
      ...(values.tree ? { tree: resolve(values.tree) } : {}),
      memory: (row) => {
        memory.push(row);
        process.stderr.write(`  ${row.name}: ${row.oursMb.toFixed(0)} MB\n`);
      },
      info: (line) => {
        info.push(line);
        process.stderr.write(`  ${line}\n`);
      },
    },
  );
}
const totalSeconds = (performance.now() - t0) / 1000;

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
function verdict(r: BenchRow): string {
  const checks: boolean[] = [];
  if (r.targetRatio !== undefined) checks.push(r.oursMs / r.baselineMs <= r.targetRatio);
  if (r.targetMs !== undefined) checks.push(r.oursMs <= r.targetMs);
  if (r.targetPeerRatio !== undefined && r.peerMs !== undefined)
    checks.push(r.oursMs / r.peerMs <= r.targetPeerRatio);
  if (checks.length === 0) return "-";
  return checks.every(Boolean) ? "meets" : "**misses**";
}
function target(r: BenchRow): string {
  return [
    r.targetRatio !== undefined ? `≤ ${r.targetRatio}x base` : "",
    r.targetPeerRatio !== undefined && r.peerMs !== undefined ? `≤ ${r.targetPeerRatio}x peer` : "",
    r.targetMs !== undefined ? `≤ ${ms(r.targetMs)} ms` : "",
  ]
    .filter(Boolean)
    .join(", ");
}
const cell = (s: string) => s.replaceAll("|", "\\|");
const lines: string[] = [];
lines.push(
  `cc-tools bench, ${started.toISOString().slice(0, 16).replace("T", " ")} UTC${values.quick ? " (--quick)" : ""}`,
);
lines.push(`machine: ${machineLine(machine)}`);
for (const line of info) lines.push(line);
lines.push("");
lines.push(
  "| benchmark | cc-tools | baseline | vs baseline | peer | vs peer | per 1k files | peak RSS (ours / peer) | target | verdict |",
);
lines.push("|---|--:|---|--:|---|--:|--:|--:|---|---|");
for (const r of rows) {
  const peer = r.peerMs !== undefined ? `${r.peer} ${ms(r.peerMs)} ms` : "";
  const perK = r.files
    ? `${ms((r.oursMs * 1000) / r.files)} / ${ms((r.baselineMs * 1000) / r.files)} ms`
    : "";
  const rss =
    r.peakRssMb !== undefined
      ? `${r.peakRssMb.toFixed(0)}${r.peerPeakRssMb !== undefined ? ` / ${r.peerPeakRssMb.toFixed(0)}` : ""} MB`
      : "";
  lines.push(
    `| ${cell(r.name)} | ${ms(r.oursMs)} ms | ${cell(r.baseline)} ${ms(r.baselineMs)} ms | ${ratio(r.oursMs, r.baselineMs)} | ${peer} | ${r.peerMs !== undefined ? ratio(r.oursMs, r.peerMs) : ""} | ${perK} | ${rss} | ${target(r)} | ${verdict(r)} |`,
  );
}
const notes = rows.filter((r) => r.note);
if (notes.length > 0) lines.push("");
for (const r of notes) lines.push(`- ${r.name}: ${r.note}`);
if (memory.length > 0) {
  lines.push("");
  lines.push("| memory | cc-tools | peer | target | verdict |");
  lines.push("|---|--:|--:|---|---|");
  for (const m of memory) {
    const peer = m.peerMb !== undefined ? `${m.peer} ${m.peerMb.toFixed(0)} MB` : "";
    const ok = m.targetMb === undefined ? "-" : m.oursMb <= m.targetMb ? "meets" : "**misses**";
    lines.push(
      `| ${m.name} | ${m.oursMb.toFixed(0)} MB | ${peer} | ${m.targetMb !== undefined ? `≤ ${m.targetMb} MB` : ""} | ${ok} |`,
    );
  }
}
lines.push("");
lines.push(`Medians of interleaved runs; per 1k files: ours / baseline. Total ${totalSeconds.toFixed(0)} s.`);
console.log(lines.join("\n"));

const resultsDir = fileURLToPath(new URL("results/", import.meta.url));
mkdirSync(resultsDir, { recursive: true });
const json = JSON.stringify(
  { date: started.toISOString(), quick: values.quick, machine, info, rows, memory, totalSeconds },
  null,
  2,
);
const stamp = started.toISOString().replace(/[:.]/g, "-");
writeFileSync(`${resultsDir}${stamp}.json`, json);
writeFileSync(`${resultsDir}latest.json`, json);
process.stderr.write(`bench: results in bench/results/${stamp}.json\n`);
