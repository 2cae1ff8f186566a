import { metrics, type Logger, type Queryable } from "@switchyard/runtime";

/**
 * A hold taken by a replica carries that replica as its owner and a lease the replica renews while it
 * lives. A replica that dies (SIGKILL, out of memory, a node lost) stops renewing: its holds are freed
 * when the lease lapses instead of blocking the key until they expire.
 */

/**
 * The holds that meet `condition`, locked for the statement that changes them, passing over those another
 * transaction has locked instead of waiting for them. Every statement on several holds at once takes them
 * this way (the lease statements here, the sweep of expired holds): the ledger deletes the holds of a batch
 * of charges in one statement, in its own order, and a statement waiting for one of them while holding
 * another it wanted had Postgres fail one of the two as a deadlock. A locked hold is being deleted or given a
 * new lease; one whose transaction rolls back is taken by the next renewal or sweep.
 */
export const unlockedHolds = (condition: string): string => `SELECT generation_id FROM identity.holds WHERE ${condition} FOR UPDATE SKIP LOCKED`;

/** The owner's ($1) holds under a lease. */
const leasedBy = unlockedHolds("owner = $1 AND lease_until IS NOT NULL");

/** A live replica extends the lease of every hold it owns; returns the count. It renews every third of a lease. */
export async function renewHolds(db: Queryable, owner: string, leaseMs: number): Promise<number> {
  const rows = await db.query(
    `UPDATE identity.holds SET lease_until = now() + make_interval(secs => $2::double precision / 1000)
     WHERE generation_id IN (${leasedBy}) RETURNING 1`,
    [owner, leaseMs],
  );
  return rows.length;
}

/**
 * A replica starting again frees what its previous run held under a lease: those requests died with it.
 * Holds it detached when it drained wait for their charges.
 */
export async function releaseOwnerHolds(db: Queryable, owner: string): Promise<number> {
  const rows = await db.query(`DELETE FROM identity.holds WHERE generation_id IN (${leasedBy}) RETURNING 1`, [owner]);
  if (rows.length > 0) metrics.holds.inc({ service: "identity", outcome: "reaped" }, rows.length);
  return rows.length;
}

/**
 * A replica that drained has no request left: its holds are charges on their way (in its outbox while the
 * bus is down) or releases that failed. They keep counting, without a lease, until settled or expired. One a
 * settlement has locked is being deleted; were that settlement to roll back, the hold would keep its lease and
 * be freed when it lapses, as every hold is when a drain cannot reach identity.
 */
export async function detachOwnerHolds(db: Queryable, owner: string): Promise<number> {
  const rows = await db.query(`UPDATE identity.holds SET lease_until = NULL WHERE generation_id IN (${leasedBy}) RETURNING 1`, [owner]);
  return rows.length;
}

/** Frees the holds whose owner stopped renewing them. */
export async function reapLapsedHolds(db: Queryable): Promise<number> {
  const rows = await db.query(`DELETE FROM identity.holds WHERE generation_id IN (${unlockedHolds("lease_until < now()")}) RETURNING 1`);
  if (rows.length > 0) metrics.holds.inc({ service: "identity", outcome: "reaped" }, rows.length);
  return rows.length;
}

export interface ReaperOptions {
  db: Queryable;
  logger: Logger;
  everyMs: number;
  /** The longest lease replicas take: after the database was unreachable, that long passes before reaping. */
  leaseMs: number;
  now?: () => number;
}

/**
 * Reaps lapsed holds every `everyMs`. While identity's database was unreachable no replica could renew a
 * lease, so every lease may have lapsed through no fault of its owner: after an outage the reaper waits one
 * lease, which gives live replicas a renewal, before it frees a hold.
 */
export function startHoldReaper(options: ReaperOptions): { stop(): void; sweep(): Promise<void> } {
  const now = options.now ?? Date.now;
  let healthySince: number | undefined;
  let running = false;
  async function sweep(): Promise<void> {
    if (running) return;
    running = true;
    try {
      await options.db.query("SELECT 1");
      healthySince ??= now();
      if (now() - healthySince < options.leaseMs) return;
      const reaped = await reapLapsedHolds(options.db);
      if (reaped > 0) options.logger.info({ reaped }, "spend holds of replicas that stopped renewing them released");
    } catch (error) {
      healthySince = undefined;
      options.logger.warn({ err: error }, "could not reap lapsed spend holds");
    } finally {
      running = false;
    }
  }
  const timer = setInterval(() => void sweep(), options.everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer), sweep };
}
