import type { EventEnvelope } from "@switchyard/contracts";
import { metrics, watchHolds, type Bus, type Db, type Logger, type Queryable, type Subscription } from "@switchyard/runtime";
import { schema } from "../migrations.js";
import { openHolds } from "./holds.js";

export const ledgerConsumer = "identity_ledger";
export const chargedSubjects = [
  "inference.generation.completed.v1",
  "media.transcription.completed.v1",
  "media.image.completed.v1",
  "media.speech.completed.v1",
] as const;

type Charged = EventEnvelope<(typeof chargedSubjects)[number]>;

/**
 * Charges into the ledger, in one statement whatever their number (so one round trip, and atomic without a
 * transaction): one ledger row per generation id, the day sums of keys and guardrails, and the holds
 * settled. The ledger's key is the generation id, so a charge reported again (a redelivered event, a
 * publish repeated after the deduplication window, a second event for the same generation) finds its row
 * there and changes nothing: no inbox row is needed. Returns how many charged.
 */
export async function recordCharges(db: Queryable, events: readonly Charged[]): Promise<number> {
  const rows = events.map((event) => {
    const g = event.data;
    return { ...g, event_id: event.id, occurred_at: event.occurred_at };
  });
  const [result] = await db.query<{ charged: number; settled: number }>(
    `WITH charge AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(event_id uuid, generation_id text, key_hash text, organization_id uuid,
         workspace_id uuid, guardrail_ids text[], model text, provider text, status text, prompt_tokens integer,
         completion_tokens integer, usage_estimated boolean, cost_usd numeric, is_byok boolean, occurred_at timestamptz)
     ), entry AS (
       INSERT INTO ${schema}.ledger (generation_id, event_id, key_hash, organization_id, workspace_id, guardrail_ids, model, provider,
         status, prompt_tokens, completion_tokens, usage_estimated, cost, is_byok, occurred_at)
       -- The guardrails the charge names and those its hold was taken against: a replica that resolved the key
       -- before a budget bound it charges the budget all the same.
       SELECT DISTINCT ON (c.generation_id) c.generation_id, c.event_id, c.key_hash, c.organization_id, c.workspace_id,
         ARRAY(SELECT DISTINCT unnest(c.guardrail_ids || coalesce(h.guardrail_ids, '{}'))), c.model, c.provider,
         c.status, c.prompt_tokens, c.completion_tokens, c.usage_estimated, c.cost_usd, c.is_byok, c.occurred_at
       FROM charge c LEFT JOIN ${schema}.holds h ON h.generation_id = c.generation_id ORDER BY c.generation_id, c.occurred_at
       ON CONFLICT (generation_id) DO NOTHING
       RETURNING key_hash, guardrail_ids, cost, is_byok, (occurred_at AT TIME ZONE 'UTC')::date AS day
     ), key_day AS (
       INSERT INTO ${schema}.key_spend (key_hash, day, cost, byok_cost)
       SELECT key_hash, day, coalesce(sum(cost) FILTER (WHERE NOT is_byok), 0), coalesce(sum(cost) FILTER (WHERE is_byok), 0) FROM entry GROUP BY key_hash, day
       ON CONFLICT (key_hash, day) DO UPDATE
         SET cost = key_spend.cost + excluded.cost, byok_cost = key_spend.byok_cost + excluded.byok_cost
     ), guardrail_day AS (
       INSERT INTO ${schema}.guardrail_spend (guardrail_id, day, cost, byok_cost)
       SELECT id, day, coalesce(sum(cost) FILTER (WHERE NOT is_byok), 0), coalesce(sum(cost) FILTER (WHERE is_byok), 0)
       FROM entry, LATERAL (SELECT DISTINCT unnest(entry.guardrail_ids) AS id) AS g GROUP BY id, day
       ON CONFLICT (guardrail_id, day) DO UPDATE
         SET cost = guardrail_spend.cost + excluded.cost, byok_cost = guardrail_spend.byok_cost + excluded.byok_cost
     ), settled AS (
       -- A charge replaces its reservation, also when a duplicate report finds the row already there.
       DELETE FROM ${schema}.holds WHERE generation_id IN (SELECT generation_id FROM charge) RETURNING 1
     )
     SELECT (SELECT count(*) FROM entry)::int AS charged, (SELECT count(*) FROM settled)::int AS settled`,
    [JSON.stringify(rows)],
  );
  if (result?.settled) metrics.holds.inc({ outcome: "settled" }, result.settled);
  return result?.charged ?? 0;
}

/** The durable consumer that keeps the ledger, shared by every identity replica (charges are idempotent: see `recordCharges`). */
export async function startLedger(deps: { db: Db; bus: Bus; logger: Logger }): Promise<Subscription> {
  const consumer = await deps.bus.consumeBatches(ledgerConsumer, chargedSubjects, async (events) => {
    const charged = await recordCharges(deps.db, events as Charged[]);
    if (charged < events.length) deps.logger.debug({ events: events.length, charged }, "charges already in the ledger");
  });
  // The ledger settles the holds, so it also reports those still open (the gauge a hold leak shows on).
  const unwatch = watchHolds(() => openHolds(deps.db));
  return {
    async stop() {
      unwatch();
      await consumer.stop();
    },
  };
}
