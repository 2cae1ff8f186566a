import type { EventEnvelope } from "@switchyard/contracts";
import { consumeOnce, type Bus, type Db, type Logger, type Queryable, type Subscription } from "@switchyard/runtime";
import { schema } from "../migrations.js";
import { utcDay } from "./windows.js";

export const ledgerConsumer = "identity_ledger";
export const chargedSubjects = ["inference.generation.completed.v1"] as const;

type Charged = EventEnvelope<(typeof chargedSubjects)[number]>;

/**
 * One generation into the ledger: the row (once per generation id, however often it is reported), the
 * day's sums of its key and guardrails, and its hold settled. Runs inside the consumer's transaction.
 */
export async function recordCharge(tx: Queryable, event: Charged): Promise<boolean> {
  const g = event.data;
  const inserted = await tx.query(
    `INSERT INTO identity.ledger (generation_id, event_id, key_hash, organization_id, workspace_id, guardrail_ids, model, provider,
       status, prompt_tokens, completion_tokens, usage_estimated, cost, is_byok, occurred_at)
     VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8, $9, $10, $11, $12, $13::numeric, $14, $15)
     ON CONFLICT (generation_id) DO NOTHING RETURNING 1`,
    [
      g.generation_id,
      event.id,
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
    ],
  );
  if (inserted.length > 0) {
    const day = utcDay(new Date(event.occurred_at));
    const [own, byok] = g.is_byok ? ["0", g.cost_usd] : [g.cost_usd, "0"];
    await tx.query(
      `INSERT INTO identity.key_spend (key_hash, day, cost, byok_cost) VALUES ($1, $2::date, $3::numeric, $4::numeric)
       ON CONFLICT (key_hash, day) DO UPDATE SET cost = key_spend.cost + excluded.cost, byok_cost = key_spend.byok_cost + excluded.byok_cost`,
      [g.key_hash, day, own, byok],
    );
    if (g.guardrail_ids.length > 0) {
      await tx.query(
        `INSERT INTO identity.guardrail_spend (guardrail_id, day, cost, byok_cost)
         SELECT id, $2::date, $3::numeric, $4::numeric FROM unnest($1::text[]) AS id
         ON CONFLICT (guardrail_id, day) DO UPDATE SET cost = guardrail_spend.cost + excluded.cost, byok_cost = guardrail_spend.byok_cost + excluded.byok_cost`,
        [[...new Set(g.guardrail_ids)], day, own, byok],
      );
    }
  }
  // Settled: the charge replaces the reservation (also when a duplicate report finds the row already there).
  await tx.query(`DELETE FROM identity.holds WHERE generation_id = $1`, [g.generation_id]);
  return inserted.length > 0;
}

/**
 * The durable consumer that keeps the ledger: each event's effect commits with its inbox row, so a
 * redelivery (a crash between commit and ack, a publish repeated after the deduplication window) changes
 * nothing. Shared by every identity replica.
 */
export function startLedger(deps: { db: Db; bus: Bus; logger: Logger }): Promise<Subscription> {
  return deps.bus.consume(ledgerConsumer, chargedSubjects, async (event) => {
    const applied = await consumeOnce(deps.db, schema, ledgerConsumer, event, (tx) => recordCharge(tx, event as Charged).then(() => undefined));
    if (!applied) deps.logger.debug({ eventId: event.id, subject: event.subject }, "charge already in the ledger");
  });
}
