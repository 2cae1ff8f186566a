import type { HoldDecision, HoldRequest, LimitReset } from "@switchyard/contracts";
import { metrics, picoToDecimal, toPico, unauthorized, type Db, type HoldFigures, type Queryable } from "@switchyard/runtime";
import { expiredGraceMs, memoryHolds, type MemoryHolds } from "./memory-holds.js";
import { unlockedHolds } from "./leases.js";
import { holdIfUnbound, holdParams, insertHold, replaceHold } from "./unbound-holds.js";
import { windowStart, windowStarts, type WindowStarts } from "./windows.js";

const granted: HoldDecision = { granted: true };

interface Standing {
  limitedBy: "key" | "guardrail" | "organization";
  guardrailId: string | null;
  limit: bigint;
  spent: bigint;
  held: bigint;
}

/**
 * The key's limit, its settled spend in the limit's window and what other requests hold (in rows, and in
 * `memory` on an embedded database); the key row is locked.
 */
async function keyStanding(tx: Queryable, request: HoldRequest, starts: WindowStarts, memory?: MemoryHolds): Promise<Standing | undefined> {
  const [row] = await tx.query<{ spend_limit: string | null; limit_reset: "daily" | "weekly" | "monthly" | null; include_byok_in_limit: boolean; disabled: boolean; expired: boolean }>(
    `SELECT spend_limit::text, limit_reset, include_byok_in_limit, disabled, coalesce(expires_at <= now(), false) AS expired
     FROM identity.api_keys WHERE hash = $1 FOR UPDATE`,
    [request.key_hash],
  );
  // A router may still hold a key in its cache for a moment after it was deleted, disabled or expired: nothing
  // is held for it, and the client gets the 401 the router gives such a key (services/router/src/auth/authenticator.ts).
  if (!row) throw unauthorized("Invalid API key");
  if (row.disabled) throw unauthorized("API key is disabled");
  if (row.expired) throw unauthorized("API key has expired");
  if (row.spend_limit === null) return undefined;
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
  const inMemory = memory?.heldByKey(request.key_hash, request.generation_id, row.include_byok_in_limit) ?? 0n;
  return { limitedBy: "key", guardrailId: null, limit: toPico(row.spend_limit), spent: toPico(sums!.spent), held: toPico(sums!.held) + inMemory };
}

interface Budget {
  guardrail_id: string;
  limit_usd: string;
  reset_interval: LimitReset | null;
  include_byok: boolean;
}

export const guardrailLock = (guardrailId: string) => `switchyard.guardrail.${guardrailId}`;

/**
 * The budgets that bind the key, as catalog last wrote them here. Each binds every key on its own, as
 * OpenRouter's guardrail budgets do: a key's holds are serialized by its row's lock. A request shares each
 * guardrail's advisory lock, in id order, before its row is read, so a change of the budget (which takes it
 * alone, `writeBudgets`) waits for the holds being decided against the old one.
 */
async function budgetsOf(tx: Queryable, request: HoldRequest): Promise<Budget[]> {
  const ids = await tx.query<{ guardrail_id: string }>(
    `SELECT guardrail_id FROM identity.guardrail_budget_keys WHERE key_hash = $1 ORDER BY guardrail_id`,
    [request.key_hash],
  );
  if (ids.length === 0) return [];
  for (const { guardrail_id } of ids) await tx.query(`SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))`, [guardrailLock(guardrail_id)]);
  // BYOK spend counts only against the budgets that say so.
  return tx.query<Budget>(
    `SELECT guardrail_id, limit_usd::text, reset_interval, include_byok FROM identity.guardrail_budgets
     WHERE guardrail_id IN (SELECT unnest($1::text[])) AND (NOT $2 OR include_byok) ORDER BY guardrail_id`,
    [ids.map((r) => r.guardrail_id), request.is_byok],
  );
}

/** The key's spend in the budget's window and what its other requests hold, against the budget's limit. */
async function budgetStanding(tx: Queryable, request: HoldRequest, budget: Budget, starts: WindowStarts, memory?: MemoryHolds): Promise<Standing> {
  const [sums] = await tx.query<{ spent: string; held: string }>(
    `SELECT
       (SELECT coalesce(sum(cost + CASE WHEN $3 THEN byok_cost ELSE 0 END), 0) FROM identity.key_spend
         WHERE key_hash = $1 AND ($2::date IS NULL OR day >= $2::date))::text AS spent,
       (SELECT coalesce(sum(amount), 0) FROM identity.holds
         WHERE key_hash = $1 AND expires_at > now() AND generation_id <> $4 AND (NOT is_byok OR $3))::text AS held`,
    [request.key_hash, windowStart(budget.reset_interval, starts), budget.include_byok, request.generation_id],
  );
  const inMemory = memory?.heldByKey(request.key_hash, request.generation_id, budget.include_byok) ?? 0n;
  return { limitedBy: "guardrail", guardrailId: budget.guardrail_id, limit: toPico(budget.limit_usd), spent: toPico(sums!.spent), held: toPico(sums!.held) + inMemory };
}

const organizationLock = (organizationId: string) => `switchyard.organization.${organizationId}`;

/**
 * The organization's credit limit, when it has one and the request spends credits (BYOK does not): its
 * holds are serialized by an advisory lock on its id, taken after the key's row and the guardrails' locks
 * by every request, so no two wait on each other in a cycle.
 */
