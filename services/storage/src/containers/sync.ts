import { containerId as containerIdSchema } from "@switchyard/contracts";
import { badRequest, parseInput, type Logger } from "@switchyard/runtime";
import { z } from "zod";
import type { StorageDeps } from "../deps.js";
import { containerPath, containerWorkspace, deleteContainerFiles, pruneContainerFiles, storedObjects, upsertContainerFiles } from "./records.js";

export const syncBody = z
  .object({
    organization_id: z.uuid(),
    workspace_id: z.uuid(),
    /** Files new or changed since the sandbox's last report. */
    files: z
      .array(
        z.object({
          path: containerPath,
          bytes: z.number().int().min(0),
          /** The file's modification time in the sandbox; `created_at` is the sync's time, not this. */
          modified_at: z.iso.datetime({ offset: true }),
          /** The file's content, when the sandbox sends it along; stored under the container's prefix. */
          content_base64: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/).optional(),
        }),
      )
      .max(1000)
      .default([]),
    /** Paths deleted in the container since its last report. */
    deleted: z.array(containerPath).max(1000).default([]),
    /** When the sync began (one time for all calls of one report); now when absent. */
    synced_at: z.iso.datetime({ offset: true }).optional(),
    /** The last call of a report of the whole tree: every file of the container this sync did not write is gone. */
    complete: z.boolean().default(false),
  })
  .refine((b) => b.files.length > 0 || b.deleted.length > 0 || b.complete, "must name files, deleted paths, or be complete")
  .refine((b) => new Set([...b.files.map((f) => f.path), ...b.deleted]).size === b.files.length + b.deleted.length, "must name each path once");

export type SyncBody = z.input<typeof syncBody>;

/**
 * A sandbox reports the files it produced and those it deleted. Bodies sent along are stored under
 * `containers/<id>/`; the metadata is written under the container's lock, and a
 * `storage.container_files.synced.v1` event tells whoever listens. Returns how many files were recorded.
 */
export async function syncContainerFiles(deps: Pick<StorageDeps, "db" | "objects" | "events"> & { logger?: Logger }, containerIdInput: string, input: unknown): Promise<number> {
  const containerId = parseInput(containerIdSchema, containerIdInput, "path: container_id");
  const body = parseInput(syncBody, input, "body");
  const belongs = await containerWorkspace(deps.db, containerId);
  if (belongs !== undefined && belongs !== body.workspace_id) throw badRequest(`Container ${containerId} belongs to another workspace`);
  const files = await Promise.all(
    body.files.map(async (file) => {
      let objectKey: string | null = null;
      if (file.content_base64 !== undefined) {
        const content = Buffer.from(file.content_base64, "base64");
        if (content.length !== file.bytes) throw badRequest(`Invalid body: ${file.path}: content is ${content.length} bytes, not ${file.bytes}`);
        objectKey = `containers/${containerId}/${file.path}`;
        await deps.objects.put(objectKey, content, "application/octet-stream");
      }
      return { path: file.path, bytes: file.bytes, objectKey };
    }),
  );
  const owner = { organizationId: body.organization_id, workspaceId: body.workspace_id };
  const syncedAt = body.synced_at ? new Date(body.synced_at) : new Date();
  const outcome = await deps.db.transaction(async (tx) => {
    // Two first syncs of one container from two workspaces would each see it unowned without this.
    await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`storage:container:${containerId}`]);
    const owned = await containerWorkspace(tx, containerId);
    if (owned !== undefined && owned !== owner.workspaceId) return undefined;
    const stale = await storedObjects(
      tx,
      containerId,
      files.filter((f) => f.objectKey === null).map((f) => f.path),
    );
    const written = await upsertContainerFiles(tx, owner, containerId, files, syncedAt);
    const deleted = await deleteContainerFiles(tx, containerId, body.deleted);
    const pruned = body.complete ? await pruneContainerFiles(tx, containerId, syncedAt) : { removed: 0, objects: [] };
    // The event counts files written (at least one); deletions have no field in its v1 payload.
    if (written > 0) {
      await deps.events.enqueue(tx, "storage.container_files.synced.v1", { container_id: containerId, organization_id: owner.organizationId, workspace_id: owner.workspaceId, files: written });
    }
    return { written, objects: [...stale, ...deleted.objects, ...pruned.objects] };
  });
  if (!outcome) throw badRequest(`Container ${containerId} belongs to another workspace`);
  deps.events.committed();
  // After the commit: a body that outlives its row wastes space; a row whose body is gone would lie.
  for (const key of outcome.objects) {
    await deps.objects.delete(key).catch((error: unknown) => deps.logger?.warn({ err: error, key }, "could not delete a container file's body; it stays in the store"));
  }
  return outcome.written;
}
