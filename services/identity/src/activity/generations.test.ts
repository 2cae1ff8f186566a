import { randomUUID } from "node:crypto";
import type { EventEnvelope } from "@switchyard/contracts";
import { migrate, openPglite, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations, schema } from "../migrations.js";
import { recordCharges } from "../spend/ledger.js";
import { listGenerations } from "./generations.js";

const organization = randomUUID();

const charge = (id: string, cost: string, byok: boolean): EventEnvelope<"inference.generation.completed.v1"> => ({
  id: randomUUID(),
  subject: "inference.generation.completed.v1",
  occurred_at: new Date().toISOString(),
  data: {
    generation_id: id,
    key_hash: "a".repeat(64),
    organization_id: organization,
    workspace_id: randomUUID(),
    guardrail_ids: [],
    model: "vendor/chat",
    provider: "vendor",
    status: "completed",
    streamed: false,
    prompt_tokens: 12,
    completion_tokens: 5,
    usage_estimated: false,
    cost_usd: cost,
    is_byok: byok,
    generation_time_ms: 300,
    upstream_model: "chat-1",
    reasoning_tokens: 0,
  },
});

let db: Db;
beforeAll(async () => {
  db = await openPglite();
  await migrate(db, schema, migrations);
  await recordCharges(db, [charge("gen-billed", "0.00027", false), charge("gen-own-key", "0.00027", true)]);
});
afterAll(async () => {
  await db?.close();
});

describe("generation list", () => {
  it("gives each row's cost as its record's total_cost, what the key was billed, and a BYOK generation's price apart", async () => {
    const { data } = await listGenerations(db, organization, {});
    const costs = Object.fromEntries(data.map((g) => [g.id, { cost: g.cost, byok_cost: g.byok_cost, is_byok: g.is_byok }]));
    expect(costs).toEqual({
      "gen-billed": { cost: 0.00027, byok_cost: 0, is_byok: false },
      // Served with the workspace's own provider key: the record's total_cost is 0, the provider's price is the BYOK figure.
      "gen-own-key": { cost: 0, byok_cost: 0.00027, is_byok: true },
    });
  });
});
