import { metrics, noteRequest, observeGeneration, picoToDecimal, picoToUsd, refusedForData, serviceOf, type Db, type EventSink, type GenerationOperation, type Logger, type Queryable } from "@switchyard/runtime";
import { completedEventFields, endAttemptSpan, findingsRecord, servedSample, storedCount, type Attempt, type EndpointStats, type Charge, type Finding } from "@switchyard/upstream";
import type { MediaUsage } from "./cost.js";
import type { Attribution } from "./request-context.js";

export interface MediaGeneration {
  id: string;
  kind: "transcription" | "image" | "speech";
  keyHash: string;
  organizationId: string;
  workspaceId: string;
  guardrailIds: string[];
  /** What the guardrails' content filters redacted or flagged in the prompt. */
  findings: Finding[];
  /** Its workspace broadcasts its generations. */
  broadcast: boolean;
  /** Served with the workspace's own key: its charge is BYOK usage, which the gateway does not bill. */
  isByok: boolean;
  /** The request's end user (`user`), as the caller named it. */
  externalUser: string | null;
  /** The preset the request's model named. */
  presetId: string | null;
  /** Its session and the app that asked. */
  attribution: Attribution;
  requestId: string | null;
  model: string;
  provider: string | null;
  status: "completed" | "error" | "cancelled";
  streamed: boolean;
  usage: MediaUsage;
  usageEstimated: boolean;
  /** What the key is charged, and what the reported usage cost before the cap at the hold. */
  charge: Charge;
  latencyMs: number;
  /** A stream's time to its first audio or image; absent when buffered or nothing came. Counted, not stored. */
  firstOutputMs?: number | undefined;
  attempts: Attempt[];
  /** The request's `trace`, which the completed event carries to broadcast destinations. */
  trace?: Record<string, unknown> | undefined;
}

/** The event that completes each kind of generation. */
const subjects = {
  transcription: "media.transcription.completed.v1",
  image: "media.image.completed.v1",
  speech: "media.speech.completed.v1",
} as const;

/** Each kind as traces name its operation. */
const operations: Record<MediaGeneration["kind"], GenerationOperation> = { transcription: "transcription", image: "image_generation", speech: "speech" };

/**
 * Counts the generation (its metrics, its endpoint's statistics, its trace span), then writes it and its
 * `media.<kind>.completed.v1` event in one transaction: spend is never recorded without the event that
 * charges it. While the database is away the record waits in memory and is written when it is back (see
 * `createMediaRecords`); its hold keeps counting against the key until the event settles it.
 */
export async function recordGeneration(deps: { records: MediaRecords; logger: Logger; stats: Pick<EndpointStats, "served"> }, g: MediaGeneration): Promise<void> {
  const promptTokens = storedCount(g.usage.promptTokens + (g.usage.audioTokens ?? 0));
  const completionTokens = storedCount(g.usage.completionTokens + (g.usage.audioOutputTokens ?? 0));
  noteRequest({ generationId: g.id, model: g.model, ...(g.provider ? { provider: g.provider } : {}), promptTokens, completionTokens, cost: picoToUsd(g.charge.charged) });
  endAttemptSpan(g.id, { promptTokens, completionTokens }, { status: g.status });
  // Every media generation is recorded here: its metrics are counted here too, once, before it is written.
  observeGeneration({
    service: serviceOf(deps.logger),
    operation: operations[g.kind],
    provider: g.provider ?? "none",
    model: g.model,
    status: g.status,
    seconds: Math.max(0, g.latencyMs) / 1000,
    firstOutputSeconds: g.firstOutputMs === undefined ? null : g.firstOutputMs / 1000,
    promptTokens,
    completionTokens,
    cachedTokens: 0,
    reasoningTokens: 0,
    costUsd: picoToUsd(g.charge.charged),
    byok: g.isByok,
  });
  if (g.status === "completed" && g.provider) {
    const firstOutputMs = g.firstOutputMs ?? null;
    deps.stats.served(g.provider, g.model, servedSample({ attempts: g.attempts, streamed: g.streamed, firstOutputMs, generationMs: Math.max(0, g.latencyMs), completionTokens }));
  }
  await deps.records.write(g);
}

/** A record to write, and when it was handed over: its generation ended then, however late it is written. */
interface Pending {
  g: MediaGeneration;
  at: number;
}

