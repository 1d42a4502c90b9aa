/** What the numbers were measured on: they mean little without it. */
import { execFileSync } from "node:child_process";
import { cpus, loadavg, release, totalmem } from "node:os";

export interface Machine {
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  ripgrep: string;
  /** 1-minute load average when the run started: a busy machine inflates every number. */
  load: number;
}

export function describeMachine(rg: string | undefined): Machine {
  let ripgrep = "not found";
  if (rg) {
    try {
      ripgrep = execFileSync(rg, ["--version"], { encoding: "utf8" })
        .split("\n")[0]!
        .replace(/ \(rev.*$/, "");
    } catch {
      ripgrep = rg;
    }
  }
  return {
    cpu: cpus()[0]?.model.trim() ?? "unknown",
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 1024 ** 3),
    os: `${process.platform} ${release()}`,
    node: process.version,
    ripgrep,
    load: Math.round(loadavg()[0]! * 100) / 100,
  };
}

export function machineLine(m: Machine): string {
  return `${m.cores} x ${m.cpu}, ${m.memoryGb} GB, ${m.os}, Node ${m.node}, ${m.ripgrep}, load ${m.load}`;
}
