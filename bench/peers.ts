/**
 * cc-tools beside its peers, over MCP stdio, in one interleaved run: each round calls our server, the peer
 * (@modelcontextprotocol/server-filesystem, where installed) and the raw tool in turn, so drift in machine
 * load hits all alike. Rows: cold start and idle RSS, Read vs read_text_file vs `cat`, Grep vs `rg -l` and
 * `rg -n` (also the second of two calls back to back), Glob vs search_files vs `rg --files -g`, Edit of one line in 10 MiB vs edit_file vs `sed -i`,
 * Bash vs `bash -c` (sandboxed and not, on fresh servers, and on the long-lived one). The peak RSS of each server's process tree is sampled during every series.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findRipgrep } from "../src/search/ripgrep.js";
import {
  type Bench,
  CALL_PAUSE_MS,
  flushedAfter,
  type OwnTiming,
  runCommand,
  timeInterleaved,
} from "./lib.js";
import { corpus, GLOB, mib, NEEDLE, writeFixtures } from "./support/corpus.js";
import {
  CLI,
  FILESYSTEM,
  MODERN_REVISION,
  type RawClient,
  sampleRss,
  startServer,
  treeRssMb,
} from "./support/mcp-client.js";

const PEER = "server-filesystem";
/**
 * How long a server is left alone after it has loaded before its idle RSS is read: long enough for what a
 * server does once it is quiet (cc-tools collects the garbage of loading 25 ms after it), short beside the
 * seconds a client waits between calls.
 */
const IDLE_SETTLE_MS = 1_000;

