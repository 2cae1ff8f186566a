import { observeGeneration, picoToUsd, serviceOf, type Db, type EventSink, type Logger } from "@switchyard/runtime";
import { servedSample, storedCount, type EndpointStats } from "@switchyard/upstream";
import { insertGenerations, type FinishedGeneration } from "./store.js";

export interface RecorderOptions {
  db: Db;
  events: EventSink;
  logger: Logger;
  /** How long a finished generation may wait for others to share its transaction. */
  flushMs: number;
  /** The most generations one transaction writes. */
  maxBatch?: number;
  /** Told of each generation an endpoint served, for the endpoint's latency and throughput. */
  stats: Pick<EndpointStats, "served">;
}

export interface GenerationRecorder {
  /** Queues a finished generation; it and its event commit in the next batch. Never throws. */
  record(generation: FinishedGeneration): void;
  /** A generation finished here and not yet committed, so that it can be read at once. */
  pending(id: string): { generation: FinishedGeneration; at: Date } | undefined;
  /** Writes everything queued, retrying while the database is away, then stops taking the timer. */
  stop(): Promise<void>;
}

/** The generation with its counts as records can keep them (see `storedCount`); itself when they already are. */
function withStoredCounts(g: FinishedGeneration): FinishedGeneration {
  const { promptTokens, completionTokens, reasoningTokens, cachedTokens } = g;
  const stored = { promptTokens: storedCount(promptTokens), completionTokens: storedCount(completionTokens), reasoningTokens: storedCount(reasoningTokens), cachedTokens: storedCount(cachedTokens) };
  const same = stored.promptTokens === promptTokens && stored.completionTokens === completionTokens && stored.reasoningTokens === reasoningTokens && stored.cachedTokens === cachedTokens;
  return same ? g : { ...g, ...stored };
}

/**
 * Every generation of inference passes here (each chat turn of every dialect, embeddings, rerank), so this is
 * where its metrics and its endpoint's statistics are counted, once. A response cache hit called no
 * provider: it says nothing of one (the cache counts its hits).
 */
function observe(service: string, stats: RecorderOptions["stats"], g: FinishedGeneration): void {
  if (g.cacheSourceId !== undefined) return;
  if (g.status === "completed" && g.provider) {
    stats.served(g.provider, g.model, servedSample({ attempts: g.attempts, dispatchMs: g.dispatchMs, streamed: g.streamed, firstOutputMs: g.latencyMs, generationMs: g.generationTimeMs, completionTokens: g.completionTokens }));
  }
  observeGeneration({
    service,
    operation: g.operation ?? "chat",
    provider: g.provider ?? "none",
    model: g.model,
    status: g.status,
    seconds: g.generationTimeMs / 1000,
    firstOutputSeconds: g.streamed && g.latencyMs !== null ? g.latencyMs / 1000 : null,
    promptTokens: g.promptTokens,
    completionTokens: g.completionTokens,
    cachedTokens: g.cachedTokens,
    reasoningTokens: g.reasoningTokens,
    costUsd: picoToUsd(g.charge.charged),
    byok: g.isByok,
  });
}

/**
 * Group commit for generation records. Answers go out as soon as they are priced; the records and their
 * `inference.generation.completed.v1` events are written together a few milliseconds later, several per
 * transaction, which is what makes the hot path cheap. A failed write keeps the batch queued and retries
 * with a backoff; a drain (SIGTERM) writes what is queued before the process exits.
 */
export function createRecorder(options: RecorderOptions): GenerationRecorder {
  const { db, events, logger, flushMs } = options;
  const service = serviceOf(logger);
  const maxBatch = options.maxBatch ?? 200;
  const queued = new Map<string, { generation: FinishedGeneration; at: Date }>();
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;
  let failures = 0;
  let stopped = false;

  async function write(): Promise<void> {
    const batch = [...queued.values()].slice(0, maxBatch);
    if (batch.length === 0) return;
    try {
      const inserted = await insertGenerations(db, events, batch);
      for (const { generation } of batch) queued.delete(generation.id);
      failures = 0;
      events.committed(inserted);
    } catch (error) {
      failures++;
      if (failures === 1 || failures % 20 === 0) logger.error({ err: error, queued: queued.size, failures }, "generation records could not be written; retrying");
      throw error;
    }
  }

  function flush(): void {
    timer = undefined;
    if (writing) return;
    writing = write()
      .catch(() => undefined)
      .finally(() => {
        writing = undefined;
        if (queued.size > 0) schedule();
      });
  }

  function schedule(): void {
    if (timer || writing || stopped) return;
    const full = queued.size >= maxBatch;
    // While the database is failing, back off up to five seconds instead of retrying at once.
    const delay = failures > 0 ? Math.min(5000, flushMs * 2 ** Math.min(failures, 10) + 50) : full ? 0 : flushMs;
    timer = setTimeout(flush, delay);
  }

  return {
    record(finished) {
      const generation = withStoredCounts(finished);
      observe(service, options.stats, generation);
      queued.set(generation.id, { generation, at: new Date() });
      schedule();
    },
    pending: (id) => queued.get(id),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      await writing;
      for (let attempt = 0; queued.size > 0; attempt++) {
        try {
          await write();
        } catch (error) {
          if (attempt >= 20) {
            logger.error({ err: error, lost: queued.size }, "generation records could not be written before exit");
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 100 * 2 ** attempt)));
        }
      }
    },
  };
}
