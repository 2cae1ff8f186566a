import type { Db, Logger, ObjectStore } from "@switchyard/runtime";
import { deleteRow, unfinished } from "./records.js";

/**
 * Removes what uploads and deletions left half-done (a crash between row and object): the object first,
 * then the row, so nothing listed ever lacks its body and no body outlives its row for long.
 */
export function startSweeper(deps: { db: Db; objects: ObjectStore; logger: Logger; olderThanMs: number; everyMs?: number }): { stop(): void; sweep(): Promise<number> } {
  async function sweep(): Promise<number> {
    const rows = await unfinished(deps.db, deps.olderThanMs);
    for (const row of rows) {
      await deps.objects.delete(row.object_key);
      await deleteRow(deps.db, row.id);
    }
    if (rows.length) deps.logger.info({ removed: rows.length }, "removed unfinished uploads and deletions");
    return rows.length;
  }
  const timer = setInterval(() => {
    sweep().catch((error: unknown) => deps.logger.warn({ err: error }, "file sweep failed; retrying next time"));
  }, deps.everyMs ?? 60_000);
  timer.unref();
  return { stop: () => clearInterval(timer), sweep };
}
