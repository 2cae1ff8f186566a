import type { EventEnvelope } from "@switchyard/contracts";
import { extended, metrics, watchHolds, type Bus, type Db, type Logger, type Queryable, type Subscription } from "@switchyard/runtime";
import { schema } from "../migrations.js";
import { timingBucket } from "../activity/timings.js";
import { openHolds } from "./holds.js";
import { memoryHolds } from "./memory-holds.js";

export const ledgerConsumer = "identity_ledger";
export const chargedSubjects = [
  "inference.generation.completed.v1",
  "media.transcription.completed.v1",
  "media.image.completed.v1",
  "media.speech.completed.v1",
] as const;

type Charged = EventEnvelope<(typeof chargedSubjects)[number]>;

/** What a charged generation was: media's subject names its kind; inference's event names embeddings and rerank, else chat. */
const operationOf = (event: Charged): string =>
  event.subject === "inference.generation.completed.v1" ? (event.data.operation ?? "chat") : event.subject.split(".")[1]!;

/** What an activity row sums of the ledger rows it stands for, and how a batch's sums add to it (aliased `a`). */
const activitySums = `count(*), count(*) FILTER (WHERE status <> 'completed'), sum(prompt_tokens), sum(completion_tokens),
  sum(reasoning_tokens), coalesce(sum(cost) FILTER (WHERE NOT is_byok), 0), coalesce(sum(cost) FILTER (WHERE is_byok), 0)`;
const activityAdded = ["requests", "errors", "prompt_tokens", "completion_tokens", "reasoning_tokens", "cost", "byok_cost"]
  .map((column) => `${column} = a.${column} + excluded.${column}`)
  .join(", ");

/**
 * Charges into the ledger, in one statement whatever their number (so one round trip, and atomic without a
 * transaction): one ledger row per generation id, the day sums of keys, guardrails and activity (with its
 * timings), the organization's total, and the holds settled. The ledger's key is the generation id, so a charge reported again (a redelivered event, a
 * publish repeated after the deduplication window, a second event for the same generation) finds its row
 * there and changes nothing: no inbox row is needed. Returns how many charged.
 */
