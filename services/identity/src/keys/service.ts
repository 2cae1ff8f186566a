import type { ApiKey, CreateApiKeyBody, KeyAuthentication, UpdateApiKeyBody } from "@switchyard/contracts";
import { badRequest, notFound, type Db, type Queryable } from "@switchyard/runtime";
import type { EventSink } from "@switchyard/runtime";
import { changingBindings } from "../spend/memory-holds.js";
import { keyUsage, keyUsages } from "../spend/usage.js";
import { keyColumns, toApiKey, type KeyRow } from "./records.js";
import { generateSecret, hashSecret, maskSecret } from "@switchyard/runtime";

export interface KeyDeps {
  db: Db;
  events: EventSink;
  /** Told after a key's change commits, so this process's caches of it drop it at once. */
  keyChanged?: (hash: string) => void;
  /** Told after a workspace's change (its settings, its own provider keys) commits, likewise. */
  workspaceChanged?: (id: string) => void;
}

const keyNotFound = () => notFound("API key not found");

export async function createKey(
  deps: KeyDeps,
  organizationId: string,
  defaultWorkspaceId: string,
  body: CreateApiKeyBody,
  secret: string = generateSecret(),
): Promise<{ record: ApiKey; secret: string }> {
  if (body.expires_at && Date.parse(body.expires_at) <= Date.now()) throw badRequest("Invalid body: expires_at: must be in the future");
  const row = await deps.db.transaction((tx) => insertKey(tx, deps.events, organizationId, defaultWorkspaceId, body, secret));
  deps.events.committed();
  return { record: toApiKey(row), secret };
}

/** `createKey`'s work inside the caller's transaction; the caller calls `events.committed()` after commit. */
export async function insertKey(
  tx: Queryable,
  events: EventSink,
  organizationId: string,
  defaultWorkspaceId: string,
  body: CreateApiKeyBody,
  secret: string,
): Promise<KeyRow> {
  const workspaceId = body.workspace_id ?? defaultWorkspaceId;
  const workspace = await tx.query(`SELECT 1 FROM identity.workspaces WHERE id = $1 AND organization_id = $2`, [
    workspaceId,
    organizationId,
  ]);
  if (workspace.length === 0) throw badRequest("Invalid body: workspace_id: no such workspace");
  const hash = hashSecret(secret);
  const [inserted] = await tx.query<KeyRow>(
    `INSERT INTO identity.api_keys (hash, organization_id, workspace_id, name, label, is_management, spend_limit,
       limit_reset, include_byok_in_limit, rate_limit_per_minute, expires_at, creator_user_id, external_user)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (hash) DO NOTHING
     RETURNING ${keyColumns}`,
    [
      hash,
      organizationId,
      workspaceId,
      body.name,
      maskSecret(secret),
      body.is_management_key ?? false,
      body.limit ?? null,
      body.limit_reset ?? null,
      body.include_byok_in_limit ?? false,
      body.rate_limit_per_minute ?? null,
      body.expires_at ?? null,
      body.creator_user_id ?? null,
      body.external?.user ?? null,
    ],
  );
  if (!inserted) throw badRequest("A key with this secret already exists");
  await events.enqueue(tx, "identity.api_key.created.v1", { hash, organization_id: organizationId, workspace_id: workspaceId });
  return inserted;
}

export async function getKey(db: Queryable, organizationId: string, hash: string): Promise<ApiKey> {
  const [row] = await db.query<KeyRow>(`SELECT ${keyColumns} FROM identity.api_keys WHERE hash = $1 AND organization_id = $2`, [
    hash,
    organizationId,
  ]);
  if (!row) throw keyNotFound();
  return toApiKey(row, await keyUsage(db, hash));
}

export async function getKeyRow(db: Queryable, hash: string): Promise<KeyRow | undefined> {
  const [row] = await db.query<KeyRow>(`SELECT ${keyColumns} FROM identity.api_keys WHERE hash = $1`, [hash]);
  return row;
}

export interface ListKeysOptions {
  offset: number;
  limit: number;
  includeDisabled: boolean;
  workspaceId?: string | undefined;
}

