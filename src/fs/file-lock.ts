/**
 * Serialises work on one file: parallel Edit/Write calls on the same path run one after another, so
 * none of them reads a version another is about to replace. Process-wide on purpose: two sessions in one
 * process editing the same file must not interleave either.
 */
const tails = new Map<string, Promise<unknown>>();

export async function withFileLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  const previous = tails.get(path) ?? Promise.resolve();
  const run = previous.then(work, work);
  const tail = run.catch(() => undefined);
  tails.set(path, tail);
  try {
    return await run;
  } finally {
    if (tails.get(path) === tail) tails.delete(path);
  }
}
