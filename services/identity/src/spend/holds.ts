import type { HoldDecision, HoldRequest, SpendBudget } from "@switchyard/contracts";
import { metrics, picoToDecimal, toPico, type Db, type HoldFigures, type Queryable } from "@switchyard/runtime";
import { windowStart, windowStarts, type WindowStarts } from "./windows.js";

const granted: HoldDecision = { granted: true };

interface Standing {
  limitedBy: "key" | "guardrail";
  guardrailId: string | null;
  limit: bigint;
  spent: bigint;
  held: bigint;
}

/** The key's limit, its settled spend in the limit's window and what other requests hold; the key row is locked. */
async function keyStanding(tx: Queryable, request: HoldRequest, starts: WindowStarts): Promise<Standing | undefined> {
  const [row] = await tx.query<{ spend_limit: string | null; limit_reset: "daily" | "weekly" | "monthly" | null; include_byok_in_limit: boolean }>(
    `SELECT spend_limit::text, limit_reset, include_byok_in_limit FROM identity.api_keys WHERE hash = $1 FOR UPDATE`,
    [request.key_hash],
  );
  if (!row || row.spend_limit === null) return undefined;
  // BYOK spend counts only when the key says so; a BYOK request against such a limit reserves nothing.
  if (request.is_byok && !row.include_byok_in_limit) return undefined;
  const [sums] = await tx.query<{ spent: string; held: string }>(
    `SELECT
       (SELECT coalesce(sum(cost + CASE WHEN $3 THEN byok_cost ELSE 0 END), 0) FROM identity.key_spend
         WHERE key_hash = $1 AND ($2::date IS NULL OR day >= $2::date))::text AS spent,
       (SELECT coalesce(sum(amount), 0) FROM identity.holds
         WHERE key_hash = $1 AND expires_at > now() AND generation_id <> $4 AND (NOT is_byok OR $3))::text AS held`,
    [request.key_hash, windowStart(row.limit_reset, starts), row.include_byok_in_limit, request.generation_id],
  );
  return { limitedBy: "key", guardrailId: null, limit: toPico(row.spend_limit), spent: toPico(sums!.spent), held: toPico(sums!.held) };
}

/**
 * A guardrail's budget is shared by every key assigned to it, so its holds are serialized by an advisory
 * lock on its id (taken in id order by every request, so two requests never wait on each other in a cycle).
 */
async function budgetStanding(tx: Queryable, request: HoldRequest, budget: SpendBudget, starts: WindowStarts): Promise<Standing> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`switchyard.guardrail.${budget.guardrail_id}`]);
  const [sums] = await tx.query<{ spent: string; held: string }>(
    `SELECT
       (SELECT coalesce(sum(cost + CASE WHEN $3 THEN byok_cost ELSE 0 END), 0) FROM identity.guardrail_spend
         WHERE guardrail_id = $1 AND ($2::date IS NULL OR day >= $2::date))::text AS spent,
       (SELECT coalesce(sum(amount), 0) FROM identity.holds
         WHERE guardrail_ids @> ARRAY[$1]::text[] AND expires_at > now() AND generation_id <> $4 AND (NOT is_byok OR $3))::text AS held`,
    [budget.guardrail_id, windowStart(budget.reset_interval, starts), budget.include_byok, request.generation_id],
  );
  return { limitedBy: "guardrail", guardrailId: budget.guardrail_id, limit: toPico(budget.limit_usd), spent: toPico(sums!.spent), held: toPico(sums!.held) };
}

/** Writes the hold; asking again for the same generation (its next attempt) replaces its amount and lease. */
const insertHold = `
  INSERT INTO identity.holds (generation_id, key_hash, guardrail_ids, amount, is_byok, expires_at, owner, lease_until)
  SELECT $1, $2, $3::text[], $4::numeric, $5, now() + make_interval(secs => $6::double precision / 1000), $7,
    now() + make_interval(secs => $8::double precision / 1000)`;
const replaceHold = `
  ON CONFLICT (generation_id) DO UPDATE SET amount = excluded.amount, guardrail_ids = excluded.guardrail_ids,
    expires_at = excluded.expires_at, owner = excluded.owner, lease_until = excluded.lease_until`;

