import type { EventEnvelope } from "@switchyard/contracts";
import { type Bus, type Db, type Logger, type Queryable, type Subscription } from "@switchyard/runtime";
import { schema } from "../migrations.js";
import { utcDay } from "./windows.js";

export const ledgerConsumer = "identity_ledger";
export const chargedSubjects = ["inference.generation.completed.v1"] as const;

type Charged = EventEnvelope<(typeof chargedSubjects)[number]>;

/**
 * One charge into the ledger, in one statement (so one round trip, and atomic without a transaction): the
 * consumer's inbox row, the ledger row (once per generation id, however often it is reported), the day's
 * sums of its key and guardrails, and its hold settled. Returns whether it changed any spend.
 */
export async function recordCharge(db: Queryable, consumer: string, event: Charged): Promise<boolean> {
  const g = event.data;
  const [own, byok] = g.is_byok ? ["0", g.cost_usd] : [g.cost_usd, "0"];
  const [result] = await db.query<{ charged: number }>(
    `WITH delivered AS (
       INSERT INTO ${schema}.inbox (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1
     ), entry AS (
       INSERT INTO ${schema}.ledger (generation_id, event_id, key_hash, organization_id, workspace_id, guardrail_ids, model, provider,
         status, prompt_tokens, completion_tokens, usage_estimated, cost, is_byok, occurred_at)
       SELECT $3, $2, $4, $5, $6, $7::text[], $8, $9, $10, $11, $12, $13, $14::numeric, $15, $16 WHERE EXISTS (SELECT 1 FROM delivered)
       ON CONFLICT (generation_id) DO NOTHING RETURNING key_hash, guardrail_ids
     ), key_day AS (
       INSERT INTO ${schema}.key_spend (key_hash, day, cost, byok_cost) SELECT key_hash, $17::date, $18::numeric, $19::numeric FROM entry
       ON CONFLICT (key_hash, day) DO UPDATE SET cost = key_spend.cost + excluded.cost, byok_cost = key_spend.byok_cost + excluded.byok_cost
     ), guardrail_day AS (
       INSERT INTO ${schema}.guardrail_spend (guardrail_id, day, cost, byok_cost)
       SELECT DISTINCT id, $17::date, $18::numeric, $19::numeric FROM entry, unnest(entry.guardrail_ids) AS id
       ON CONFLICT (guardrail_id, day) DO UPDATE SET cost = guardrail_spend.cost + excluded.cost, byok_cost = guardrail_spend.byok_cost + excluded.byok_cost
     ), settled AS (
       -- The charge replaces the reservation, also when a duplicate report finds the row already there.
       DELETE FROM ${schema}.holds WHERE generation_id = $3
     )
     SELECT count(*)::int AS charged FROM entry`,
    [
      consumer,
      event.id,
      g.generation_id,
      g.key_hash,
      g.organization_id,
      g.workspace_id,
      g.guardrail_ids,
      g.model,
      g.provider,
      g.status,
      g.prompt_tokens,
      g.completion_tokens,
      g.usage_estimated,
      g.cost_usd,
      g.is_byok,
      event.occurred_at,
      utcDay(new Date(event.occurred_at)),
      own,
      byok,
    ],
  );
  return (result?.charged ?? 0) > 0;
}

/**
 * The durable consumer that keeps the ledger: each event's effect commits with its inbox row, so a
 * redelivery (a crash between commit and ack, a publish repeated after the deduplication window) changes
 * nothing. Shared by every identity replica.
 */
export function startLedger(deps: { db: Db; bus: Bus; logger: Logger }): Promise<Subscription> {
  return deps.bus.consume(ledgerConsumer, chargedSubjects, async (event) => {
    const charged = await recordCharge(deps.db, ledgerConsumer, event as Charged);
    if (!charged) deps.logger.debug({ eventId: event.id, subject: event.subject }, "charge already in the ledger");
  });
}