export async function listKeys(db: Queryable, organizationId: string, options: ListKeysOptions) {
  const where = [`organization_id = $1`];
  const params: unknown[] = [organizationId];
  if (!options.includeDisabled) where.push("NOT disabled");
  if (options.workspaceId) {
    params.push(options.workspaceId);
    where.push(`workspace_id = $${params.length}`);
  }
  const filter = where.join(" AND ");
  const [count] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM identity.api_keys WHERE ${filter}`, params);
  const rows = await db.query<KeyRow>(
    `SELECT ${keyColumns} FROM identity.api_keys WHERE ${filter}
     ORDER BY created_at, hash LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, options.limit, options.offset],
  );
  const usages = await keyUsages(db, rows.map((row) => row.hash));
  return { data: rows.map((row) => toApiKey(row, usages.get(row.hash))), total_count: count?.n ?? 0 };
}

const updatableColumns = {
  name: "name",
  disabled: "disabled",
  limit: "spend_limit",
  limit_reset: "limit_reset",
  include_byok_in_limit: "include_byok_in_limit",
  rate_limit_per_minute: "rate_limit_per_minute",
} as const satisfies Record<keyof UpdateApiKeyBody, string>;

export async function updateKey(deps: KeyDeps, organizationId: string, hash: string, body: UpdateApiKeyBody): Promise<ApiKey> {
  const sets: string[] = [];
  const params: unknown[] = [hash, organizationId];
  for (const [field, column] of Object.entries(updatableColumns) as [keyof UpdateApiKeyBody, string][]) {
    if (body[field] === undefined) continue;
    params.push(body[field]);
    sets.push(`${column} = $${params.length}`);
  }
  // A limit or its BYOK setting may change: memory holds forget what they knew of keys' limits (see memory-holds.ts).
  const row = await changingBindings(deps.db, () =>
    deps.db.transaction(async (tx) => {
      if (sets.length === 0) {
        const [current] = await tx.query<KeyRow>(`SELECT ${keyColumns} FROM identity.api_keys WHERE hash = $1 AND organization_id = $2`, params);
        return current;
      }
      // clock_timestamp(), not now(): two updates in one transaction-less burst must still move updated_at.
      const [updated] = await tx.query<KeyRow>(
        `UPDATE identity.api_keys SET ${sets.join(", ")}, updated_at = clock_timestamp()
         WHERE hash = $1 AND organization_id = $2 RETURNING ${keyColumns}`,
        params,
      );
      if (updated) {
        await deps.events.enqueue(tx, "identity.api_key.updated.v1", {
          hash,
          organization_id: organizationId,
          workspace_id: updated.workspace_id,
        });
      }
      return updated;
    }),
  );
  if (!row) throw keyNotFound();
  deps.events.committed();
  deps.keyChanged?.(hash);
  return toApiKey(row, await keyUsage(deps.db, hash));
}

export async function deleteKey(deps: KeyDeps, organizationId: string, hash: string): Promise<void> {
  const deleted = await changingBindings(deps.db, () =>
    deps.db.transaction(async (tx) => {
      const [row] = await tx.query<{ workspace_id: string }>(
        `DELETE FROM identity.api_keys WHERE hash = $1 AND organization_id = $2 RETURNING workspace_id::text`,
        [hash, organizationId],
      );
      if (row) {
        await deps.events.enqueue(tx, "identity.api_key.deleted.v1", { hash, organization_id: organizationId, workspace_id: row.workspace_id });
      }
      return row !== undefined;
    }),
  );
  if (!deleted) throw keyNotFound();
  deps.events.committed();
  deps.keyChanged?.(hash);
}

/** What the router needs to admit a request; it caches this and drops it on `identity.api_key.*`. */
export async function authenticateKey(db: Queryable, hash: string): Promise<KeyAuthentication | undefined> {
  const row = await getKeyRow(db, hash);
  if (!row) return undefined;
  return {
    hash: row.hash,
    organization_id: row.organization_id,
    workspace_id: row.workspace_id,
    disabled: row.disabled,
    is_management_key: row.is_management,
    expires_at: row.expires_at?.toISOString() ?? null,
    rate_limit_per_minute: row.rate_limit_per_minute,
  };
}

