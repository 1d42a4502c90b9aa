import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const WORKER = fileURLToPath(new URL("../fixtures/reliability/tool-worker.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface Answer {
  isError: boolean;
  text: string;
}

/** A tool-running child process (see tool-worker.ts) with its own session, driven call by call. */
export class ToolWorker {
  readonly child: ChildProcess;
  readonly ready: Promise<number>;
  private next = 0;
  private readonly waiting = new Map<number, (answer: Answer) => void>();

  constructor(workingDir: string) {
    this.child = spawn(process.execPath, ["--import", "tsx", WORKER, workingDir], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "inherit"],
    });
    // Calls sent after a kill go nowhere; their promises stay pending, which the harnesses expect.
    this.child.stdin!.on("error", () => {});
    let signalReady!: (pid: number) => void;
    this.ready = new Promise((resolve) => {
      signalReady = resolve;
    });
    createInterface({ input: this.child.stdout! }).on("line", (line) => {
      const message = JSON.parse(line) as { ready?: number; id?: number } & Answer;
      if (message.ready) return signalReady(message.ready);
      this.waiting.get(message.id!)?.(message);
      this.waiting.delete(message.id!);
    });
  }

  call(tool: string, input: Record<string, unknown>): Promise<Answer> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.stdin!.write(`${JSON.stringify({ id, tool, input })}\n`);
    });
  }

  stop(): void {
    this.child.kill("SIGKILL");
  }
}
