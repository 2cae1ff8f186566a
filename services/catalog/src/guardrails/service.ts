import { randomUUID } from "node:crypto";
import { maxBudgetKeys, withBuiltinLabels, type CreateGuardrailBody, type Guardrail, type KeyAssignment, type UpdateGuardrailBody } from "@switchyard/contracts";
import { badRequest, notFound, type Db, type Queryable } from "@switchyard/runtime";
import { patternProblem } from "@switchyard/upstream";
import type { EventSink } from "@switchyard/runtime";
import type { IdentityLookup } from "../policy/identity-lookup.js";
import { writeBudget } from "./budgets.js";
import { guardrailColumns, settingNames, toGuardrail, type GuardrailRow } from "./records.js";

export interface GuardrailDeps {
  db: Db;
  events: EventSink;
  identity: IdentityLookup;
  /** Cleared here on every write, so this replica sees its own change at once; events clear the others. */
  guardrails: GuardrailCache;
}

export const guardrailNotFound = () => notFound("Guardrail not found");
const columnFields = [
  "description",
  "limit_usd",
  "reset_interval",
  "include_byok_in_budgets",
  "allowed_providers",
  "ignored_providers",
  "allowed_models",
  "ignored_models",
  "allowed_data_regions",
  "enforce_zdr",
] as const;
const vendorZdr = ["enforce_zdr_anthropic", "enforce_zdr_openai", "enforce_zdr_google", "enforce_zdr_xai", "enforce_zdr_other"] as const;

/**
 * The settings a body gives, and those it sends as null: a client sending null means to clear the field, so
 * it goes back to its default (as OpenRouter's update does). The deprecated `enforce_zdr` fills (or, sent
 * as null, clears) every per-vendor switch the caller did not send at all.
 */
function settingsOf(body: UpdateGuardrailBody): { given: Record<string, unknown>; cleared: string[] } {
  // Workspace patterns run on a linear-time engine; one it cannot run is refused, never stored.
  for (const [i, filter] of (body.content_filters ?? []).entries()) {
    const problem = patternProblem(filter.pattern);
    if (problem) throw badRequest(`Invalid body: content_filters[${i}].pattern: ${problem}`);
  }
  const given: Record<string, unknown> = {};
  const cleared: string[] = [];
  for (const name of settingNames) {
    if (body[name] === null) cleared.push(name);
    else if (body[name] !== undefined) given[name] = body[name];
  }
  if (body.content_filter_builtins) given.content_filter_builtins = withBuiltinLabels(body.content_filter_builtins);
  if (body.enforce_zdr !== undefined) {
    for (const name of vendorZdr) {
      if (body[name] !== undefined) continue;
      if (body.enforce_zdr === null) cleared.push(name);
      else given[name] = body.enforce_zdr;
    }
  }
  return { given, cleared };
}

/** In the transaction of a change (the guardrail's row locked by it): its budget to identity, then its event. */
export async function changed(deps: GuardrailDeps, tx: Queryable, row: GuardrailRow, event: "created" | "updated" | "deleted") {
  await writeBudget(deps.identity, tx, row, event !== "deleted");
  await deps.events.enqueue(tx, `catalog.guardrail.${event}.v1`, { id: row.id, organization_id: row.organization_id });
}

/** A guardrail's row, locked until the transaction ends: its assignments are changing. */
async function lockedRow(tx: Queryable, id: string): Promise<GuardrailRow> {
  const [row] = await tx.query<GuardrailRow>(`SELECT ${guardrailColumns} FROM catalog.guardrails WHERE id = $1 FOR UPDATE`, [id]);
  if (!row) throw guardrailNotFound();
  return row;
}

export async function createGuardrail(deps: GuardrailDeps, organizationId: string, defaultWorkspace: string, body: CreateGuardrailBody) {
  const workspaceId = body.workspace_id ?? defaultWorkspace;
  if (body.workspace_id && !(await deps.identity.workspaceInOrganization(body.workspace_id, organizationId))) {
    throw badRequest("Invalid body: workspace_id: no such workspace");
  }
  const row = await deps.db.transaction(async (tx) => {
    const [inserted] = await tx.query<GuardrailRow>(
      `INSERT INTO catalog.guardrails (id, organization_id, workspace_id, name, description, limit_usd, reset_interval,
         include_byok_in_budgets, allowed_providers, ignored_providers, allowed_models, ignored_models, allowed_data_regions,
         enforce_zdr, settings)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING ${guardrailColumns}`,
      [
        randomUUID(),
        organizationId,
        workspaceId,
        body.name,
        body.description ?? "",
        body.limit_usd ?? null,
        body.reset_interval ?? null,
        body.include_byok_in_budgets ?? false,
        body.allowed_providers ?? null,
        body.ignored_providers ?? null,
        body.allowed_models ?? null,
        body.ignored_models ?? null,
        body.allowed_data_regions ?? null,
        body.enforce_zdr ?? null,
        JSON.stringify(settingsOf(body).given),
      ],
    );
    await changed(deps, tx, inserted!, "created");
    return inserted!;
  });
  deps.events.committed();
  deps.guardrails.clear();
  return toGuardrail(row);
}