/** Writes the generation and its event in `tx`; false when its row was there already (with its event). */
async function insertGeneration(tx: Queryable, events: EventSink, { g, at }: Pending): Promise<boolean> {
  const cost = picoToDecimal(g.charge.charged);
  // Cut to what a row keeps: a provider's absurd count must not keep the generation and its charge out.
  const promptTokens = storedCount(g.usage.promptTokens + (g.usage.audioTokens ?? 0));
  const completionTokens = storedCount(g.usage.completionTokens + (g.usage.audioOutputTokens ?? 0));
  const inserted = await tx.query(
    `INSERT INTO media.generations (id, kind, key_hash, organization_id, workspace_id, request_id, model, provider, status, streamed,
       seconds, images, characters, prompt_tokens, completion_tokens, usage_estimated, cost_usd, upstream_cost_usd, latency_ms, attempts, content_filters, is_byok,
       external_user, preset_id, session_id, http_referer, app_title, user_agent)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)
     ON CONFLICT (id) DO NOTHING RETURNING 1`,
    [g.id, g.kind, g.keyHash, g.organizationId, g.workspaceId, g.requestId, g.model, g.provider, g.status, g.streamed,
      g.usage.seconds ?? null, g.usage.images ?? null, g.usage.characters ?? null, promptTokens, completionTokens, g.usageEstimated, cost,
      picoToDecimal(g.charge.reported), g.latencyMs, JSON.stringify(g.attempts), g.findings.length ? JSON.stringify(findingsRecord(g.findings)) : null, g.isByok, g.externalUser,
      g.presetId, g.attribution.sessionId, g.attribution.httpReferer, g.attribution.appTitle, g.attribution.userAgent],
  );
  // A try whose COMMIT went through but whose answer was lost wrote the event with the row: not sent twice.
  if (inserted.length === 0) return false;
  await events.enqueue(tx, subjects[g.kind], {
    ...completedEventFields(g),
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    cost_usd: cost,
    ...(g.usage.seconds !== undefined ? { seconds: g.usage.seconds } : {}),
    ...(g.usage.images !== undefined ? { images: g.usage.images } : {}),
    ...(g.usage.characters !== undefined ? { characters: g.usage.characters } : {}),
    generation_time_ms: Math.max(0, g.latencyMs),
    started_at: new Date(at - Math.max(0, g.latencyMs)).toISOString(),
  });
  return true;
}

/** Waits for `work` at most `ms`; what it does after that goes on unawaited. */
async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** What an operator needs to charge a generation by hand. */
const figures = (g: MediaGeneration) => ({
  generationId: g.id,
  keyHash: g.keyHash,
  kind: g.kind,
  provider: g.provider,
  model: g.model,
  status: g.status,
  usage: g.usage,
  chargedUsd: picoToDecimal(g.charge.charged),
  reportedUsd: picoToDecimal(g.charge.reported),
  isByok: g.isByok,
});

export interface MediaRecordsOptions {
  db: Db;
  events: EventSink;
  logger: Logger;
  /** The most records kept in memory while the database is away; one past it is logged to be charged by hand. */
  maxQueued?: number;
  /** How long an answer waits for its record's first write (a database that hangs rather than refuses). */
  answerWaitMs?: number;
  /** The longest pause between tries while the database is away. */
  maxRetryMs?: number;
  /** How long a drain tries to write what waits before it logs the rest to be charged by hand. */
  stopWaitMs?: number;
}

export interface MediaRecords {
  /**
   * Writes a generation and its event. Resolves once they are written, or once the record is kept in memory
   * to be written when the database is back (at most `answerWaitMs`): the answer never waits for the database
   * to return. Never throws.
   */
  write(g: MediaGeneration): Promise<void>;
  /** Records waiting for the database. */
  queued(): number;
  /** Drained: writes what waits, trying for up to `stopWaitMs`, and logs what it could not write to be charged by hand. */
  stop(): Promise<void>;
}

/**
 * Media's generation records. The provider has done the work by the time one is written, so a record the
 * database does not take is not given up on: it waits in memory, in order, and is tried again with a backoff
 * (to `maxRetryMs`) until the database is back, and a drain writes what waits before the process exits. Its
 * hold stays with identity meanwhile (the replica renews its lease), so the key's limit still counts it,
 * and its event settles it once written. A record Postgres refuses for its data while others go in is
 * dropped alone, logged at error with its figures to be charged by hand and counted
 * (`switchyard_generation_records_dropped_total`). A replica killed without draining loses what waits.
 */
