import {
  type SpawnSyncOptionsWithStringEncoding,
  type SpawnSyncReturns,
  spawnSync,
} from "node:child_process";
import { subscribe } from "node:diagnostics_channel";

/**
 * Where this process learns that it is about to fork. Spawning forks the spawner, and the fork
 * write-protects every page the two share, so memory this process means to reuse afterwards is best given
 * back before (the kept buffer), and the pages it writes next are best touched once in a quiet moment (the
 * young generation): see src/fs/kept-buffer.ts and src/process/memory.ts.
 *
 * Node announces every asynchronous spawn (spawn, exec, execFile, fork) on its `child_process` channel,
 * before it forks; its synchronous ones it does not, so this project's few spawnSync calls go through
 * spawnSyncAnnounced().
 */

const listeners: Array<() => void> = [];

/** Calls `listener` just before each fork of this process (synchronously, on the spawning call's stack). */
export function beforeFork(listener: () => void): void {
  listeners.push(listener);
}

function announce(): void {
  for (const listener of listeners) listener();
}

subscribe("child_process", announce);

/** spawnSync with text output, announced to beforeFork's listeners as Node announces a spawn. */
export function spawnSyncAnnounced(
  command: string,
  args: readonly string[],
  options: SpawnSyncOptionsWithStringEncoding,
): SpawnSyncReturns<string> {
  announce();
  return spawnSync(command, args, options);
}
