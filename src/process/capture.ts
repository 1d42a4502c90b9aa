import { closeSync, openSync, writeSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";

/**
 * Most bytes one command's output file may hold. Past it the file stops growing (the tail is still kept in
 * memory), so a command printing forever fills neither memory nor the disk.
 */
export const MAX_OUTPUT_FILE_BYTES = 64 * 1024 * 1024;

export interface CaptureOptions {
  /** Output up to this many characters is kept whole in memory; past it, it goes to a file. */
  inlineChars: number;
  /** How much of the start and the end is kept in memory once the output is past `inlineChars`. */
  headChars: number;
  tailChars: number;
  /** The file's path, asked for once, when the output first needs a file. */
  filePath: () => string;
  /** Write the file from the first byte (background jobs: their output file exists from the start). */
  eagerFile?: boolean;
  /** Largest the file may grow; MAX_OUTPUT_FILE_BYTES by default. */
  maxFileBytes?: number;
}

/** What a command has printed so far, in bounded form. */
export interface OutputSnapshot {
  /** The whole output, when it is at most `inlineChars` long. */
  whole: string | undefined;
  head: string;
  tail: string;
  totalChars: number;
  /** The file holding the output, when there is one. */
  file: string | undefined;
  /** False when the file stopped growing at MAX_OUTPUT_FILE_BYTES. */
  fileComplete: boolean;
}

/**
 * Collects a command's output with a fixed memory bound: whole while short; past the inline limit, the
 * head and a rolling tail stay in memory and every byte goes to a file (written synchronously, so a fast
 * producer cannot pile up unwritten buffers).
 */
export class OutputCapture {
  private decoder = new StringDecoder("utf8");
  private pending: Buffer[] = [];
  private inline = "";
  private head = "";
  private tail = "";
  private total = 0;
  private fd: number | undefined;
  private path: string | undefined;
  private fileBytes = 0;
  private fileComplete = true;
  private spilled = false;
  /** When output last arrived (ms since epoch); the start time before any output. */
  lastOutputAt = Date.now();

  constructor(private readonly options: CaptureOptions) {
    if (options.eagerFile) this.openFile();
  }

  get file(): string | undefined {
    return this.path;
  }

  write(chunk: Buffer): void {
    this.lastOutputAt = Date.now();
    const text = this.decoder.write(chunk);
    this.total += text.length;
    this.appendTail(text);
    if (this.fd !== undefined) this.writeFile(chunk);
    if (this.spilled) return;
    if (this.total <= this.options.inlineChars) {
      this.inline += text;
      if (this.fd === undefined) this.pending.push(chunk);
      return;
    }
    this.spilled = true;
    this.head = (this.inline + text).slice(0, this.options.headChars);
    this.inline = "";
    if (this.fd === undefined) {
      this.openFile();
      for (const buffered of this.pending) this.writeFile(buffered);
      this.writeFile(chunk);
    }
    this.pending = [];
  }

  /** Closes the file; the snapshot stays readable. */
  finish(): void {
    const rest = this.decoder.end();
    if (rest) {
      this.total += rest.length;
      this.appendTail(rest);
      if (!this.spilled) this.inline += rest;
    }
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /**
   * Forgets all output so far and empties the file (which keeps its path): for a command that is started
   * again because its first start never ran it (the sandbox could not be set up).
   */
  restart(): void {
    this.decoder = new StringDecoder("utf8");
    this.pending = [];
    this.inline = this.head = this.tail = "";
    this.total = this.fileBytes = 0;
    this.fileComplete = true;
    this.spilled = false;
    this.lastOutputAt = Date.now();
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = openSync(this.path!, "w");
  }

  snapshot(): OutputSnapshot {
    return {
      whole: this.spilled ? undefined : this.inline,
      head: this.spilled ? this.head : this.inline,
      tail: this.tail.slice(-this.options.tailChars),
      totalChars: this.total,
      file: this.path,
      fileComplete: this.fileComplete,
    };
  }

  private appendTail(text: string): void {
    this.tail += text;
    // Slicing only when the tail has doubled keeps the work per chunk constant.
    if (this.tail.length > 2 * this.options.tailChars) this.tail = this.tail.slice(-this.options.tailChars);
  }

  private openFile(): void {
    this.path = this.options.filePath();
    this.fd = openSync(this.path, "w");
  }

  private writeFile(chunk: Buffer): void {
    const room = (this.options.maxFileBytes ?? MAX_OUTPUT_FILE_BYTES) - this.fileBytes;
    if (room <= 0) {
      this.fileComplete = false;
      return;
    }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length < chunk.length) this.fileComplete = false;
    writeSync(this.fd!, part);
    this.fileBytes += part.length;
  }
}