export function createMediaRecords(options: MediaRecordsOptions): MediaRecords {
  const { db, events, logger } = options;
  const maxQueued = options.maxQueued ?? 10_000;
  const answerWaitMs = options.answerWaitMs ?? 2000;
  const maxRetryMs = options.maxRetryMs ?? 5000;
  const stopWaitMs = options.stopWaitMs ?? 30_000;
  const queued = new Map<string, Pending>();
  /** First writes under way, which an answer stopped waiting for if the database hangs. */
  const writing = new Map<string, { g: MediaGeneration; done: Promise<void> }>();
  let timer: NodeJS.Timeout | undefined;
  let retrying: Promise<boolean> | undefined;
  let failures = 0;
  let stopped = false;

  async function insert(entry: Pending): Promise<void> {
    if (await db.transaction((tx) => insertGeneration(tx, events, entry))) events.committed();
    else logger.warn({ generationId: entry.g.id }, "media generation record was written already; not written again");
  }

  function dropped(g: MediaGeneration, error: unknown): void {
    metrics.generationRecordsDropped.inc({ service: serviceOf(logger) });
    logger.error({ err: error, ...figures(g) }, "media generation record cannot be written; dropped: charge it by hand");
  }

  function keep(entry: Pending, error: unknown): void {
    if (queued.size >= maxQueued) {
      metrics.generationRecordsDropped.inc({ service: serviceOf(logger) });
      logger.error({ err: error, queued: queued.size, ...figures(entry.g) }, "media generation records waiting for the database are at their limit; this one is not kept: charge it by hand");
      return;
    }
    queued.set(entry.g.id, entry);
    if (queued.size === 1 || queued.size % 1000 === 0) {
      logger.error({ err: error, queued: queued.size, limit: maxQueued }, "media generation records could not be written; kept in memory and written when the database is back");
    }
    schedule();
  }

  /**
   * Writes what waits, oldest first; false when the database failed again (the rest keeps waiting). A record
   * refused for its data is dropped only when others went in: when none did, the cause may be the database's
   * (a column a migration has not added yet), and it waits with the rest.
   */
  async function writeQueued(): Promise<boolean> {
    let written = 0;
    const refused: Array<{ entry: Pending; error: unknown }> = [];
    for (const entry of [...queued.values()]) {
      try {
        await insert(entry);
        written++;
        queued.delete(entry.g.id);
      } catch (error) {
        if (refusedForData(error)) {
          refused.push({ entry, error });
          continue;
        }
        failures++;
        if (failures % 20 === 0) logger.error({ err: error, queued: queued.size, failures }, "media generation records still cannot be written; retrying");
        return false;
      }
    }
    if (refused.length > 0 && written === 0) {
      failures++;
      return false;
    }
    for (const { entry, error } of refused) {
      dropped(entry.g, error);
      queued.delete(entry.g.id);
    }
    if (written > 0) logger.info({ written, failures }, "media generation records that waited for the database are written");
    failures = 0;
    return true;
  }

  function schedule(): void {
    if (timer || retrying || stopped || queued.size === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      retrying = writeQueued().finally(() => {
        retrying = undefined;
        schedule();
      });
    }, Math.min(maxRetryMs, 100 * 2 ** Math.min(failures, 10)));
    timer.unref();
  }

  async function writeNow(entry: Pending): Promise<void> {
    try {
      await insert(entry);
    } catch (error) {
      keep(entry, error);
    }
  }

  return {
    async write(g) {
      const entry = { g, at: Date.now() };
      // Behind records that wait for the database: it failed a moment ago, and they go first.
      if (queued.size > 0) {
        keep(entry, undefined);
        return;
      }
      const done = writeNow(entry).finally(() => writing.delete(g.id));
      writing.set(g.id, { g, done });
      await waitAtMost(done, answerWaitMs);
    },
    queued: () => queued.size,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      const deadline = Date.now() + stopWaitMs;
      const drain = async () => {
        await Promise.all([...[...writing.values()].map((w) => w.done), retrying]);
        for (let round = 0; queued.size > 0 && Date.now() < deadline; round++) {
          if (await writeQueued()) return;
          await new Promise((resolve) => setTimeout(resolve, Math.min(maxRetryMs, 100 * 2 ** round, Math.max(0, deadline - Date.now()))));
        }
      };
      await waitAtMost(drain(), stopWaitMs);
      const lost = new Map([...[...queued].map(([id, entry]) => [id, entry.g] as const), ...[...writing].map(([id, w]) => [id, w.g] as const)]);
      for (const g of lost.values()) logger.error(figures(g), "media generation record could not be written before exit; charge it by hand");
    },
  };
}