export async function guardrailRow(db: Queryable, organizationId: string, id: string): Promise<GuardrailRow> {
  const [row] = await db.query<GuardrailRow>(`SELECT ${guardrailColumns} FROM catalog.guardrails WHERE id = $1 AND organization_id = $2`, [
    id,
    organizationId,
  ]);
  if (!row) throw guardrailNotFound();
  return row;
}

export const getGuardrail = async (db: Queryable, organizationId: string, id: string): Promise<Guardrail> =>
  toGuardrail(await guardrailRow(db, organizationId, id));

export async function listGuardrails(db: Queryable, organizationId: string, offset: number, limit: number, workspaceId?: string) {
  const params: unknown[] = [organizationId];
  let filter = "organization_id = $1";
  if (workspaceId) {
    params.push(workspaceId);
    filter += " AND workspace_id = $2";
  }
  const [count] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.guardrails WHERE ${filter}`, params);
  const rows = await db.query<GuardrailRow>(
    `SELECT ${guardrailColumns} FROM catalog.guardrails WHERE ${filter} ORDER BY created_at, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit, offset],
  );
  return { data: rows.map(toGuardrail), total_count: count?.n ?? 0 };
}

export async function updateGuardrail(deps: GuardrailDeps, organizationId: string, id: string, body: UpdateGuardrailBody) {
  const row = await deps.db.transaction(async (tx) => {
    const current = await guardrailRow(tx, organizationId, id);
    const limit = body.limit_usd === undefined ? current.limit_usd : body.limit_usd;
    const interval = body.reset_interval === undefined ? current.reset_interval : body.reset_interval;
    if ((limit === null) !== (interval === null)) throw badRequest("Invalid body: limit_usd and reset_interval must be provided together");
    const sets: string[] = [];
    const params: unknown[] = [id];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (body.name !== undefined) set("name", body.name);
    for (const field of columnFields) if (body[field] !== undefined) set(field, field === "description" ? (body.description ?? "") : body[field]);
    const { given, cleared } = settingsOf(body);
    if (Object.keys(given).length || cleared.length) {
      // A cleared setting is removed from the stored ones, so the record reads its default.
      params.push(cleared, JSON.stringify(given));
      sets.push(`settings = (settings - $${params.length - 1}::text[]) || $${params.length}::jsonb`);
    }
    if (sets.length === 0) return current;
    const [updated] = await tx.query<GuardrailRow>(
      `UPDATE catalog.guardrails SET ${sets.join(", ")}, updated_at = clock_timestamp() WHERE id = $1 RETURNING ${guardrailColumns}`,
      params,
    );
    await changed(deps, tx, updated!, "updated");
    return updated!;
  });
  deps.events.committed();
  deps.guardrails.clear();
  return toGuardrail(row);
}

export async function deleteGuardrail(deps: GuardrailDeps, organizationId: string, id: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const row = await guardrailRow(tx, organizationId, id);
    await tx.query(`DELETE FROM catalog.guardrails WHERE id = $1`, [id]);
    await changed(deps, tx, row, "deleted");
  });
  deps.events.committed();
  deps.guardrails.clear();
}

