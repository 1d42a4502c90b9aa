import { statSync } from "node:fs";
import { isAbsolute, sep } from "node:path";

/**
 * Newest-first orders of search results. Ties are broken by path, so the order is stable from run to run.
 * Paths are display paths (relative to the working dir, or absolute outside it).
 */

export function mtimeOf(cwdPrefix: string, path: string): number | undefined {
  return statSync(isAbsolute(path) ? path : cwdPrefix + path, { throwIfNoEntry: false })?.mtimeMs;
}

export function withSep(cwd: string): string {
  return cwd.endsWith(sep) ? cwd : cwd + sep;
}

/** Indexes of `paths` in newest-first order. */
function newestFirstOrder(paths: readonly string[], times: readonly number[], indexes: number[]): number[] {
  return indexes.sort(
    (a, b) => times[b]! - times[a]! || (paths[a]! < paths[b]! ? -1 : paths[a]! > paths[b]! ? 1 : 0),
  );
}

/**
 * Collects paths as a search streams them in any order, stats each at once so the stats overlap with
 * ripgrep's work, then sorts newest first. Synchronous stats: measured faster than fs.promises.stat at any
 * concurrency; each stream chunk blocks the loop for only a few milliseconds.
 */
export class NewestFirst {
  private readonly paths: string[] = [];
  private readonly times: number[] = [];
  private readonly prefix: string;

  constructor(cwd: string) {
    this.prefix = withSep(cwd);
  }

  readonly add = (path: string): void => {
    this.paths.push(path);
    // A file gone since it was found sorts last rather than failing the search.
    this.times.push(mtimeOf(this.prefix, path) ?? 0);
  };

  get size(): number {
    return this.paths.length;
  }

  /**
   * The `limit` newest paths. Only those are sorted with the (string) tie-break: a numeric sort of the
   * times finds the cut-off first, which costs far less on large listings.
   */
  newest(limit: number): string[] {
    const { paths, times } = this;
    let order = Array.from(paths.keys());
    if (limit < paths.length) {
      const cutoff = Float64Array.from(times).sort()[paths.length - limit]!;
      order = order.filter((i) => times[i]! >= cutoff);
    }
    return newestFirstOrder(paths, times, order)
      .slice(0, limit)
      .map((i) => paths[i]!);
  }
}

/**
 * Reads a listing that is already newest first (`rg --sortr modified`) and keeps only its head: the first
 * `limit` paths and any that tie with the last of them. Only the head is statted again, to order ties by
 * path; the rest is only counted. Letting rg stat while it walks costs about half the CPU of statting every
 * path from JavaScript (Stats objects, Dates, garbage), measured in bench/search.ts.
 */
export class NewestOfSorted {
  private readonly paths: string[] = [];
  private readonly times: number[] = [];
  private readonly prefix: string;
  private headComplete = false;
  private gone = 0;
  private seen = 0;

  constructor(
    cwd: string,
    private readonly limit: number,
  ) {
    this.prefix = withSep(cwd);
  }

  /** False once the head is complete: later paths need only be counted (with `skip`). */
  get wantsPaths(): boolean {
    return !this.headComplete;
  }

  add(path: string): void {
    this.seen++;
    const time = mtimeOf(this.prefix, path);
    if (time === undefined) {
      // Deleted since the listing: not a match any more.
      this.gone++;
      return;
    }
    if (this.paths.length >= this.limit && time < this.times[this.times.length - 1]!) {
      this.headComplete = true;
      return;
    }
    this.paths.push(path);
    this.times.push(time);
  }

  skip(): void {
    this.seen++;
  }

  get size(): number {
    return this.seen - this.gone;
  }

  newest(): string[] {
    return newestOf([this.head], this.limit);
  }

  /** The kept paths with their times, for merging with other listings (see newestOf). */
  get head(): TimedPaths {
    return { paths: this.paths, times: this.times };
  }
}

export interface TimedPaths {
  paths: readonly string[];
  times: readonly number[];
}

/** The `limit` newest of several sets of timed paths, newest first with ties by path. */
export function newestOf(sets: readonly TimedPaths[], limit: number): string[] {
  const paths = sets.flatMap((s) => s.paths);
  const times = sets.flatMap((s) => s.times);
  return newestFirstOrder(paths, times, Array.from(paths.keys()))
    .slice(0, limit)
    .map((i) => paths[i]!);
}
