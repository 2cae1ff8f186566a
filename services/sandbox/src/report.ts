import { countReport, reportCount, type Owner } from "./containers/records.js";
import type { SandboxDeps, SyncedFile, SyncReport } from "./deps.js";
import type { SandboxFile } from "./runners/types.js";

/** Storage takes at most this many files (or deleted paths), and a body of this many bytes, per sync call. */
const batchFiles = 1000;
const batchBytes = 16 * 1024 * 1024;
/** Files of one container that are listed in storage; past it the tool result says so. */
export const maxReportedFiles = 10_000;
// eslint-disable-next-line no-control-regex
const unreportable = /[\u0000-\u001f\u007f\\]/;

const signature = (file: SandboxFile) => `${file.bytes}:${file.modifiedAt.getTime()}`;
/** Storage takes relative paths of printable characters, without backslashes, of at most 1024 characters. */
const reportable = (file: SandboxFile) => file.path.length <= 1024 && !unreportable.test(file.path);

/**
 * Reports the container's files to storage: those new or changed since this replica's last report, with
 * their content up to the size limit, and those gone since. A replica that does not know the container's
 * last report (it did not make it, or it restarted) reports the whole tree, and storage drops what that
 * report did not name. Files it cannot report are named in the note it returns, never skipped silently.
 */
export async function reportFiles(deps: SandboxDeps, id: string, owner: Owner): Promise<{ synced: number; error?: string }> {
  const listed = await deps.runner.files(id, maxReportedFiles + 1);
  const truncated = listed.length > maxReportedFiles;
  const files = listed.slice(0, maxReportedFiles);
  const total = files.reduce((sum, f) => sum + f.bytes, 0);
  if (total > deps.limits.SANDBOX_DISK_BYTES) {
    return { synced: 0, error: `The container's files take ${total} bytes, over its ${deps.limits.SANDBOX_DISK_BYTES}-byte limit; remove some for them to be saved` };
  }
  const notes: string[] = [];
  const refused = files.filter((f) => !reportable(f));
  if (refused.length > 0) {
    deps.logger.warn({ containerId: id, files: refused.length, example: refused[0]!.path }, "container files with names storage refuses are not listed");
    notes.push(
      `${refused.length} file(s) are not in the container's file list because their names have control characters or backslashes, or pass 1024 characters (e.g. ${JSON.stringify(refused[0]!.path)}).`,
    );
  }
  if (truncated) {
    deps.logger.warn({ containerId: id, max: maxReportedFiles }, "container has more files than are listed");
    notes.push(`The container has more than ${maxReportedFiles} files: only ${maxReportedFiles} are in its file list, and files deleted from it stay listed until it has fewer.`);
  }
  const count = await reportCount(deps.db, id);
  const memory = deps.reported.get(id);
  const whole = memory === undefined || memory.report !== count;
  const last = whole ? new Map<string, string>() : memory.files;
  const present = files.filter(reportable);
  const changed = present.filter((f) => last.get(f.path) !== signature(f));
  // A truncated listing does not show every file, so what it lacks may still be there.
  const names = new Set(present.map((f) => f.path));
  const deleted = truncated ? [] : [...last.keys()].filter((path) => !names.has(path));
  /** What storage holds once this report is through: what it held and is unchanged, and what was sent. */
  const next = new Map(present.filter((f) => last.get(f.path) === signature(f)).map((f) => [f.path, signature(f)]));
  const base = { organization_id: owner.organizationId, workspace_id: owner.workspaceId, synced_at: new Date().toISOString() };
  let synced = 0;
  try {
    let batch: SyncedFile[] = [];
    let bytes = 0;
    const send = async (extra: Partial<SyncReport> = {}) => {
      synced += await deps.reportFiles(id, { ...base, files: batch, ...extra });
      batch = [];
      bytes = 0;
    };
    for (const file of changed) {
      const withContent = file.bytes <= deps.limits.SANDBOX_SYNC_FILE_BYTES;
      if (batch.length >= batchFiles || (withContent && bytes + file.bytes > batchBytes)) await send();
      const entry: SyncedFile = { path: file.path, bytes: file.bytes, modified_at: file.modifiedAt.toISOString() };
      if (withContent) {
        const content = await deps.runner.read(id, file.path).catch(() => undefined);
        if (content === undefined || content.length !== file.bytes) continue; // changed or removed since listed: the next report has it
        entry.content_base64 = content.toString("base64");
        bytes += file.bytes;
      }
      batch.push(entry);
      next.set(file.path, signature(file));
    }
    for (let start = 0; start < deleted.length; start += batchFiles) await send({ deleted: deleted.slice(start, start + batchFiles) });
    // A whole report ends with `complete`, even with nothing in it: storage then drops every file it did not name.
    if (whole && !truncated) await send({ complete: true });
    else if (batch.length > 0) await send();
  } catch (error) {
    deps.logger.warn({ err: error, containerId: id }, "could not report container files to storage");
    return { synced, error: [`The container's files could not be saved: ${(error as Error).message}`, ...notes].join(" ") };
  }
  deps.reported.set(id, { report: await countReport(deps.db, id), files: next });
  return { synced, ...(notes.length > 0 ? { error: notes.join(" ") } : {}) };
}