/** Assigns keys of the caller's organization; a hash of another organization's key is refused as unknown. */
export async function assignKeys(deps: GuardrailDeps, organizationId: string, id: string, hashes: string[], by: string) {
  await guardrailRow(deps.db, organizationId, id);
  const keys = await deps.identity.describeKeys(organizationId, hashes);
  const unknown = hashes.filter((h) => !keys.has(h));
  if (unknown.length) throw badRequest(`Invalid body: key_hashes: no such key ${unknown.slice(0, 5).join(", ")}`);
  const count = await deps.db.transaction(async (tx) => {
    const row = await lockedRow(tx, id);
    let n = 0;
    for (const hash of new Set(hashes)) {
      const inserted = await tx.query(
        `INSERT INTO catalog.guardrail_keys (guardrail_id, key_hash, organization_id, assigned_by) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING RETURNING key_hash`,
        [id, hash, organizationId, by],
      );
      n += inserted.length;
    }
    const [total] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.guardrail_keys WHERE guardrail_id = $1`, [id]);
    if (total!.n > maxBudgetKeys) throw badRequest(`Invalid body: key_hashes: a guardrail is assigned to at most ${maxBudgetKeys} keys`);
    if (n) await changed(deps, tx, row, "updated");
    return n;
  });
  deps.events.committed();
  deps.guardrails.clear();
  return { assigned_count: count };
}

export async function unassignKeys(deps: GuardrailDeps, organizationId: string, id: string, hashes: string[]) {
  await guardrailRow(deps.db, organizationId, id);
  const count = await deps.db.transaction(async (tx) => {
    const row = await lockedRow(tx, id);
    const removed = await tx.query(`DELETE FROM catalog.guardrail_keys WHERE guardrail_id = $1 AND key_hash = ANY($2::text[]) RETURNING key_hash`, [
      id,
      hashes,
    ]);
    if (removed.length) await changed(deps, tx, row, "updated");
    return removed.length;
  });
  deps.events.committed();
  deps.guardrails.clear();
  return { unassigned_count: count };
}

interface AssignmentRow {
  guardrail_id: string;
  key_hash: string;
  assigned_by: string | null;
  created_at: Date;
}

/** Assignments of one guardrail, or of every guardrail of the organization, with the keys' names. */
export async function listAssignments(deps: GuardrailDeps, organizationId: string, offset: number, limit: number, guardrailId?: string) {
  if (guardrailId) await guardrailRow(deps.db, organizationId, guardrailId);
  const params: unknown[] = [organizationId];
  let filter = "organization_id = $1";
  if (guardrailId) {
    params.push(guardrailId);
    filter += " AND guardrail_id = $2";
  }
  const [count] = await deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM catalog.guardrail_keys WHERE ${filter}`, params);
  const rows = await deps.db.query<AssignmentRow>(
    `SELECT guardrail_id::text, key_hash, assigned_by, created_at FROM catalog.guardrail_keys WHERE ${filter}
     ORDER BY created_at, key_hash LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit, offset],
  );
  const keys = rows.length ? await deps.identity.describeKeys(organizationId, rows.map((r) => r.key_hash)) : new Map();
  const data: KeyAssignment[] = rows.map((r) => ({
    id: `${r.guardrail_id}:${r.key_hash}`,
    guardrail_id: r.guardrail_id,
    key_hash: r.key_hash,
    key_name: keys.get(r.key_hash)?.name ?? "(deleted key)",
    key_label: keys.get(r.key_hash)?.label ?? "",
    assigned_by: r.assigned_by,
    created_at: r.created_at.toISOString(),
  }));
  return { data, total_count: count?.n ?? 0 };
}

/** Every guardrail that applies to a key: the ones assigned to it. */
export async function guardrailsForKey(db: Queryable, keyHash: string): Promise<GuardrailRow[]> {
  return db.query<GuardrailRow>(
    `SELECT ${guardrailColumns} FROM catalog.guardrails
     WHERE id IN (SELECT guardrail_id FROM catalog.guardrail_keys WHERE key_hash = $1)`,
    [keyHash],
  );
}

/**
 * Guardrails by key, kept on the request path without a query. Every guardrail event clears the whole
 * cache: changes are rare, and an assignment change does not say which keys it touched.
 */
export function guardrailCache(db: Queryable, ttlMs = 60_000) {
  const entries = new Map<string, { rows: Promise<GuardrailRow[]>; until: number }>();
  let generation = 0;
  return {
    forKey(keyHash: string): Promise<GuardrailRow[]> {
      const hit = entries.get(keyHash);
      if (hit && hit.until > Date.now()) return hit.rows;
      const started = generation;
      const rows = guardrailsForKey(db, keyHash);
      rows.then(
        () => {
          if (started !== generation) entries.delete(keyHash);
        },
        () => entries.delete(keyHash),
      );
      if (entries.size > 100_000) entries.clear();
      entries.set(keyHash, { rows, until: Date.now() + ttlMs });
      return rows;
    },
    clear(): void {
      generation++;
      entries.clear();
    },
  };
}
export type GuardrailCache = ReturnType<typeof guardrailCache>;
