import type { Db } from "@switchyard/runtime";

/** What one lease statement answered: this replica's grant and the shared figures it was decided on. */
export interface LeaseAnswer {
  /** Requests this replica may admit now; 0 when the key's allowance for the minute is used up. */
  granted: number;
  /** Requests leased to every replica in this minute so far, this grant included. */
  leased: number;
  /** Requests counted in the previous minute (leased, less what replicas gave back unused). */
  previous: number;
}

/**
 * One statement per slice: reads the previous minute, decides the grant under the row's lock and adds it
 * to the minute's leased count. Concurrent leases of one key queue on that row, and each sees the count the
 * one before left (an upsert's DO UPDATE always works on the newest row version), so their grants together
 * never pass the allowance. `fade` is the share of the previous minute still inside the sliding window;
 * `returned` requests this replica leased and will not admit go back first.
 */
export async function leaseSlice(db: Db, key: string, window: number, perMinute: number, fade: number, wanted: number, returned = 0): Promise<LeaseAnswer> {
  const [row] = await db.query<LeaseAnswer>(
    `WITH p AS (
       SELECT COALESCE((SELECT count FROM router.rate_windows WHERE key_hash = $1 AND window_start = $2 - 1), 0) AS n)
     , up AS (
       INSERT INTO router.rate_windows AS w (key_hash, window_start, count, granted)
       SELECT $1, $2, router.rate_grant($3, $4, p.n, 0, $5), router.rate_grant($3, $4, p.n, 0, $5) FROM p
       ON CONFLICT (key_hash, window_start) DO UPDATE
         SET count = GREATEST(0, w.count - $6::int) + router.rate_grant($3, $4, (SELECT n FROM p), GREATEST(0, w.count - $6::int), $5),
             granted = router.rate_grant($3, $4, (SELECT n FROM p), GREATEST(0, w.count - $6::int), $5)
       RETURNING w.count, w.granted)
     SELECT up.granted, up.count AS leased, p.n AS previous FROM up, p`,
    [key, window, perMinute, fade, wanted, returned],
  );
  if (!row) throw new Error("rate lease statement returned no row");
  return row;
}

/** Gives back, per key, what replicas leased in `window` and did not use, so the next minute weighs only admitted requests. */
export async function giveBack(db: Db, window: number, unused: Map<string, number>): Promise<void> {
  await db.query(
    `UPDATE router.rate_windows w SET count = GREATEST(0, w.count - r.n)
     FROM unnest($2::text[], $3::int[]) AS r(key_hash, n)
     WHERE w.window_start = $1 AND w.key_hash = r.key_hash`,
    [window, [...unused.keys()], [...unused.values()]],
  );
}

/** Minutes before the previous one no longer weigh on a decision. */
export async function sweepWindows(db: Db, window: number): Promise<void> {
  await db.query(`DELETE FROM router.rate_windows WHERE window_start < $1`, [window - 1]);
}
