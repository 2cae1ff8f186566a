import { containerId as containerIdSchema } from "@switchyard/contracts";
import { badRequest, parseInput } from "@switchyard/runtime";
import { z } from "zod";
import type { StorageDeps } from "../deps.js";
import { hasControlCharacters } from "../files/sniff.js";
import { containerWorkspace, upsertContainerFiles } from "./records.js";

/** Container-relative: no leading slash, no `.` or `..` segments, no backslashes or control characters. */
const containerPath = z
  .string()
  .min(1)
  .max(1024)
  .refine((p) => !p.startsWith("/") && !p.includes("\\") && !hasControlCharacters(p) && p.split("/").every((s) => s !== "" && s !== "." && s !== ".."), "must be a relative path inside the container");

export const syncBody = z.object({
  organization_id: z.uuid(),
  workspace_id: z.uuid(),
  files: z
    .array(
      z.object({
        path: containerPath,
        bytes: z.number().int().min(0),
        modified_at: z.iso.datetime({ offset: true }),
        /** The file's content, when the sandbox sends it along; stored under the container's prefix. */
        content_base64: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/).optional(),
      }),
    )
    .min(1)
    .max(1000),
});

export type SyncBody = z.input<typeof syncBody>;

/**
 * A sandbox reports the files it produced. Bodies sent along are stored under `containers/<id>/`; the
 * metadata is upserted and a `storage.container_files.synced.v1` event tells whoever listens. Returns how
 * many files were recorded.
 */
export async function syncContainerFiles(deps: Pick<StorageDeps, "db" | "objects" | "events">, containerIdInput: string, input: unknown): Promise<number> {
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
      return { path: file.path, bytes: file.bytes, modifiedAt: new Date(file.modified_at), objectKey };
    }),
  );
  const owner = { organizationId: body.organization_id, workspaceId: body.workspace_id };
  const written = await deps.db.transaction(async (tx) => {
    const count = await upsertContainerFiles(tx, owner, containerId, files);
    if (count > 0) {
      await deps.events.enqueue(tx, "storage.container_files.synced.v1", { container_id: containerId, organization_id: owner.organizationId, workspace_id: owner.workspaceId, files: count });
    }
    return count;
  });
  deps.events.committed();
  if (written === 0) throw badRequest(`Container ${containerId} belongs to another workspace`);
  return written;
}
