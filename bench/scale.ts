/**
 * How Grep and Glob grow with the tree: each over MCP stdio against raw rg on trees of 1k, 10k and 50k
 * files (the 50k tree repeats the 10k corpus; --quick stops at 10k). The table shows the cost per 1k files;
 * it must not grow with the tree (linear total cost), and each row must stay at or under raw rg.
 */
import { findRipgrep } from "../src/search/ripgrep.js";
import { type Bench, CALL_PAUSE_MS, runCommand, timeInterleaved } from "./lib.js";
import { GLOB, NEEDLE, QUICK_SCALE_SIZES, SCALE_SIZES, scaleTree } from "./support/corpus.js";
import { CLI, sampleRss, startServer } from "./support/mcp-client.js";

const bench: Bench = async (report, options) => {
  const rg = await findRipgrep();
  if (!rg) throw new Error("bench/scale.ts needs ripgrep (the @vscode/ripgrep package or rg on PATH)");
  const sizes = options.quick ? QUICK_SCALE_SIZES : SCALE_SIZES;
  /** Cost per 1k files by case (without the size) and size, ours and rg's: the growth line. */
  const perK = new Map<string, Array<{ size: number; ours: number; rg: number }>>();
  for (const size of sizes) {
    const tree = scaleTree(size);
    const label = `${size / 1000}k`;
    const runs = size >= 50_000 ? (options.quick ? 3 : 5) : options.quick ? 5 : 9;
    const { client } = await startServer([
      CLI,
      "mcp",
      "--cwd",
      tree.dir,
      "--permission-mode",
      "bypassPermissions",
    ]);
    const raw = (args: string[]) => () => runCommand(rg, ["--no-config", ...args], tree.dir);
    const cases = [
      { name: `Grep files ${label}`, input: { pattern: NEEDLE }, baseline: ["-l", NEEDLE], tool: "Grep" },
      {
        name: `Grep content ${label}`,
        input: { pattern: NEEDLE, output_mode: "content", "-n": true },
        baseline: ["-n", NEEDLE],
        tool: "Grep",
      },
      { name: `Glob ${label}`, input: { pattern: GLOB }, baseline: ["--files", "-g", GLOB], tool: "Glob" },
    ];
    try {
      for (const c of cases) {
        const sampler = sampleRss([client.pid]);
        const times = await timeInterleaved(
          { ours: () => client.call(c.tool, c.input), baseline: raw(c.baseline) },
          runs,
          2,
          CALL_PAUSE_MS,
        );
        const [peakRssMb] = sampler.stop();
        const key = c.name.replace(` ${label}`, "");
        perK.set(key, [
          ...(perK.get(key) ?? []),
          { size, ours: (times.ours * 1000) / tree.files, rg: (times.baseline * 1000) / tree.files },
        ]);
        report({
          name: c.name,
          baseline: `rg ${c.baseline[0]}`,
          oursMs: times.ours,
          baselineMs: times.baseline,
          files: tree.files,
          peakRssMb,
          targetRatio: 1.0,
        });
      }
    } finally {
      await client.close();
    }
  }
  // Linear growth: the cost per 1k files at the largest tree is no higher than at the 10k one.
  for (const [key, points] of perK) {
    const line = points.map((p) => `${p.size / 1000}k ${p.ours.toFixed(1)}`).join(", ");
    const mid = points.find((p) => p.size === 10_000);
    const last = points.at(-1)!;
    const growth =
      mid && last !== mid
        ? ` (${last.size / 1000}k/10k: ours ${(last.ours / mid.ours).toFixed(2)}x, rg ${(last.rg / mid.rg).toFixed(2)}x)`
        : "";
    options.info(`scale ${key}, ms per 1k files: ${line}${growth}`);
  }
};

export default bench;
