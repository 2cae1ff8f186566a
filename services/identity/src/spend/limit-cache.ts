/**
 * Which keys have no spending limit, remembered so that the hold of a request on such a key (most keys)
 * costs no database query. Entries are dropped when a key changes — at once for changes made by this
 * process, on the key's event for changes made by another replica — and after `ttlMs` in any case.
 */
export function createLimitCache(ttlMs = 30_000, now: () => number = Date.now) {
  const unlimitedUntil = new Map<string, number>();
  // Bumped by every change: a read that started before a change may not store what it read.
  let epoch = 0;
  return {
    unlimited: (hash: string) => (unlimitedUntil.get(hash) ?? 0) > now(),
    /** Runs `read` (whether the key has a limit) and remembers a "no" unless a key changed meanwhile. */
    async limited(hash: string, read: () => Promise<boolean>): Promise<boolean> {
      const started = epoch;
      const limited = await read();
      if (!limited && started === epoch) {
        if (unlimitedUntil.size >= 100_000) unlimitedUntil.clear();
        unlimitedUntil.set(hash, now() + ttlMs);
      }
      return limited;
    },
    forget(hash: string): void {
      epoch++;
      unlimitedUntil.delete(hash);
    },
  };
}
export type LimitCache = ReturnType<typeof createLimitCache>;
