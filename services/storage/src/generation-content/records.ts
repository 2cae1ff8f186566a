import type { GenerationContent, SaveGenerationContent } from "@switchyard/contracts";
import { textOf, type Db, type Logger, type ObjectStore, type Queryable } from "@switchyard/runtime";

const objectKey = (organizationId: string, generationId: string) => `generation-content/${organizationId}/${generationId}.json`;

/**
 * Keeps what a generation was sent and answered, for `retentionMs`: the body in the object store, then its
 * row (which says where, and until when). Saving the same generation again replaces it.
 */
export async function saveContent(deps: { db: Queryable; objects: ObjectStore }, entry: SaveGenerationContent, retentionMs: number): Promise<void> {
  const key = objectKey(entry.organization_id, entry.generation_id);
  await deps.objects.put(key, Buffer.from(JSON.stringify(entry.content)), "application/json");
  await deps.db.query(
    `INSERT INTO storage.generation_content (generation_id, organization_id, workspace_id, object_key, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5::double precision / 1000))
     ON CONFLICT (generation_id) DO UPDATE SET object_key = excluded.object_key, expires_at = excluded.expires_at`,
    [entry.generation_id, entry.organization_id, entry.workspace_id, key, retentionMs],
  );
}

/** A generation's kept content, if its organization's and not yet past its retention. */
export async function readContent(deps: { db: Queryable; objects: ObjectStore }, generationId: string, organizationId: string): Promise<GenerationContent | undefined> {
  const [row] = await deps.db.query<{ object_key: string }>(
    `SELECT object_key FROM storage.generation_content WHERE generation_id = $1 AND organization_id = $2 AND expires_at > now()`,
    [generationId, organizationId],
  );
  if (!row) return undefined;
  const stored = await deps.objects.get(row.object_key);
  if (!stored) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of stored.body) chunks.push(chunk as Buffer);
  return JSON.parse(textOf(chunks)) as GenerationContent;
}

/** Removes content past its retention: the object, then the row. Returns how many went. */
export async function deleteExpiredContent(deps: { db: Db; objects: ObjectStore }): Promise<number> {
  const rows = await deps.db.query<{ generation_id: string; object_key: string }>(
    `SELECT generation_id, object_key FROM storage.generation_content WHERE expires_at <= now() ORDER BY expires_at LIMIT 1000`,
  );
  for (const row of rows) {
    await deps.objects.delete(row.object_key);
    await deps.db.query(`DELETE FROM storage.generation_content WHERE generation_id = $1 AND expires_at <= now()`, [row.generation_id]);
  }
  return rows.length;
}

/** Runs `deleteExpiredContent` every `everyMs`. */
export function startContentRetention(deps: { db: Db; objects: ObjectStore; logger: Logger; everyMs: number }): { stop(): void } {
  const timer = setInterval(() => {
    deleteExpiredContent(deps).then(
      (n) => n && deps.logger.info({ removed: n }, "removed generation content past its retention"),
      (error: unknown) => deps.logger.warn({ err: error }, "could not remove expired generation content; retrying next time"),
    );
  }, deps.everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
