/** Runs functions with the same key one after another, in the order they asked. */
export function keyedLock() {
  const tails = new Map<string, Promise<unknown>>();
  return async function lock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = tails.get(key) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(fn);
    tails.set(key, run);
    try {
      return await run;
    } finally {
      if (tails.get(key) === run) tails.delete(key);
    }
  };
}