const holdParams = (request: HoldRequest, guardrailIds: string[]) => [
  request.generation_id,
  request.key_hash,
  guardrailIds,
  request.amount_usd,
  request.is_byok,
  request.ttl_ms,
  request.owner ?? null,
  // Without an owner nothing renews a lease: the hold lives until it expires (a NULL interval gives a NULL lease).
  request.owner === undefined ? null : (request.lease_ms ?? null),
];

/**
 * Reserves the worst case of one attempt, atomically against the key's limit and every guardrail budget:
 * concurrent requests of one key (or one guardrail) are serialized here, so their holds can never add up
 * to more than what is left. Every request gets a hold, limited or not, so none reaches a provider without
 * a durable record here, and the limit is read in the statement that writes it: a limit set a moment ago
 * binds the next request, on every replica, with or without the bus.
 */
export async function placeHold(db: Db, request: HoldRequest, now = new Date()): Promise<HoldDecision> {
  const decision = await decideHold(db, request, now);
  metrics.holds.inc({ outcome: decision.granted ? "granted" : "refused" });
  return decision;
}

/**
 * Most requests: no guardrail budget and a key without a limit. One statement (one round trip) writes the
 * hold unless the key has a limit, under a share lock on the key's row, so a limit being set waits for it
 * and then finds it among the holds. Returns false when the key has a limit that applies.
 */
async function holdIfUnlimited(db: Queryable, request: HoldRequest): Promise<boolean> {
  const rows = await db.query(
    `WITH key AS (
       SELECT spend_limit IS NOT NULL AND (NOT $5 OR include_byok_in_limit) AS limited FROM identity.api_keys WHERE hash = $2 FOR SHARE
     )
     ${insertHold} WHERE NOT EXISTS (SELECT 1 FROM key WHERE limited)
     ${replaceHold}
     RETURNING 1`,
    holdParams(request, []),
  );
  return rows.length > 0;
}

async function decideHold(db: Db, request: HoldRequest, now: Date): Promise<HoldDecision> {
  const budgets = request.budgets.filter((b) => !request.is_byok || b.include_byok).sort((a, b) => (a.guardrail_id < b.guardrail_id ? -1 : 1));
  if (budgets.length === 0 && (await holdIfUnlimited(db, request))) return granted;
  const amount = toPico(request.amount_usd);
  const starts = windowStarts(now);
  return db.transaction(async (tx) => {
    const standings: Standing[] = [];
    const key = await keyStanding(tx, request, starts);
    if (key) standings.push(key);
    for (const budget of budgets) standings.push(await budgetStanding(tx, request, budget, starts));
    for (const s of standings) {
      const remaining = s.limit - s.spent - s.held;
      if (amount <= remaining) continue;
      const left = remaining > 0n ? remaining : 0n;
      return { granted: false, limited_by: s.limitedBy, guardrail_id: s.guardrailId, exhausted: s.spent >= s.limit, remaining_usd: picoToDecimal(left) };
    }
    await tx.query(`${insertHold} ${replaceHold}`, holdParams(request, budgets.map((b) => b.guardrail_id)));
    return granted;
  });
}

/** Frees a generation's hold at once: it ended before anything could be charged. */
export async function releaseHold(db: Queryable, generationId: string): Promise<boolean> {
  const rows = await db.query(`DELETE FROM identity.holds WHERE generation_id = $1 RETURNING 1`, [generationId]);
  if (rows.length > 0) metrics.holds.inc({ outcome: "released" });
  return rows.length > 0;
}

/** Expired holds count for nothing already; this only keeps the table small. */
export async function deleteExpiredHolds(db: Queryable): Promise<number> {
  const rows = await db.query(`DELETE FROM identity.holds WHERE expires_at < now() - interval '1 minute' RETURNING 1`);
  if (rows.length > 0) metrics.holds.inc({ outcome: "expired" }, rows.length);
  return rows.length;
}

/** Holds still in the table: within their deadline, or past it and never settled (what a leak looks like). */
export async function openHolds(db: Queryable): Promise<HoldFigures> {
  const [row] = await db.query<{ active: number; expired: number }>(
    `SELECT count(*) FILTER (WHERE expires_at > now())::int AS active, count(*) FILTER (WHERE expires_at <= now())::int AS expired FROM identity.holds`,
  );
  return { active: row?.active ?? 0, expired: row?.expired ?? 0 };
}