async function organizationStanding(tx: Queryable, request: HoldRequest, memory?: MemoryHolds): Promise<Standing | undefined> {
  if (request.is_byok) return undefined;
  // Share-locked until the hold is written, as the one-statement path does: a limit being set waits for it.
  const [org] = await tx.query<{ id: string; credit_limit: string | null }>(
    `SELECT id::text, credit_limit::text FROM identity.organizations
     WHERE id = (SELECT organization_id FROM identity.api_keys WHERE hash = $1) FOR KEY SHARE`,
    [request.key_hash],
  );
  if (!org || org.credit_limit === null) return undefined;
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [organizationLock(org.id)]);
  const [sums] = await tx.query<{ spent: string; held: string }>(
    `SELECT (SELECT coalesce(sum(cost), 0) FROM identity.organization_spend WHERE organization_id = $1)::text AS spent,
       (SELECT coalesce(sum(amount), 0) FROM identity.holds
         WHERE organization_id = $1 AND expires_at > now() AND generation_id <> $2 AND NOT is_byok)::text AS held`,
    [org.id, request.generation_id],
  );
  const held = toPico(sums!.held) + (memory?.heldByOrganization(org.id, request.generation_id) ?? 0n);
  return { limitedBy: "organization", guardrailId: null, limit: toPico(org.credit_limit), spent: toPico(sums!.spent), held };
}

/**
 * Reserves the worst case of one attempt, atomically against the key's limit and every guardrail budget
 * that binds the key: concurrent requests of one key are serialized here, so their holds
 * can never add up to more than what is left. Every request gets a hold, limited or not, so none reaches a
 * provider without a record here (a durable row, or memory on an embedded database: see `memory-holds.ts`),
 * and limits and budgets are read in the transaction that writes it: one set a moment ago binds the next
 * request, on every replica, with or without the bus.
 */
export async function placeHold(db: Db, request: HoldRequest, now = new Date()): Promise<HoldDecision> {
  const decision = await decideHold(db, request, now);
  metrics.holds.inc({ service: "identity", outcome: decision.granted ? "granted" : "refused" });
  return decision;
}

async function decideHold(db: Db, request: HoldRequest, now: Date): Promise<HoldDecision> {
  const memory = memoryHolds(db);
  const unbound = (await memory?.hold(db, request)) ?? (await holdIfUnbound(db, request));
  if (unbound) return granted;
  const amount = toPico(request.amount_usd);
  const starts = windowStarts(now);
  const decision = await db.transaction(async (tx) => {
    const standings: Standing[] = [];
    const key = await keyStanding(tx, request, starts, memory);
    if (key) standings.push(key);
    const budgets = await budgetsOf(tx, request);
    for (const budget of budgets) standings.push(await budgetStanding(tx, request, budget, starts, memory));
    const organization = await organizationStanding(tx, request, memory);
    if (organization) standings.push(organization);
    for (const s of standings) {
      const remaining = s.limit - s.spent - s.held;
      if (amount <= remaining) continue;
      const left = remaining > 0n ? remaining : 0n;
      return { granted: false, limited_by: s.limitedBy, guardrail_id: s.guardrailId, exhausted: s.spent >= s.limit, remaining_usd: picoToDecimal(left) };
    }
    await tx.query(`${insertHold} ${replaceHold}`, holdParams(request, budgets.map((b) => b.guardrail_id)));
    return granted;
  });
  // The row replaces what an earlier attempt of the generation held in memory.
  if (decision.granted) memory?.drop([request.generation_id]);
  return decision;
}

/** Frees a generation's hold at once: it ended before there was a charge to make. */
export async function releaseHold(db: Queryable, generationId: string): Promise<boolean> {
  const inMemory = memoryHolds(db)?.drop([generationId]) ?? 0;
  const rows = await db.query(`DELETE FROM identity.holds WHERE generation_id = $1 RETURNING 1`, [generationId]);
  const released = rows.length > 0 || inMemory > 0;
  if (released) metrics.holds.inc({ service: "identity", outcome: "released" });
  return released;
}

/** Expired holds count for nothing already; this only keeps the table small (a late charge settling one keeps it). */
export async function deleteExpiredHolds(db: Queryable): Promise<number> {
  const expired = unlockedHolds("expires_at < now() - make_interval(secs => $1::double precision / 1000)");
  const rows = await db.query(`DELETE FROM identity.holds WHERE generation_id IN (${expired}) RETURNING 1`, [expiredGraceMs]);
  const deleted = rows.length + (memoryHolds(db)?.dropExpired() ?? 0);
  if (deleted > 0) metrics.holds.inc({ service: "identity", outcome: "expired" }, deleted);
  return deleted;
}

/** Holds still in the table: within their deadline, or past it and never settled (what a leak looks like). */
export async function openHolds(db: Queryable): Promise<HoldFigures> {
  const [row] = await db.query<{ active: number; expired: number }>(
    `SELECT count(*) FILTER (WHERE expires_at > now())::int AS active, count(*) FILTER (WHERE expires_at <= now())::int AS expired FROM identity.holds`,
  );
  const inMemory = memoryHolds(db)?.counts() ?? { active: 0, expired: 0 };
  return { active: (row?.active ?? 0) + inMemory.active, expired: (row?.expired ?? 0) + inMemory.expired };
}
