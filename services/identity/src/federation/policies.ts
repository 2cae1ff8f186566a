import { randomUUID } from "node:crypto";
import type { CreateFederationPolicyBody, FederationPolicy, UpdateFederationPolicyBody } from "@switchyard/contracts";
import { badRequest, notFound, type Queryable } from "@switchyard/runtime";

export interface PolicyRow {
  id: string;
  organization_id: string;
  name: string;
  issuer: string;
  audiences: string[];
  claim_conditions: FederationPolicy["claim_conditions"];
  target_key_hash: string;
  replay_protection: boolean;
  max_token_lifetime_seconds: number | null;
  disabled: boolean;
  created_at: Date;
  updated_at: Date | null;
}

const columns = `id::text, organization_id::text, name, issuer, audiences, claim_conditions, target_key_hash, replay_protection,
  max_token_lifetime_seconds, disabled, created_at, updated_at`;

export const toPolicy = (row: PolicyRow): FederationPolicy => ({
  id: row.id,
  name: row.name,
  issuer: row.issuer,
  audiences: row.audiences,
  claim_conditions: row.claim_conditions,
  target_key_hash: row.target_key_hash,
  replay_protection: row.replay_protection,
  max_token_lifetime_seconds: row.max_token_lifetime_seconds,
  disabled: row.disabled,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at?.toISOString() ?? null,
});

const policyNotFound = () => notFound("Federation policy not found");

/** Plain http issuers only where the operator allowed them (development, tests). */
function checkIssuer(issuer: string, allowInsecure: boolean) {
  if (!allowInsecure && new URL(issuer).protocol !== "https:") throw badRequest("Invalid body: issuer: must be an https URL");
}

async function checkTarget(db: Queryable, organizationId: string, hash: string) {
  const [key] = await db.query<{ is_management: boolean }>(`SELECT is_management FROM identity.api_keys WHERE hash = $1 AND organization_id = $2`, [
    hash,
    organizationId,
  ]);
  if (!key) throw badRequest("Invalid body: target_key_hash: no such key in this organization");
  if (key.is_management) throw badRequest("Invalid body: target_key_hash: a management key cannot be a target; use an inference key");
}

export async function createPolicy(db: Queryable, organizationId: string, body: CreateFederationPolicyBody, allowInsecure: boolean): Promise<FederationPolicy> {
  checkIssuer(body.issuer, allowInsecure);
  await checkTarget(db, organizationId, body.target_key_hash);
  const [row] = await db.query<PolicyRow>(
    `INSERT INTO identity.federation_policies (id, organization_id, name, issuer, audiences, claim_conditions, target_key_hash,
       replay_protection, max_token_lifetime_seconds, disabled)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${columns}`,
    [
      randomUUID(),
      organizationId,
      body.name,
      body.issuer,
      body.audiences,
      JSON.stringify(body.claim_conditions),
      body.target_key_hash,
      body.replay_protection ?? true,
      body.max_token_lifetime_seconds ?? null,
      body.disabled ?? false,
    ],
  );
  return toPolicy(row!);
}

/** The policy a token exchange names, whatever its organization (the id binds the exchange to it). */
export async function policyById(db: Queryable, id: string): Promise<PolicyRow | undefined> {
  const [row] = await db.query<PolicyRow>(`SELECT ${columns} FROM identity.federation_policies WHERE id = $1`, [id]);
  return row;
}

/** Whether tokens a policy issued still act: it exists and is not disabled. The router asks, and remembers for seconds. */
export async function policyActive(db: Queryable, id: string): Promise<boolean> {
  const [row] = await db.query<{ active: boolean }>(`SELECT NOT disabled AS active FROM identity.federation_policies WHERE id = $1`, [id]);
  return row?.active ?? false;
}

export async function getPolicy(db: Queryable, organizationId: string, id: string): Promise<FederationPolicy> {
  const row = await policyById(db, id);
  if (!row || row.organization_id !== organizationId) throw policyNotFound();
  return toPolicy(row);
}

export async function listPolicies(db: Queryable, organizationId: string, offset: number, limit: number) {
  const [count] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM identity.federation_policies WHERE organization_id = $1`, [organizationId]);
  const rows = await db.query<PolicyRow>(
    `SELECT ${columns} FROM identity.federation_policies WHERE organization_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`,
    [organizationId, limit, offset],
  );
  return { data: rows.map(toPolicy), total_count: count?.n ?? 0 };
}

/** Columns a PATCH may set, and how each value is stored. */
const updatable: Record<keyof UpdateFederationPolicyBody, (value: unknown) => unknown> = {
  name: (v) => v,
  audiences: (v) => v,
  claim_conditions: (v) => JSON.stringify(v),
  replay_protection: (v) => v,
  max_token_lifetime_seconds: (v) => v,
  disabled: (v) => v,
};

export async function updatePolicy(db: Queryable, organizationId: string, id: string, body: UpdateFederationPolicyBody): Promise<FederationPolicy> {
  const sets: string[] = [];
  const params: unknown[] = [id, organizationId];
  for (const [field, encode] of Object.entries(updatable) as [keyof UpdateFederationPolicyBody, (v: unknown) => unknown][]) {
    if (body[field] === undefined) continue;
    params.push(encode(body[field]));
    sets.push(`${field} = $${params.length}`);
  }
  if (sets.length === 0) return getPolicy(db, organizationId, id);
  const [row] = await db.query<PolicyRow>(
    `UPDATE identity.federation_policies SET ${sets.join(", ")}, updated_at = clock_timestamp()
     WHERE id = $1 AND organization_id = $2 RETURNING ${columns}`,
    params,
  );
  if (!row) throw policyNotFound();
  return toPolicy(row);
}

export async function deletePolicy(db: Queryable, organizationId: string, id: string): Promise<void> {
  const rows = await db.query(`DELETE FROM identity.federation_policies WHERE id = $1 AND organization_id = $2 RETURNING 1`, [id, organizationId]);
  if (rows.length === 0) throw policyNotFound();
}
