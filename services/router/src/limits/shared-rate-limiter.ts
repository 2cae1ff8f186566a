import type { Db } from "@switchyard/runtime";
import { decide, type RateLimiter } from "./rate-limiter.js";

const windowMs = 60_000;

interface KeyCount {
  window: number;
  /** Every replica's hits in the previous and current minute, as of the last exchange with Postgres. */
  previous: number;
  current: number;
  /** Hits admitted here since then, not yet added to the shared count. */
  unsent: number;
  /** Hits on their way to the shared count in an exchange under way: still counted here until it answers. */
  sending: number;
}

export interface SharedRateLimiterOptions {
  /** How often this replica adds its hits to the shared counts and reads everyone else's. */
  syncMs?: number;
  now?: () => number;
}

/**
 * Shared by every router replica through Postgres without a database round trip per request. A key's
 * first request in a minute counts and reads the shared figure at once; after that each replica decides
 * from the shared figure plus its own hits since, and every `syncMs` adds its hits to the shared counts
 * and reads back everyone's, for all keys in one statement. Between two exchanges each replica may admit
 * what it believes is left, so N replicas can overshoot by at most what N−1 of them admit in `syncMs`:
 * limits stay shared, and money is guarded by holds, not by rate limits.
 */
export function sharedRateLimiter(db: Db, options: SharedRateLimiterOptions = {}): RateLimiter {
  const now = options.now ?? Date.now;
  const syncMs = options.syncMs ?? 100;
  const counts = new Map<string, KeyCount>();
  /** Hits admitted in a minute that ended before they reached the shared count: still that minute's, per key. */
  const owed = new Map<number, Map<string, number>>();
  const owe = (window: number, key: string, n: number) => {
    // A refused first sight left −1: it too is owed, to take back the hit counted for it.
    if (n === 0) return;
    const hits = owed.get(window) ?? new Map<string, number>();
    owed.set(window, hits.set(key, (hits.get(key) ?? 0) + n));
  };
  /** A key's count of a minute that has ended: its unsent hits are owed to that minute, and the count goes. */
  const retire = (key: string, c: KeyCount) => {
    owe(c.window, key, c.unsent);
    counts.delete(key);
  };
  let syncing: Promise<void> | undefined;
  let sweepAt = 0;

  /** Adds `hits` per key to the shared counts of `window`; returns each key's shared current and previous. */
  function exchange(window: number, hits: Map<string, number>) {
    return db.query<{ key_hash: string; current: number; previous: number }>(
      `WITH hit AS (
         INSERT INTO router.rate_windows (key_hash, window_start, count)
         SELECT key_hash, $1, n FROM unnest($2::text[], $3::int[]) AS h(key_hash, n)
         ON CONFLICT (key_hash, window_start) DO UPDATE SET count = router.rate_windows.count + EXCLUDED.count
         RETURNING key_hash, count)
       SELECT hit.key_hash, hit.count AS current, COALESCE(p.count, 0) AS previous
       FROM hit LEFT JOIN router.rate_windows p ON p.key_hash = hit.key_hash AND p.window_start = $1 - 1`,
      [window, [...hits.keys()], [...hits.values()]],
    );
  }

  /** Adds what earlier minutes are owed; what fails stays owed for the next exchange. */
  async function payOwed(): Promise<void> {
    for (const [window, hits] of owed) {
      owed.delete(window);
      try {
        await exchange(window, hits);
      } catch (error) {
        for (const [key, n] of hits) owe(window, key, n);
        throw error;
      }
    }
  }

  async function sync(): Promise<void> {
    const window = Math.floor(now() / windowMs);
    const hits = new Map<string, number>();
    for (const [key, c] of counts) {
      // The minute turned before these hits were sent: they still count in that minute (the next one's "previous").
      if (c.window === window) hits.set(key, c.unsent);
      else retire(key, c);
    }
    await payOwed();
    if (hits.size === 0) return;
    for (const [key, n] of hits) Object.assign(counts.get(key)!, { unsent: 0, sending: n });
    try {
      for (const row of await exchange(window, hits)) {
        const c = counts.get(row.key_hash);
        // Hits admitted while the statement ran are still in `unsent`; the shared figure holds the rest.
        if (c?.window === window) Object.assign(c, { current: row.current, previous: row.previous, sending: 0 });
      }
    } catch (error) {
      for (const [key, n] of hits) {
        const c = counts.get(key);
        if (c?.window === window) Object.assign(c, { unsent: c.unsent + c.sending, sending: 0 });
        else owe(window, key, n);
      }
      throw error;
    }
  }

  const timer = setInterval(() => {
    syncing ??= sync()
      .catch(() => undefined)
      .finally(() => (syncing = undefined));
  }, syncMs);
  timer.unref();

  return {
    async hit(key, perMinute) {
      const t = now();
      const window = Math.floor(t / windowMs);
      if (t > sweepAt) {
        sweepAt = t + windowMs;
        await db.query(`DELETE FROM router.rate_windows WHERE window_start < $1`, [window - 1]);
      }
      let c = counts.get(key);
      if (c?.window !== window) {
        if (c) retire(key, c);
        // First sight of this key in this minute: count and read the shared figure now.
        const [row] = await exchange(window, new Map([[key, 1]]));
        c = { window, previous: row?.previous ?? 0, current: row?.current ?? 1, unsent: 0, sending: 0 };
        counts.set(key, c);
        const decision = decide(c.previous, c.current, perMinute, t);
        // Only admitted requests count, as in memory: a refused one is taken back at the next exchange.
        if (!decision.allowed) c.unsent = -1;
        return decision;
      }
      const decision = decide(c.previous, c.current + c.sending + c.unsent + 1, perMinute, t);
      if (decision.allowed) c.unsent++;
      return decision;
    },
    async close() {
      clearInterval(timer);
      await syncing;
      await sync().catch(() => undefined);
    },
  };
}
