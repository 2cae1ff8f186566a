import type { ProviderKeySummary } from "@switchyard/contracts";
import type { Queryable } from "@switchyard/runtime";
import type { Sealer } from "./sealed.js";

const context = (workspaceId: string, provider: string) => `${workspaceId}/${provider}`;
/** Enough of the key to tell two apart, never enough to use: its last four characters. */
const labelOf = (key: string) => `…${key.slice(-4)}`;

export async function putProviderKey(
  db: Queryable,
  sealer: Sealer,
  workspaceId: string,
  provider: string,
  key: string,
  operatorFallback: boolean,
): Promise<ProviderKeySummary> {
  const [row] = await db.query<{ created_at: Date; updated_at: Date }>(
    `INSERT INTO identity.provider_keys (workspace_id, provider, sealed_key, label, operator_fallback) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (workspace_id, provider) DO UPDATE SET sealed_key = excluded.sealed_key, label = excluded.label,
       operator_fallback = excluded.operator_fallback, updated_at = now()
     RETURNING created_at, updated_at`,
    [workspaceId, provider, sealer.seal(key, context(workspaceId, provider)), labelOf(key), operatorFallback],
  );
  return { provider, label: labelOf(key), operator_fallback: operatorFallback, created_at: row!.created_at.toISOString(), updated_at: row!.updated_at.toISOString() };
}

export async function listProviderKeys(db: Queryable, workspaceId: string): Promise<ProviderKeySummary[]> {
  const rows = await db.query<{ provider: string; label: string; operator_fallback: boolean; created_at: Date; updated_at: Date }>(
    `SELECT provider, label, operator_fallback, created_at, updated_at FROM identity.provider_keys WHERE workspace_id = $1 ORDER BY provider`,
    [workspaceId],
  );
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() }));
}

export async function deleteProviderKey(db: Queryable, workspaceId: string, provider: string): Promise<boolean> {
  const rows = await db.query(`DELETE FROM identity.provider_keys WHERE workspace_id = $1 AND provider = $2 RETURNING 1`, [workspaceId, provider]);
  return rows.length > 0;
}

/**
 * The workspace's key for a provider, opened; only services ask, over the internal route or in-process.
 * With `organizationId`, a workspace of another organization has none: a workspace id a service took from a
 * request is checked here too, not only by that service.
 */
export async function openProviderKey(db: Queryable, sealer: Sealer, workspaceId: string, provider: string, organizationId?: string): Promise<string | undefined> {
  const [row] = await db.query<{ sealed_key: string }>(
    `SELECT k.sealed_key FROM identity.provider_keys k JOIN identity.workspaces w ON w.id = k.workspace_id
     WHERE k.workspace_id = $1 AND k.provider = $2 AND ($3::uuid IS NULL OR w.organization_id = $3::uuid)`,
    [workspaceId, provider, organizationId ?? null],
  );
  return row ? sealer.open(row.sealed_key, context(workspaceId, provider)) : undefined;
}
