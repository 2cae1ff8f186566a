import type { Owner } from "./containers/records.js";
import type { SandboxDeps, SyncedFile } from "./deps.js";

/** Storage takes at most this many files, and a body of this many bytes, per sync call. */
const batchFiles = 1000;
const batchBytes = 16 * 1024 * 1024;
// eslint-disable-next-line no-control-regex
const unreportable = /[\u0000-\u001f\u007f\\]/;

/**
 * Reports the files that changed since the container's last report (all of them after a start), with
 * their content up to the size limit. Returns how many were recorded, or why none could be.
 */
export async function reportFiles(deps: SandboxDeps, id: string, owner: Owner): Promise<{ synced: number; error?: string }> {
  const files = await deps.runner.files(id, 10_000);
  const total = files.reduce((sum, f) => sum + f.bytes, 0);
  if (total > deps.limits.SANDBOX_DISK_BYTES) {
    return { synced: 0, error: `The container's files take ${total} bytes, over its ${deps.limits.SANDBOX_DISK_BYTES}-byte limit; remove some for them to be saved` };
  }
  const last = deps.reported.get(id) ?? new Map<string, string>();
  // Storage takes relative paths of printable characters; a name it would refuse is not reported.
  const changed = files.filter((f) => last.get(f.path) !== `${f.bytes}:${f.modifiedAt.getTime()}` && f.path.length <= 1024 && !unreportable.test(f.path));
  let synced = 0;
  try {
    let batch: SyncedFile[] = [];
    let bytes = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      synced += await deps.reportFiles(id, { organization_id: owner.organizationId, workspace_id: owner.workspaceId, files: batch });
      batch = [];
      bytes = 0;
    };
    for (const file of changed) {
      const withContent = file.bytes <= deps.limits.SANDBOX_SYNC_FILE_BYTES;
      if (batch.length >= batchFiles || (withContent && bytes + file.bytes > batchBytes)) await flush();
      const entry: SyncedFile = { path: file.path, bytes: file.bytes, modified_at: file.modifiedAt.toISOString() };
      if (withContent) {
        const content = await deps.runner.read(id, file.path).catch(() => undefined);
        if (content === undefined || content.length !== file.bytes) continue; // changed or removed since listed
        entry.content_base64 = content.toString("base64");
        bytes += file.bytes;
      }
      batch.push(entry);
    }
    await flush();
  } catch (error) {
    deps.logger.warn({ err: error, containerId: id }, "could not report container files to storage");
    return { synced, error: `The container's files could not be saved: ${(error as Error).message}` };
  }
  deps.reported.set(id, new Map(files.map((f) => [f.path, `${f.bytes}:${f.modifiedAt.getTime()}`])));
  return { synced };
}
