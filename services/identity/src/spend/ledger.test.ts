import { randomUUID } from "node:crypto";
import type { EventEnvelope } from "@switchyard/contracts";
import { migrate, openPglite, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations, schema } from "../migrations.js";
import { recordCharges } from "./ledger.js";
import { keyUsage } from "./usage.js";

const organization = randomUUID();
const workspace = randomUUID();

const charge = (keyHash: string, generationId: string, cost: string, guardrailIds: string[] = []): EventEnvelope<"inference.generation.completed.v1"> => ({
  id: randomUUID(),
  subject: "inference.generation.completed.v1",
  occurred_at: new Date().toISOString(),
  data: {
    generation_id: generationId,
    key_hash: keyHash,
    organization_id: organization,
    workspace_id: workspace,
    guardrail_ids: guardrailIds,
    model: "vendor/model",
    provider: "vendor",
    status: "completed",
    streamed: false,
    prompt_tokens: 10,
    completion_tokens: 5,
    usage_estimated: false,
    cost_usd: cost,
    is_byok: false,
    finish_reason: "stop",
    generation_time_ms: 12,
  },
});

describe("ledger charges", () => {
  let db: Db;
  beforeAll(async () => {
    db = await openPglite();
    await migrate(db, schema, migrations);
  });
  afterAll(() => db.close());

  const spendOf = async (key: string) =>
    (await db.query<{ cost: string }>(`SELECT coalesce(sum(cost), 0)::text AS cost FROM ${schema}.key_spend WHERE key_hash = $1`, [key]))[0]?.cost;

  it("charges each generation once, whether its event comes again or another event reports it", async () => {
    const key = randomUUID();
    const first = charge(key, `gen-${randomUUID()}`, "0.25");
    const second = charge(key, `gen-${randomUUID()}`, "0.5", ["g1"]);
    expect(await recordCharges(db, [first, second])).toBe(2);
    // The same event delivered again, and a new event for the same generation, in one batch and alone.
    expect(await recordCharges(db, [first, { ...second, id: randomUUID() }])).toBe(0);
    expect(await recordCharges(db, [{ ...first, id: randomUUID(), data: { ...first.data, cost_usd: "9" } }])).toBe(0);
    expect((await keyUsage(db, key)).total).toBe(0.75);
    const [{ guardrail_ids } = { guardrail_ids: [] }] = await db.query<{ guardrail_ids: string[] }>(`SELECT guardrail_ids FROM ${schema}.ledger WHERE generation_id = $1`, [second.data.generation_id]);
    expect(guardrail_ids).toEqual(["g1"]);
    const [ledger] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.ledger WHERE key_hash = $1`, [key]);
    expect(ledger?.n).toBe(2);
  });

  it("settles a generation's hold, also when its charge is already in the ledger", async () => {
    const key = randomUUID();
    const event = charge(key, `gen-${randomUUID()}`, "1");
    const hold = (generationId: string) =>
      db.query(`INSERT INTO ${schema}.holds (generation_id, key_hash, guardrail_ids, amount, is_byok, expires_at) VALUES ($1, $2, '{}', 5, false, now() + interval '1 hour')`, [
        generationId,
        key,
      ]);
    await hold(event.data.generation_id);
    expect(await recordCharges(db, [event])).toBe(1);
    await hold(event.data.generation_id);
    expect(await recordCharges(db, [event])).toBe(0);
    const [left] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.holds WHERE key_hash = $1`, [key]);
    expect(left?.n).toBe(0);
    expect(await spendOf(key)).toBe("1.000000000000");
  });
});