const bench: Bench = async (report, options) => {
  const rg = await findRipgrep();
  if (!rg) throw new Error("bench/peers.ts needs ripgrep (the @vscode/ripgrep package or rg on PATH)");
  const hasPeer = existsSync(FILESYSTEM);
  const runs = options.quick ? 7 : 15;
  const tree = corpus(options.tree);
  options.info(`corpus: ${tree.files} files, ${mib(tree.bytes)} MiB (${tree.dir})`);
  const fixtures = realpathSync(mkdtempSync(join(tmpdir(), "cc-tools-bench-peers-")));
  const ourArgs = [CLI, "mcp", "--cwd", tree.dir, "--permission-mode", "bypassPermissions"];
  const peerArgs = [FILESYSTEM, tree.dir, fixtures];

  // Idle RSS: not at the moment tools/list is answered (cc-tools answers the opening while the server is
  // still loading, so that moment would measure a server not yet there) but once the server has loaded
  // (it answered a ping, which the opening does not) and has been left alone for IDLE_SETTLE_MS.
  const idleRssMb = async (client: RawClient) => {
    await client.request("ping");
    await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
    return treeRssMb(client.pid);
  };
  // Cold start: spawn → initialize → tools/list answered; the floor is spawning node itself.
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const coldRuns = options.quick ? 5 : 11;
  /**
   * One round per run: our server, the peer, `node -e 0`, each spawned with `env` (undefined: as given) and
   * opened as a client of `revision` would (on 2026-07-28 without the peer, which does not serve it).
   */
  const coldStart = async (
    name: string,
    env?: NodeJS.ProcessEnv,
    revision: "2025" | typeof MODERN_REVISION = "2025",
  ) => {
    const withPeer = hasPeer && revision === "2025";
    const cold = { ours: [] as number[], peer: [] as number[], node: [] as number[], rss: [] as number[] };
    const peerRss: number[] = [];
    for (let i = 0; i <= coldRuns; i++) {
      const ours = await startServer(ourArgs, env, revision);
      // Idle RSS once, from the 2025 rounds (a 2026-07-28 client's server is the same server).
      const rss = revision === "2025" ? await idleRssMb(ours.client) : 0;
      await ours.client.close();
      const peer = withPeer ? await startServer(peerArgs, env) : undefined;
      const theirRss = peer ? await idleRssMb(peer.client) : 0;
      await peer?.client.close();
      const start = performance.now();
      await runCommand(process.execPath, ["-e", "0"], undefined, env);
      if (i === 0) continue; // warm-up: disk cache
      cold.node.push(performance.now() - start);
      cold.ours.push(ours.ms);
      cold.rss.push(rss);
      if (peer) {
        cold.peer.push(peer.ms);
        peerRss.push(theirRss);
      }
    }
    report({
      name,
      baseline: "node -e 0",
      oursMs: median(cold.ours),
      baselineMs: median(cold.node),
      ...(withPeer ? { peer: PEER, peerMs: median(cold.peer), targetPeerRatio: 0.25 } : {}),
    });
    return { rss: median(cold.rss), ...(withPeer ? { peerRss: median(peerRss) } : {}) };
  };
  const idle = await coldStart("cold start (spawn → tools/list)");
  options.memory({
    name: "RSS idle after start (loaded, then left alone)",
    oursMb: idle.rss,
    ...(idle.peerRss === undefined ? {} : { peer: PEER, peerMb: idle.peerRss }),
    targetMb: 60,
  });
  // Node 20 reads the certificates NODE_EXTRA_CA_CERTS names while it starts, before any script runs (Node
  // 22 and later when TLS is first used): tens of milliseconds that every node process pays alike, ours,
  // the peer's and `node -e 0`. Where the variable is set, the start is also measured as a machine without
  // it would see it.
  if (process.env.NODE_EXTRA_CA_CERTS)
    await coldStart("cold start, without NODE_EXTRA_CA_CERTS", { NODE_EXTRA_CA_CERTS: undefined });
  await coldStart(
    `cold start, a ${MODERN_REVISION} client (spawn → server/discover → tools/list)`,
    undefined,
    MODERN_REVISION,
  );

  const ours = (await startServer(ourArgs)).client;
  const peer = hasPeer ? (await startServer(peerArgs)).client : undefined;
  let seriesPeak = 0;
  let peerSeriesPeak = 0;
  /** One interleaved series with both servers' peak RSS sampled while it runs. */
  const series = async (
    contestants: {
      ours: () => Promise<unknown>;
      peer?: () => Promise<unknown>;
      baseline: () => Promise<unknown>;
    },
    n = runs,
  ) => {
    const sampler = sampleRss(peer ? [ours.pid, peer.pid] : [ours.pid]);
    const times = await timeInterleaved(contestants, n, 3, CALL_PAUSE_MS);
    const [peakRssMb, peerPeakRssMb] = sampler.stop();
    if (peakRssMb! > seriesPeak) options.info(`series peak so far: ${sampler.parts()[0]!.join(" + ")} MB`);
    seriesPeak = Math.max(seriesPeak, peakRssMb!);
    peerSeriesPeak = Math.max(peerSeriesPeak, peerPeakRssMb ?? 0);
    return {
      oursMs: times.ours,
      baselineMs: times.baseline,
      peakRssMb,
      ...(peer ? { peer: PEER, peerMs: times.peer, peerPeakRssMb } : {}),
    };
  };
  const rgRaw = (args: string[]) => () => runCommand(rg, ["--no-config", ...args], tree.dir);

  try {
    const { lines2k, big, bigLines } = writeFixtures(fixtures);
    report({
      name: "Read 2000-line file",
      baseline: "cat",
      ...(await series(
        {
          ours: () => ours.call("Read", { file_path: lines2k }),
          peer: peer && (() => peer.call("read_text_file", { path: lines2k })),
          baseline: () => runCommand("cat", [lines2k]),
        },
        runs * 3,
      )),
      targetRatio: 1.0,
      targetPeerRatio: 1.0,
    });

    report({
      name: `Grep files_with_matches "${NEEDLE}"`,
      baseline: "rg -l",
      files: tree.files,
      ...(await series({
        ours: () => ours.call("Grep", { pattern: NEEDLE }),
        baseline: rgRaw(["-l", NEEDLE]),
      })),
      targetRatio: 1.0,
    });
    const content = { pattern: NEEDLE, output_mode: "content", "-n": true };
    report({
      name: `Grep content "${NEEDLE}"`,
      baseline: "rg -n",
      files: tree.files,
      ...(await series({
        ours: () => ours.call("Grep", content),
        baseline: rgRaw(["-n", NEEDLE]),
      })),
      targetRatio: 1.0,
    });
    report({
      name: `Grep content "${NEEDLE}", the second of two calls back to back`,
      baseline: "rg -n",
      files: tree.files,
      ...(await series(
        {
          ours: async (): Promise<OwnTiming> => {
            await ours.call("Grep", content);
            const start = performance.now();
            await ours.call("Grep", content);
            return { ownMs: performance.now() - start };
          },
          baseline: rgRaw(["-n", NEEDLE]),
        },
        options.quick ? 3 : 7,
      )),
      targetRatio: 1.0,
      note: "a batch: once a session's searches came together, it keeps a spare shell for the second one",
    });
    report({
      name: `Glob ${GLOB}`,
      baseline: "rg --files -g",
      files: tree.files,
      ...(await series(
        {
          ours: () => ours.call("Glob", { pattern: GLOB }),
          peer: peer && (() => peer.call("search_files", { path: tree.dir, pattern: GLOB })),
          baseline: rgRaw(["--files", "-g", GLOB]),
        },
        options.quick ? 3 : 7,
      )),
      targetRatio: 1.0,
      targetPeerRatio: 1.0,
    });

    // Edit: each contestant flips the middle line of its own copy back and forth, so every run changes it,
    // and its copy is flushed (untimed) after each call: sed's unwritten pages made the next contestant's
    // sync wait for them (docs/PERFORMANCE.md, "Edit").
    const mid = Math.floor(bigLines / 2);
    const copies = { ours: big, peer: `${big}.peer`, sed: `${big}.sed` };
    copyFileSync(big, copies.peer);
    copyFileSync(big, copies.sed);
    const flipper = () => {
      let flip = false;
      return () => {
        const pair = flip ? [`value_${mid}_x =`, `value_${mid} =`] : [`value_${mid} =`, `value_${mid}_x =`];
        flip = !flip;
        return pair as [string, string];
      };
    };
    const [oursFlip, peerFlip, sedFlip] = [flipper(), flipper(), flipper()];
    await ours.call("Read", { file_path: copies.ours, limit: 1 });
    report({
      name: "Edit one line of a 10 MiB file",
      baseline: "sed -i",
      ...(await series(
        {
          ours: flushedAfter(() => {
            const [old_string, new_string] = oursFlip();
            return ours.call("Edit", { file_path: copies.ours, old_string, new_string });
          }, copies.ours),
          peer:
            peer &&
            flushedAfter(() => {
              const [oldText, newText] = peerFlip();
              return peer.call("edit_file", { path: copies.peer, edits: [{ oldText, newText }] });
            }, copies.peer),
          baseline: flushedAfter(() => {
            const [from, to] = sedFlip();
            return runCommand("sed", ["-i", `s/${from}/${to}/`, copies.sed]);
          }, copies.sed),
        },
        options.quick ? 5 : 21,
      )),
      targetRatio: 1.0,
      targetPeerRatio: 1.0,
    });

    // Bash. Two fresh servers that differ only in sandbox.enabled (each with its own user config dir, so
    // no user setting leaks in) show the sandbox's own cost apart from the spawn path; the long-lived
    // server, after the Edit series above, shows what a large RSS adds (every spawn forks the server).
    // Their workspace is a project as Claude Code users have one (a git repository, .claude/, .mcp.json),
    // where the sandbox for the next command is started ahead of it; a third, sandboxed in a bare
    // workspace, shows the cost where the stand-ins for missing control files are mounted as each command
    // comes (src/sandbox/mounter.ts).
    const project = join(fixtures, "project");
    mkdirSync(join(project, ".claude"), { recursive: true });
    writeFileSync(join(project, ".mcp.json"), "{}\n");
    await runCommand("git", ["init", "-q", project]);
    const bare = join(fixtures, "bare");
    mkdirSync(bare);
    const bashServer = async (name: string, enabled: boolean, workspace: string) => {
      const dir = join(fixtures, `config-${name}`);
      mkdirSync(dir);
      writeFileSync(join(dir, "settings.json"), JSON.stringify({ sandbox: { enabled } }));
      const args = [CLI, "mcp", "--cwd", workspace, "--permission-mode", "bypassPermissions"];
      return (await startServer(args, { CLAUDE_CONFIG_DIR: dir })).client;
    };
    const sandboxedServer = await bashServer("sandboxed", true, project);
    const unsandboxedServer = await bashServer("unsandboxed", false, project);
    const bareServer = await bashServer("bare", true, bare);
    try {
      const echo = (server: typeof ours) => () => server.call("Bash", { command: "echo hi" });
      const bashRss = sampleRss([sandboxedServer.pid, unsandboxedServer.pid, ours.pid, bareServer.pid]);
      const bash = await timeInterleaved(
        {
          sandboxed: echo(sandboxedServer),
          unsandboxed: echo(unsandboxedServer),
          bare: echo(bareServer),
          longLived: echo(ours),
          baseline: () => runCommand("bash", ["-c", "echo hi"], tree.dir),
        },
        options.quick ? 15 : 45,
        3,
        // Calls come seconds apart from a model: without a pause, each server would start its next shell
        // while the others' calls run, and the 2 cores' contention would blur the rows into each other.
        CALL_PAUSE_MS,
      );
      const [sandboxedRss, unsandboxedRss, longLivedRss, bareRss] = bashRss.stop();
      if (longLivedRss! > seriesPeak)
        options.info(`series peak so far: ${bashRss.parts()[2]!.join(" + ")} MB`);
      seriesPeak = Math.max(seriesPeak, longLivedRss!);
      report({
        name: "Bash echo hi, sandbox off",
        baseline: "bash -c",
        oursMs: bash.unsandboxed,
        baselineMs: bash.baseline,
        peakRssMb: unsandboxedRss,
        targetRatio: 1.1,
        note: "a fresh server with sandbox.enabled false: the spawn path and supervision alone",
      });
      report({
        name: "Bash echo hi, sandboxed (the default)",
        baseline: "bash -c",
        oursMs: bash.sandboxed,
        baselineMs: bash.baseline,
        peakRssMb: sandboxedRss,
        targetRatio: 1.1,
        note: "a fresh server as users run it, in a project: the sandbox for each command started ahead of it",
      });
      report({
        name: "Bash sandbox cost over MCP",
        baseline: "the same call, sandbox off",
        oursMs: bash.sandboxed,
        baselineMs: bash.unsandboxed,
        targetMs: bash.unsandboxed + 10,
        note: "issue 10's target: under 10 ms added per command",
      });
      report({
        name: "Bash sandbox cost over MCP, bare workspace",
        baseline: "the same call, sandbox off",
        oursMs: bash.bare,
        baselineMs: bash.unsandboxed,
        peakRssMb: bareRss,
        targetMs: bash.unsandboxed + 10,
        note: "no .git, .claude or .mcp.json: the sandbox waits without their stand-ins, which are mounted as the command comes",
      });
      report({
        name: "Bash echo hi, sandboxed, long-lived server",
        baseline: "bash -c",
        oursMs: bash.longLived,
        baselineMs: bash.baseline,
        peakRssMb: longLivedRss,
        targetRatio: 1.1,
        note: "the server that ran the series above: its RSS is copied by every spawn's fork",
      });
    } finally {
      await sandboxedServer.close();
      await unsandboxedServer.close();
      await bareServer.close();
    }

    options.memory({
      name: "peak RSS over the series",
      oursMb: seriesPeak,
      ...(peer ? { peer: PEER, peerMb: peerSeriesPeak } : {}),
      targetMb: 100,
    });
  } finally {
    await ours.close();
    await peer?.close();
    rmSync(fixtures, { recursive: true, force: true });
  }
};

export default bench;
