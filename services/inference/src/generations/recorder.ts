import { isUniqueViolation, metrics, observeGeneration, picoToDecimal, picoToUsd, refusedForData, serviceOf, type Db, type EventSink, type Logger } from "@switchyard/runtime";
import { servedSample, storedCount, type EndpointStats } from "@switchyard/upstream";
import { insertGenerations, type FinishedGeneration, type RecordedGeneration } from "./store.js";

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

/** What one write did: rows that went in (or were in already), and rows refused on their own. */
interface Written {
  written: number;
  refused: Array<{ row: RecordedGeneration; error: unknown }>;
}

/**
 * Group commit for generation records. Answers go out as soon as they are priced; the records and their
 * `inference.generation.completed.v1` events are written together a few milliseconds later, several per
 * transaction, which is what makes the hot path cheap. A failed write keeps the batch queued and retries
 * with a backoff; a drain (SIGTERM) writes what is queued before the process exits.
 *
 * A batch that fails for its rows (`refusedForData`) is halved until each refused row is alone, so every
 * other generation of it is written and its hold settled. A row refused alone while others of the same write
 * went in is dropped, not retried: it would fail the same way forever and, queued first, hold back every
 * record after it. Nothing of it is written (a record without its event would be spend the ledger never
 * sees, and a row made up to pass would be a figure nobody reported), so it is logged at error with its id,
 * key and figures for the operator to reconcile, counted (`switchyard_generation_records_dropped_total`),
 * and its hold expires unsettled. When no row of a write went in, the cause may be the database's (a
 * column a migration has not added yet): the rows stay queued and are tried again.
 */
export function createRecorder(options: RecorderOptions): GenerationRecorder {
  const { db, events, logger, flushMs } = options;
  const service = serviceOf(logger);
  const maxBatch = options.maxBatch ?? 200;
  const queued = new Map<string, { generation: FinishedGeneration; at: Date }>();
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;
  // Generations whose metrics and endpoint figures are still to be counted: after the answer is written (see `record`).
  let unobserved: FinishedGeneration[] = [];
  let failures = 0;
  let stopped = false;

  function drop({ generation: g }: RecordedGeneration, error: unknown): void {
    queued.delete(g.id);
    metrics.generationRecordsDropped.inc({ service });
    logger.error(
      {
        err: error,
        generationId: g.id,
        keyHash: g.keyHash,
        provider: g.provider,
        model: g.model,
        status: g.status,
        promptTokens: g.promptTokens,
        completionTokens: g.completionTokens,
        chargedUsd: picoToDecimal(g.charge.charged),
        reportedUsd: picoToDecimal(g.charge.reported),
      },
      "generation record cannot be written; dropped, the others of its batch are written",
    );
  }

  /** Writes `batch`, halving a part refused for its rows until each refused row is alone (see above). A failure of the database's is thrown. */
  async function writeSplitting(batch: readonly RecordedGeneration[]): Promise<Written> {
    try {
      const inserted = await insertGenerations(db, events, batch);
      for (const { generation } of batch) queued.delete(generation.id);
      events.committed(inserted);
      return { written: batch.length, refused: [] };
    } catch (error) {
      if (!refusedForData(error)) throw error;
      const [only] = batch;
      if (batch.length === 1 && isUniqueViolation(error)) {
        // The row is there already (a commit whose answer was lost), its event with it.
        queued.delete(only!.generation.id);
        logger.warn({ generationId: only!.generation.id }, "generation record was written already; not written again");
        return { written: 1, refused: [] };
      }
      if (batch.length === 1) return { written: 0, refused: [{ row: only!, error }] };
      const half = Math.ceil(batch.length / 2);
      const first = await writeSplitting(batch.slice(0, half));
      const second = await writeSplitting(batch.slice(half));
      return { written: first.written + second.written, refused: [...first.refused, ...second.refused] };
    }
  }

  async function write(): Promise<void> {
    const batch = [...queued.values()].slice(0, maxBatch);
    if (batch.length === 0) return;
    try {
      const { written, refused } = await writeSplitting(batch);
      if (refused.length > 0 && written === 0) throw refused[0]!.error;
      for (const { row, error } of refused) drop(row, error);
      failures = 0;
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

  function observeAll(): void {
    const generations = unobserved;
    unobserved = [];
    for (const generation of generations) {
      try {
        observe(service, options.stats, generation);
      } catch (error) {
        // Outside the request by now: a figure that cannot be counted is logged, never the process's end.
        logger.error({ err: error, generationId: generation.id }, "generation metrics could not be counted");
      }
    }
  }

  return {
    record(finished) {
      const generation = withStoredCounts(finished);
      // Counted once the event loop has written the answer the caller is about to send: metrics and the endpoint's
      // figures are not the client's wait.
      if (unobserved.push(generation) === 1) setImmediate(observeAll);
      queued.set(generation.id, { generation, at: new Date() });
      schedule();
    },
    pending: (id) => queued.get(id),
    async stop() {
      observeAll();
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
