// Bounded concurrency for work that waits on libuv's thread pool (file system
// calls): enough in flight to keep the pool's threads busy, not a promise per
// item of a folder of 100,000.

/** Runs fn over items, at most `limit` at once; resolves when all are done, rejects with the first failure. */
export async function eachLimit<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
