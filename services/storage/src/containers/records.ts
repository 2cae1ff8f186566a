import type { ContainerFile } from "@switchyard/contracts";
import type { Queryable } from "@switchyard/runtime";
import { z } from "zod";
import type { Owner } from "../files/records.js";
import { hasControlCharacters } from "../files/sniff.js";

/** Container-relative: no leading slash, no `.` or `..` segments, no backslashes or control characters. */
export const containerPath = z
  .string()
  .min(1)
  .max(1024)
  .refine((p) => !p.startsWith("/") && !p.includes("\\") && !hasControlCharacters(p) && p.split("/").every((s) => s !== "" && s !== "." && s !== ".."), "must be a relative path inside the container");

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

/**
 * The path inside an id; undefined when it does not decode to a path a sandbox could have synced, so an
 * id holding a NUL, which a Postgres text value cannot, is refused before it reaches a query.
 */
export function pathOfContainerFileId(id: string): string | undefined {
  const encoded = id.slice("cfile_".length);
  const path = Buffer.from(encoded, "base64url").toString("utf8");
  // base64url that re-encodes differently (padding, stray bits, invalid UTF-8) is not an id we made.
  return containerFileIdOf(path) === id && containerPath.safeParse(path).success ? path : undefined;
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
  objectKey: string | null;
}

/**
 * Records what a sandbox reported, in one statement: each file's `synced_at` becomes the time of this
 * sync, which is the `created_at` clients read. The caller holds the container's lock and has checked
 * that it belongs to `owner`'s workspace. Returns how many files were written.
 */
export async function upsertContainerFiles(db: Queryable, owner: Owner, containerId: string, files: SyncedFile[], syncedAt: Date): Promise<number> {
  if (files.length === 0) return 0;
  const [result] = await db.query<{ written: number }>(
    `WITH written AS (
       INSERT INTO storage.container_files (container_id, path, organization_id, workspace_id, bytes, object_key, synced_at)
       SELECT $3, f.path, $1, $2, f.bytes, f.object_key, $5::timestamptz
       FROM jsonb_to_recordset($4::jsonb) AS f(path text, bytes bigint, object_key text)
       ON CONFLICT (container_id, path) DO UPDATE
         SET bytes = excluded.bytes, object_key = excluded.object_key, synced_at = excluded.synced_at
       RETURNING 1
     )
     SELECT count(*)::int AS written FROM written`,
    [owner.organizationId, owner.workspaceId, containerId, JSON.stringify(files.map((f) => ({ path: f.path, bytes: f.bytes, object_key: f.objectKey }))), syncedAt.toISOString()],
  );
  return result?.written ?? 0;
}

/** Bodies stored for these paths before, which a sync without content leaves stale. */
export async function storedObjects(db: Queryable, containerId: string, paths: string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const rows = await db.query<{ object_key: string }>(
    "SELECT object_key FROM storage.container_files WHERE container_id = $1 AND path = ANY($2::text[]) AND object_key IS NOT NULL",
    [containerId, paths],
  );
  return rows.map((r) => r.object_key);
}

/** Drops files the sandbox deleted; returns the keys of their bodies, to delete after commit. */
export async function deleteContainerFiles(db: Queryable, containerId: string, paths: string[]): Promise<{ removed: number; objects: string[] }> {
  if (paths.length === 0) return { removed: 0, objects: [] };
  const rows = await db.query<{ object_key: string | null }>("DELETE FROM storage.container_files WHERE container_id = $1 AND path = ANY($2::text[]) RETURNING object_key", [containerId, paths]);
  return { removed: rows.length, objects: rows.flatMap((r) => (r.object_key ? [r.object_key] : [])) };
}

/** After a whole-tree report: drops every file that report did not write (written ones carry its time). */
export async function pruneContainerFiles(db: Queryable, containerId: string, syncedAt: Date): Promise<{ removed: number; objects: string[] }> {
  const rows = await db.query<{ object_key: string | null }>("DELETE FROM storage.container_files WHERE container_id = $1 AND synced_at <> $2::timestamptz RETURNING object_key", [
    containerId,
    syncedAt.toISOString(),
  ]);
  return { removed: rows.length, objects: rows.flatMap((r) => (r.object_key ? [r.object_key] : [])) };
}
