import type { Db, Logger } from "@switchyard/runtime";
import type { Completion, StreamPart } from "../generation/parts.js";

/** A kept answer: whole for a buffered request, the provider's events in order for a streamed one, or vectors. */
export type CachedAnswer =
  | { kind: "buffered"; completion: Completion }
  | { kind: "streamed"; batches: StreamPart[][] }
  /** Embeddings: the vectors as the provider sent them, and whether base64 ones can be written as they are. */
  | { kind: "embeddings"; vectors: Array<number[] | string>; verbatim: boolean };

/** One kept answer and the endpoint that gave it. */
export interface CacheEntry {
  /** The generation whose answer it is. */
  generationId: string;
  provider: string;
  model: string;
  answer: CachedAnswer;
}

interface EntryRow {
  generation_id: string;
  provider: string;
  model: string;
  answer: CachedAnswer;
}

/** Answers kept in inference's own schema, one row per cache key, scoped to the workspace that asked. */
export class ResponseCacheStore {
  constructor(private readonly db: Db) {}

  /** The live answer of `key` in `workspaceId`; an expired one is never returned, even before it is purged. */
  async find(workspaceId: string, key: string): Promise<CacheEntry | undefined> {
    const [row] = await this.db.query<EntryRow>(
      `SELECT generation_id, provider, model, answer FROM inference.response_cache WHERE key = $1 AND workspace_id = $2 AND expires_at > now()`,
      [key, workspaceId],
    );
    return row && { generationId: row.generation_id, provider: row.provider, model: row.model, answer: row.answer };
  }

  /** Keeps `entry` for `ttlSeconds`, replacing what the key held (an expired answer, or a concurrent miss's). */
  async save(workspaceId: string, key: string, entry: CacheEntry, text: string, ttlSeconds: number): Promise<void> {
    await this.db.query(
      `INSERT INTO inference.response_cache (key, workspace_id, generation_id, provider, model, answer, bytes, expires_at)
       VALUES ($1, $2, $8, $3, $4, $5::jsonb, $6, now() + $7::int * interval '1 second')
       ON CONFLICT (key) DO UPDATE SET generation_id = EXCLUDED.generation_id, provider = EXCLUDED.provider, model = EXCLUDED.model, answer = EXCLUDED.answer,
         bytes = EXCLUDED.bytes, created_at = now(), expires_at = EXCLUDED.expires_at`,
      [key, workspaceId, entry.provider, entry.model, text, Buffer.byteLength(text), ttlSeconds, entry.generationId],
    );
  }

  /** Removes expired answers; returns how many. */
  async purge(): Promise<number> {
    const rows = await this.db.query(`DELETE FROM inference.response_cache WHERE expires_at <= now() RETURNING 1`);
    return rows.length;
  }
}

/** Purges expired answers every `intervalMs`; a failed purge is logged and tried again next time. */
export function startCachePurge(store: ResponseCacheStore, intervalMs: number, logger: Logger): { stop(): void } {
  const timer = setInterval(() => {
    store
      .purge()
      .then((removed) => {
        if (removed) logger.debug({ removed }, "expired cached responses purged");
      })
      .catch((error: unknown) => logger.warn({ err: error }, "could not purge expired cached responses"));
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
