import type { ContainerFile } from "@switchyard/contracts";
import type { Queryable } from "@switchyard/runtime";
import type { Owner } from "../files/records.js";

export interface ContainerFileRow {
  container_id: string;
  path: string;
  bytes: string;
  synced_at: Date;
  /** Where the body is, when the sandbox sent it along. */
  object_key: string | null;
}

/** `cfile_` + base64url of the path: the id is the path, so no id table is needed. */
export const containerFileIdOf = (path: string): string => `cfile_${Buffer.from(path, "utf8").toString("base64url")}`;

/** The path inside an id; undefined when it does not decode to a container path. */
export function pathOfContainerFileId(id: string): string | undefined {
  const encoded = id.slice("cfile_".length);
  const path = Buffer.from(encoded, "base64url").toString("utf8");
  // base64url that re-encodes differently (padding, stray bits, invalid UTF-8) is not an id we made.
  return path && containerFileIdOf(path) === id ? path : undefined;
}

export const toContainerFile = (row: ContainerFileRow): ContainerFile => ({
  id: containerFileIdOf(row.path),
  object: "container.file",
  container_id: row.container_id,
  path: row.path,
  bytes: Number(row.bytes),
  created_at: Math.floor(row.synced_at.getTime() / 1000),
  source: "assistant",
});

/** Up to `limit + 1` files of a container of this workspace after `afterPath`, in byte order of their paths. */
export async function listContainerFiles(db: Queryable, owner: Owner, containerId: string, afterPath: string | undefined, limit: number): Promise<ContainerFileRow[]> {
  return db.query<ContainerFileRow>(
    `SELECT container_id, path, bytes::text, synced_at, object_key FROM storage.container_files
     WHERE workspace_id = $1 AND organization_id = $2 AND container_id = $3 AND ($4::text IS NULL OR path > $4::text COLLATE "C")
     ORDER BY path COLLATE "C" LIMIT $5`,
    [owner.workspaceId, owner.organizationId, containerId, afterPath ?? null, limit + 1],
  );
}

export async function findContainerFile(db: Queryable, owner: Owner, containerId: string, path: string): Promise<ContainerFileRow | undefined> {
  const [row] = await db.query<ContainerFileRow>(
    `SELECT container_id, path, bytes::text, synced_at, object_key FROM storage.container_files
     WHERE workspace_id = $1 AND organization_id = $2 AND container_id = $3 AND path = $4`,
    [owner.workspaceId, owner.organizationId, containerId, path],
  );
  return row;
}

/** The workspace a container belongs to: the one that first synced files into it. */
export async function containerWorkspace(db: Queryable, containerId: string): Promise<string | undefined> {
  const [row] = await db.query<{ workspace_id: string }>(`SELECT workspace_id::text FROM storage.container_files WHERE container_id = $1 LIMIT 1`, [containerId]);
  return row?.workspace_id;
}

export interface SyncedFile {
  path: string;
  bytes: number;
  modifiedAt: Date;
  objectKey: string | null;
}

/**
 * Records what a sandbox reported, in one statement. A container belongs to the workspace that first
 * synced it: a report naming another workspace for it changes nothing and returns 0.
 */
export async function upsertContainerFiles(db: Queryable, owner: Owner, containerId: string, files: SyncedFile[]): Promise<number> {
  const [result] = await db.query<{ written: number }>(
    `WITH owner AS (
       SELECT workspace_id FROM storage.container_files WHERE container_id = $3 LIMIT 1
     ), written AS (
       INSERT INTO storage.container_files (container_id, path, organization_id, workspace_id, bytes, object_key, synced_at)
       SELECT $3, f.path, $1, $2, f.bytes, f.object_key, f.modified_at
       FROM jsonb_to_recordset($4::jsonb) AS f(path text, bytes bigint, object_key text, modified_at timestamptz)
       WHERE NOT EXISTS (SELECT 1 FROM owner WHERE owner.workspace_id <> $2::uuid)
       ON CONFLICT (container_id, path) DO UPDATE
         SET bytes = excluded.bytes, object_key = excluded.object_key, synced_at = excluded.synced_at
         WHERE storage.container_files.workspace_id = excluded.workspace_id
       RETURNING 1
     )
     SELECT count(*)::int AS written FROM written`,
    [owner.organizationId, owner.workspaceId, containerId, JSON.stringify(files.map((f) => ({ path: f.path, bytes: f.bytes, object_key: f.objectKey, modified_at: f.modifiedAt.toISOString() })))],
  );
  return result?.written ?? 0;
}
