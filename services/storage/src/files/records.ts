import { randomBytes } from "node:crypto";
import type { WorkspaceFile } from "@switchyard/contracts";
import type { Queryable } from "@switchyard/runtime";

export interface FileRow {
  id: string;
  seq: string;
  organization_id: string;
  workspace_id: string;
  filename: string;
  mime_type: string;
  size_bytes: string;
  object_key: string;
  created_at: Date;
}

/** `or_file_` + 128 random bits: nothing about the file can be read from its id. */
export const newFileId = (): string => `or_file_${randomBytes(16).toString("base64url")}`;

export const toWorkspaceFile = (row: FileRow): WorkspaceFile => ({
  _shape: "openrouter",
  id: row.id,
  filename: row.filename,
  mime_type: row.mime_type,
  size_bytes: Number(row.size_bytes),
  created_at: row.created_at.toISOString(),
  downloadable: true,
  type: "file",
});

/** `seq` comes out as text (a bigint may pass 2^53); ordering must name the table's column, not this one. */
const columns = "id, seq::text, organization_id::text, workspace_id::text, filename, mime_type, size_bytes::text, object_key, created_at";

export interface Owner {
  organizationId: string;
  workspaceId: string;
}

/** A new upload's row, before its object is written: a crash in between leaves an orphan the sweeper finds. */
export async function insertUpload(db: Queryable, owner: Owner, file: { id: string; filename: string; mimeType: string; size: number; objectKey: string }): Promise<void> {
  await db.query(
    `INSERT INTO storage.files (id, organization_id, workspace_id, filename, mime_type, size_bytes, object_key, state)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'uploading')`,
    [file.id, owner.organizationId, owner.workspaceId, file.filename, file.mimeType, file.size, file.objectKey],
  );
}

/** Undefined when the upload's row was taken while its body was written (its workspace was deleted). */
export async function markReady(db: Queryable, id: string): Promise<FileRow | undefined> {
  const [row] = await db.query<FileRow>(`UPDATE storage.files SET state = 'ready', updated_at = now() WHERE id = $1 AND state = 'uploading' RETURNING ${columns}`, [id]);
  return row;
}

/** A ready file of this workspace (and organization); another workspace's file is as good as missing. */
export async function findFile(db: Queryable, owner: Owner, id: string): Promise<FileRow | undefined> {
  const [row] = await db.query<FileRow>(
    `SELECT ${columns} FROM storage.files WHERE id = $1 AND workspace_id = $2 AND organization_id = $3 AND state = 'ready'`,
    [id, owner.workspaceId, owner.organizationId],
  );
  return row;
}

/** Up to `limit + 1` ready files after `afterSeq`, in upload order (the extra one says whether more follow). */
export async function listFiles(db: Queryable, owner: Owner, afterSeq: string | undefined, limit: number): Promise<FileRow[]> {
  return db.query<FileRow>(
    `SELECT ${columns} FROM storage.files
     WHERE workspace_id = $1 AND organization_id = $2 AND state = 'ready' AND seq > $3::bigint
     ORDER BY files.seq LIMIT $4`,
    [owner.workspaceId, owner.organizationId, afterSeq ?? "0", limit + 1],
  );
}

/** The position of a file id in its workspace's listing, for `after` / `after_id` cursors. */
export async function seqOf(db: Queryable, owner: Owner, id: string): Promise<string | undefined> {
  const [row] = await db.query<{ seq: string }>(
    `SELECT seq::text FROM storage.files WHERE id = $1 AND workspace_id = $2 AND organization_id = $3`,
    [id, owner.workspaceId, owner.organizationId],
  );
  return row?.seq;
}

/** Hides the file at once; its object is deleted next and the row after that. */
export async function markDeleting(db: Queryable, owner: Owner, id: string): Promise<FileRow | undefined> {
  const [row] = await db.query<FileRow>(
    `UPDATE storage.files SET state = 'deleting', updated_at = now()
     WHERE id = $1 AND workspace_id = $2 AND organization_id = $3 AND state = 'ready' RETURNING ${columns}`,
    [id, owner.workspaceId, owner.organizationId],
  );
  return row;
}

export async function deleteRow(db: Queryable, id: string): Promise<void> {
  await db.query(`DELETE FROM storage.files WHERE id = $1`, [id]);
}

/** Uploads that never finished and deletions that never completed, older than `olderThanMs`. */
export async function unfinished(db: Queryable, olderThanMs: number, limit = 100): Promise<Array<{ id: string; object_key: string }>> {
  return db.query(
    `SELECT id, object_key FROM storage.files WHERE state <> 'ready' AND updated_at < now() - ($1::bigint * interval '1 millisecond') ORDER BY updated_at LIMIT $2`,
    [olderThanMs, limit],
  );
}
