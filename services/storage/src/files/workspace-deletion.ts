import type { EventData } from "@switchyard/contracts";
import type { Bus, Db, Logger, ObjectStore, Subscription } from "@switchyard/runtime";
import { deleteRow } from "./records.js";

export const workspaceFilesConsumer = "storage_workspace_files";
const batch = 100;

/**
 * Removes every file of a deleted workspace as `DELETE /files/{id}` removes one: all are hidden at once
 * (state `deleting`, also uploads still being written), then each object is deleted before its row, so a
 * failure leaves rows that a retry (or the sweeper) finishes, never an object without its row. Container
 * files go the same way: their bodies first, then their rows. Idempotent: a second run finds nothing.
 */
export async function removeWorkspaceFiles(
  deps: { db: Db; objects: ObjectStore },
  organizationId: string,
  workspaceId: string,
): Promise<{ files: number; containerFiles: number; bytes: number }> {
  const owner = [workspaceId, organizationId];
  await deps.db.query(
    `UPDATE storage.files SET state = 'deleting', updated_at = now() WHERE workspace_id = $1 AND organization_id = $2 AND state <> 'deleting'`,
    owner,
  );
  let files = 0;
  let bytes = 0;
  for (;;) {
    const rows = await deps.db.query<{ id: string; object_key: string; size_bytes: string }>(
      `SELECT id, object_key, size_bytes::text FROM storage.files WHERE workspace_id = $1 AND organization_id = $2 ORDER BY id LIMIT ${batch}`,
      owner,
    );
    for (const row of rows) {
      await deps.objects.delete(row.object_key);
      await deleteRow(deps.db, row.id);
      bytes += Number(row.size_bytes);
    }
    files += rows.length;
    if (rows.length < batch) break;
  }
  let containerFiles = 0;
  for (;;) {
    const rows = await deps.db.query<{ container_id: string; path: string; object_key: string | null; bytes: string }>(
      `SELECT container_id, path, object_key, bytes::text FROM storage.container_files WHERE workspace_id = $1 AND organization_id = $2
       ORDER BY container_id, path COLLATE "C" LIMIT ${batch}`,
      owner,
    );
    for (const row of rows) if (row.object_key) await deps.objects.delete(row.object_key);
    await deps.db.query(
      `DELETE FROM storage.container_files c USING unnest($1::text[], $2::text[]) AS gone(container_id, path)
       WHERE c.container_id = gone.container_id AND c.path = gone.path`,
      [rows.map((r) => r.container_id), rows.map((r) => r.path)],
    );
    containerFiles += rows.length;
    bytes += rows.reduce((sum, r) => sum + (r.object_key ? Number(r.bytes) : 0), 0);
    if (rows.length < batch) break;
  }
  return { files, containerFiles, bytes };
}

/**
 * `identity.workspace.deleted.v1`, applied by one durable consumer shared by every storage replica. A failure
 * (object store or database away) throws, so the bus delivers the event again with backoff; after
 * `maxDeliveries` it is parked and logged, and the sweeper still finishes the files already hidden.
 */
export async function startWorkspaceFilesConsumer(deps: { db: Db; objects: ObjectStore; bus: Bus; logger: Logger }, maxDeliveries = 20): Promise<Subscription> {
  return deps.bus.consume(
    workspaceFilesConsumer,
    ["identity.workspace.deleted.v1"],
    async (event) => {
      const { id: workspaceId, organization_id: organizationId } = event.data as EventData<"identity.workspace.deleted.v1">;
      const removed = await removeWorkspaceFiles(deps, organizationId, workspaceId);
      deps.logger.info({ workspaceId, organizationId, ...removed }, "removed the files of a deleted workspace");
    },
    { maxDeliveries },
  );
}
