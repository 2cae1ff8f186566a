import { randomUUID } from "node:crypto";
import type { EventEnvelope, HoldRequest } from "@switchyard/contracts";
import type { Queryable } from "@switchyard/runtime";

/**
 * An organization with a default workspace and API keys in identity's tables, for tests that place holds
 * and charges directly: each key by its hash, with a spend limit in USD or none (null).
 */
export async function organizationWithKeys(db: Queryable, keys: ReadonlyArray<readonly [hash: string, limit: string | null]>) {
  const organization = randomUUID();
  const workspace = randomUUID();
  await db.query(`INSERT INTO identity.organizations (id, name) VALUES ($1, 'Org')`, [organization]);
  await db.query(`INSERT INTO identity.workspaces (id, organization_id, name, slug, is_default, default_guardrail_id) VALUES ($1, $2, 'Default', 'default', true, $3)`, [
    workspace,
    organization,
    randomUUID(),
  ]);
  for (const [hash, limit] of keys) {
    await db.query(`INSERT INTO identity.api_keys (hash, organization_id, workspace_id, name, label, spend_limit) VALUES ($1, $2, $3, 'k', 'k', $4)`, [
      hash,
      organization,
      workspace,
      limit,
    ]);
  }
  return { organization, workspace };
}

/** A hold request of a key for `amount` USD, a new generation's, for a minute. */
export const holdRequest = (key: string, amount: string, extra: Partial<HoldRequest> = {}): HoldRequest => ({
  generation_id: `gen-${randomUUID()}`,
  key_hash: key,
  amount_usd: amount,
  is_byok: false,
  ttl_ms: 60_000,
  ...extra,
});

/** A completed chat generation's charge, as inference reports it: one prompt and one completion token for `cost` USD. */
export const chargeEvent = (
  charged: { generation_id: string; key_hash: string; organization_id: string; workspace_id: string },
  cost: string,
): EventEnvelope<"inference.generation.completed.v1"> => ({
  id: randomUUID(),
  subject: "inference.generation.completed.v1",
  occurred_at: new Date().toISOString(),
  data: {
    ...charged,
    guardrail_ids: [],
    model: "spend/cent",
    provider: "alpha",
    status: "completed",
    streamed: false,
    prompt_tokens: 1,
    completion_tokens: 1,
    usage_estimated: false,
    cost_usd: cost,
    is_byok: false,
  },
});