export async function recordCharges(db: Queryable, events: readonly Charged[]): Promise<number> {
  const rows = events.map((event) => {
    const g = event.data;
    const time = g.generation_time_ms;
    return extended(g, {
      event_id: event.id,
      occurred_at: event.occurred_at,
      started_at: g.started_at ?? event.occurred_at,
      operation: operationOf(event),
      timing_bucket: time === undefined ? null : timingBucket(time),
    });
  });
  const [result] = await db.query<{ charged: number; settled: number }>(
    `WITH charge AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(event_id uuid, generation_id text, key_hash text, organization_id uuid,
         workspace_id uuid, guardrail_ids text[], model text, provider text, status text, prompt_tokens integer,
         completion_tokens integer, usage_estimated boolean, cost_usd numeric, is_byok boolean, occurred_at timestamptz, operation text,
         upstream_model text, reasoning_tokens integer, generation_time_ms integer, started_at timestamptz, timing_bucket smallint)
     ), entry AS (
       INSERT INTO ${schema}.ledger (generation_id, event_id, key_hash, organization_id, workspace_id, guardrail_ids, model, provider,
         status, prompt_tokens, completion_tokens, usage_estimated, cost, is_byok, occurred_at, operation, upstream_model, reasoning_tokens,
         generation_time_ms, started_at)
       -- The guardrails the charge names and those its hold was taken against: a replica that resolved the key
       -- before a budget bound it charges the budget all the same.
       SELECT DISTINCT ON (c.generation_id) c.generation_id, c.event_id, c.key_hash, c.organization_id, c.workspace_id,
         ARRAY(SELECT DISTINCT unnest(c.guardrail_ids || coalesce(h.guardrail_ids, '{}'))), c.model, c.provider,
         c.status, c.prompt_tokens, c.completion_tokens, c.usage_estimated, c.cost_usd, c.is_byok, c.occurred_at, c.operation,
         c.upstream_model, coalesce(c.reasoning_tokens, 0), c.generation_time_ms, c.started_at
       FROM charge c LEFT JOIN ${schema}.holds h ON h.generation_id = c.generation_id ORDER BY c.generation_id, c.occurred_at
       ON CONFLICT (generation_id) DO NOTHING
       RETURNING generation_id, key_hash, organization_id, workspace_id, guardrail_ids, model, coalesce(provider, '') AS provider,
         coalesce(upstream_model, '') AS upstream_model, status, prompt_tokens, completion_tokens, reasoning_tokens, cost, is_byok,
         (occurred_at AT TIME ZONE 'UTC')::date AS day
     ), activity_day AS (
       INSERT INTO ${schema}.activity_days AS a (organization_id, day, workspace_id, model, provider, upstream_model, requests, errors,
         prompt_tokens, completion_tokens, reasoning_tokens, cost, byok_cost)
       SELECT organization_id, day, workspace_id, model, provider, upstream_model, ${activitySums}
       FROM entry GROUP BY organization_id, day, workspace_id, model, provider, upstream_model
       ON CONFLICT (organization_id, day, workspace_id, model, provider, upstream_model) DO UPDATE SET ${activityAdded}
     ), activity_key_day AS (
       INSERT INTO ${schema}.activity_key_days AS a (key_hash, day, organization_id, workspace_id, model, provider, upstream_model, requests,
         errors, prompt_tokens, completion_tokens, reasoning_tokens, cost, byok_cost)
       SELECT key_hash, day, organization_id, workspace_id, model, provider, upstream_model, ${activitySums}
       FROM entry GROUP BY key_hash, day, organization_id, workspace_id, model, provider, upstream_model
       ON CONFLICT (key_hash, day, organization_id, workspace_id, model, provider, upstream_model) DO UPDATE SET ${activityAdded}
     ), activity_timing AS (
       INSERT INTO ${schema}.activity_timings AS t (organization_id, day, model, bucket, requests)
       SELECT e.organization_id, e.day, e.model, c.timing_bucket, count(*)
       FROM entry e JOIN (SELECT DISTINCT ON (generation_id) generation_id, timing_bucket FROM charge ORDER BY generation_id, occurred_at) c
         ON c.generation_id = e.generation_id
       WHERE c.timing_bucket IS NOT NULL
       GROUP BY e.organization_id, e.day, e.model, c.timing_bucket
       ON CONFLICT (organization_id, day, model, bucket) DO UPDATE SET requests = t.requests + excluded.requests
     ), organization_total AS (
       INSERT INTO ${schema}.organization_spend AS o (organization_id, cost, byok_cost)
       SELECT organization_id, coalesce(sum(cost) FILTER (WHERE NOT is_byok), 0), coalesce(sum(cost) FILTER (WHERE is_byok), 0)
       FROM entry GROUP BY organization_id
       ON CONFLICT (organization_id) DO UPDATE SET cost = o.cost + excluded.cost, byok_cost = o.byok_cost + excluded.byok_cost
     ), key_day AS (
       INSERT INTO ${schema}.key_spend (key_hash, day, cost, byok_cost)
       SELECT key_hash, day, coalesce(sum(cost) FILTER (WHERE NOT is_byok), 0), coalesce(sum(cost) FILTER (WHERE is_byok), 0) FROM entry GROUP BY key_hash, day
       ON CONFLICT (key_hash, day) DO UPDATE
         SET cost = key_spend.cost + excluded.cost, byok_cost = key_spend.byok_cost + excluded.byok_cost
     ), settled AS (
       -- A charge replaces its reservation, also when a duplicate report finds the row already there.
       DELETE FROM ${schema}.holds WHERE generation_id IN (SELECT generation_id FROM charge) RETURNING 1
     )
     SELECT (SELECT count(*) FROM entry)::int AS charged, (SELECT count(*) FROM settled)::int AS settled`,
    [JSON.stringify(rows)],
  );
  const settled = (result?.settled ?? 0) + (memoryHolds(db)?.drop(rows.map((row) => row.generation_id)) ?? 0);
  if (settled > 0) metrics.holds.inc({ service: "identity", outcome: "settled" }, settled);
  return result?.charged ?? 0;
}

/** The durable consumer that keeps the ledger, shared by every identity replica (charges are idempotent: see `recordCharges`). */
export async function startLedger(deps: { db: Db; bus: Bus; logger: Logger }): Promise<Subscription> {
  const consumer = await deps.bus.consumeBatches(ledgerConsumer, chargedSubjects, async (events) => {
    const charged = await recordCharges(deps.db, events as Charged[]);
    if (charged < events.length) deps.logger.debug({ events: events.length, charged }, "charges already in the ledger");
  });
  // The ledger settles the holds, so it also reports those still open (the gauge a hold leak shows on).
  const unwatch = watchHolds("identity", () => openHolds(deps.db));
  return {
    async stop() {
      unwatch();
      await consumer.stop();
    },
  };
}
