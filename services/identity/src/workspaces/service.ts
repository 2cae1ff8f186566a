import { randomUUID } from "node:crypto";
import type { CreateWorkspaceBody, UpdateWorkspaceBody, Workspace } from "@switchyard/contracts";
import { badRequest, conflict, isUniqueViolation, notFound, type Queryable } from "@switchyard/runtime";
import type { KeyDeps } from "../keys/service.js";
import { settingNames, toWorkspace, workspaceColumns, type WorkspaceRow } from "./records.js";

const workspaceNotFound = () => notFound("Workspace not found");

function splitBody(body: UpdateWorkspaceBody) {
  const settings: Record<string, unknown> = {};
  for (const name of settingNames) if (body[name] !== undefined) settings[name] = body[name];
  return settings;
}

export async function insertWorkspace(
  tx: Queryable,
  organizationId: string,
  body: CreateWorkspaceBody,
  options: { isDefault?: boolean; createdBy?: string | null } = {},
): Promise<WorkspaceRow> {
  const [row] = await tx.query<WorkspaceRow>(
    `INSERT INTO identity.workspaces (id, organization_id, name, slug, description, is_default, default_guardrail_id,
       allowed_providers, ignored_providers, data_collection, zdr, settings, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     RETURNING ${workspaceColumns}`,
    [
      randomUUID(),
      organizationId,
      body.name,
      body.slug,
      body.description ?? null,
      options.isDefault ?? false,
      randomUUID(),
      body.allowed_providers ?? null,
      body.ignored_providers ?? null,
      body.data_collection ?? "allow",
      body.zdr ?? false,
      JSON.stringify(splitBody(body)),
      options.createdBy ?? null,
    ],
  );
  if (!row) throw new Error("workspace insert returned no row");
  return row;
}

export async function createWorkspace(deps: KeyDeps, organizationId: string, body: CreateWorkspaceBody, createdBy: string | null): Promise<Workspace> {
  try {
    const row = await deps.db.transaction(async (tx) => {
      const inserted = await insertWorkspace(tx, organizationId, body, { createdBy });
      await deps.events.enqueue(tx, "identity.workspace.created.v1", eventData(inserted));
      return inserted;
    });
    deps.events.committed();
    return toWorkspace(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`A workspace with slug "${body.slug}" already exists`);
    throw error;
  }
}

const eventData = (row: WorkspaceRow) => ({
  id: row.id,
  organization_id: row.organization_id,
  default_guardrail_id: row.default_guardrail_id,
});

export async function getWorkspace(db: Queryable, organizationId: string, id: string): Promise<Workspace> {
  const [row] = await db.query<WorkspaceRow>(`SELECT ${workspaceColumns} FROM identity.workspaces WHERE id = $1 AND organization_id = $2`, [
    id,
    organizationId,
  ]);
  if (!row) throw workspaceNotFound();
  return toWorkspace(row);
}

export async function listWorkspaces(db: Queryable, organizationId: string, offset: number, limit: number) {
  const [count] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM identity.workspaces WHERE organization_id = $1`, [organizationId]);
  const rows = await db.query<WorkspaceRow>(
    `SELECT ${workspaceColumns} FROM identity.workspaces WHERE organization_id = $1
     ORDER BY is_default DESC, created_at, id LIMIT $2 OFFSET $3`,
    [organizationId, limit, offset],
  );
  return { data: rows.map(toWorkspace), total_count: count?.n ?? 0 };
}

const columnFields = ["name", "slug", "description", "allowed_providers", "ignored_providers", "data_collection", "zdr"] as const;

export async function updateWorkspace(deps: KeyDeps, organizationId: string, id: string, body: UpdateWorkspaceBody): Promise<Workspace> {
  const sets: string[] = [];
  const params: unknown[] = [id, organizationId];
  for (const field of columnFields) {
    if (body[field] === undefined) continue;
    params.push(body[field]);
    sets.push(`${field} = $${params.length}`);
  }
  const settings = splitBody(body);
  if (Object.keys(settings).length > 0) {
    params.push(JSON.stringify(settings));
    sets.push(`settings = settings || $${params.length}::jsonb`);
  }
  try {
    const row = await deps.db.transaction(async (tx) => {
      if (sets.length === 0) {
        const [current] = await tx.query<WorkspaceRow>(`SELECT ${workspaceColumns} FROM identity.workspaces WHERE id = $1 AND organization_id = $2`, params);
        return current;
      }
      const [updated] = await tx.query<WorkspaceRow>(
        `UPDATE identity.workspaces SET ${sets.join(", ")}, updated_at = clock_timestamp()
         WHERE id = $1 AND organization_id = $2 RETURNING ${workspaceColumns}`,
        params,
      );
      if (updated) await deps.events.enqueue(tx, "identity.workspace.updated.v1", eventData(updated));
      return updated;
    });
    if (!row) throw workspaceNotFound();
    deps.events.committed();
    deps.workspaceChanged?.(id);
    return toWorkspace(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`A workspace with slug "${body.slug}" already exists`);
    throw error;
  }
}

export async function deleteWorkspace(deps: KeyDeps, organizationId: string, id: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const [row] = await tx.query<WorkspaceRow>(
      `SELECT ${workspaceColumns} FROM identity.workspaces WHERE id = $1 AND organization_id = $2 FOR UPDATE`,
      [id, organizationId],
    );
    if (!row) throw workspaceNotFound();
    if (row.is_default) throw badRequest("The default workspace cannot be deleted");
    const [keys] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM identity.api_keys WHERE workspace_id = $1`, [id]);
    if ((keys?.n ?? 0) > 0) throw conflict(`Workspace still has ${keys?.n} API key(s); delete or move them first`);
    await tx.query(`DELETE FROM identity.workspaces WHERE id = $1`, [id]);
    await deps.events.enqueue(tx, "identity.workspace.deleted.v1", eventData(row));
  });
  deps.events.committed();
  deps.workspaceChanged?.(id);
}
