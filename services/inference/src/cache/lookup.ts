import { metrics, type Caller, type Logger } from "@switchyard/runtime";
import type { Candidate } from "@switchyard/upstream";
import type { ServerResponse } from "node:http";
import type { Accounted } from "../accounting.js";
import type { PartBatch, StreamPart } from "../generation/parts.js";
import { cacheStatusHeader, cacheTtlResponseHeader } from "./headers.js";
import { cacheKey } from "./key.js";
import type { CacheEntry, CachedAnswer, ResponseCacheStore } from "./store.js";

/** The operator's response cache: where answers are kept and the limits on them. */
export interface ResponseCache {
  store: ResponseCacheStore;
  /** Longest TTL a request may ask (`RESPONSE_CACHE_MAX_TTL_SECONDS`). */
  maxTtlSeconds: number;
  /** Largest answer kept, in bytes of its JSON (`RESPONSE_CACHE_MAX_ENTRY_BYTES`); a larger one is served, not kept. */
  maxEntryBytes: number;
  logger: Logger;
}

/** A request that opted in: its key, its TTL, and the kept answer with the endpoint to name for it, on a hit. */
export interface PlanCache {
  readonly key: string;
  readonly ttlSeconds: number;
  readonly hit: { entry: CacheEntry; candidate: Candidate } | undefined;
}

export interface CacheLookupInput {
  res: ServerResponse;
  caller: Caller;
  dialect: string;
  stream: boolean;
  /** The kind of answer this request replays: a kept answer of another kind is a miss. */
  kind: CachedAnswer["kind"];
  client: unknown;
  sent: Readonly<Record<string, unknown>>;
  candidates: readonly Candidate[];
  ttlSeconds: number;
  /** Why the cache is not used for this request although it asked (a guardrail, server tools), if so. */
  bypass: boolean;
}

/**
 * Looks the request up (one query) and says so in `X-OpenRouter-Cache-Status`: `HIT`, `MISS`, or `BYPASS` when
 * the request may not use the cache. A kept answer whose endpoint the caller can no longer use is a miss.
 */
export async function lookUp(cache: ResponseCache, input: CacheLookupInput): Promise<PlanCache | undefined> {
  const { res } = input;
  const count = (status: "HIT" | "MISS" | "BYPASS") => metrics.responseCache.inc({ service: "inference", endpoint: input.dialect, status });
  if (input.bypass) {
    res.setHeader(cacheStatusHeader, "BYPASS");
    count("BYPASS");
    return undefined;
  }
  const key = cacheKey({ workspaceId: input.caller.workspaceId, dialect: input.dialect, stream: input.stream, client: input.client, sent: input.sent });
  // A cache that cannot be read is a miss: the request still has its provider.
  const entry = await cache.store.find(input.caller.workspaceId, key).catch((error: unknown) => {
    cache.logger.warn({ err: error }, "the response cache could not be read; the request is answered as a miss");
    return undefined;
  });
  const candidate = entry && input.candidates.find((c) => c.endpoint.provider === entry.provider && c.model === entry.model);
  const hit = entry && candidate && entry.answer.kind === input.kind ? { entry, candidate } : undefined;
  res.setHeader(cacheStatusHeader, hit ? "HIT" : "MISS");
  count(hit ? "HIT" : "MISS");
  res.setHeader(cacheTtlResponseHeader, String(input.ttlSeconds));
  return { key, ttlSeconds: input.ttlSeconds, hit };
}

/** A replayed answer costs nothing and used no tokens: what a hit is priced, recorded and reported at. */
export function hitAccounted(): Accounted {
  return {
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    estimated: false,
    cost: { prompt: 0n, completion: 0n, request: 0n, total: 0n },
    charge: { charged: 0n, reported: 0n },
    isByok: false,
    billed: 0n,
  };
}

/** A provider event as it is kept: without usage, which a replay reports as zero. */
export function keptBatch(batch: PartBatch): StreamPart[] {
  const kept: StreamPart[] = [];
  for (const part of batch) {
    if (part.type === "usage") continue;
    if (part.type === "metadata") {
      const { promptUsage: _promptUsage, ...rest } = part;
      kept.push(rest);
    } else kept.push(part);
  }
  return kept;
}

/** The kept events of a streamed answer, replayed in order. */
export async function* replay(batches: readonly StreamPart[][]): AsyncIterable<PartBatch> {
  for (const batch of batches) yield batch;
}

/**
 * A miss that opted in keeps its completed answer for the next identical request of its workspace, unless its
 * JSON is larger than the operator allows. A failure to keep it is logged, never the caller's problem.
 */
export async function keepAnswer(cache: ResponseCache, logger: Logger, workspaceId: string, plan: PlanCache, entry: CacheEntry): Promise<void> {
  const text = JSON.stringify(entry.answer);
  if (Buffer.byteLength(text) > cache.maxEntryBytes) {
    return void logger.debug({ generationId: entry.generationId }, "answer larger than RESPONSE_CACHE_MAX_ENTRY_BYTES; not cached");
  }
  await cache.store
    .save(workspaceId, plan.key, entry, text, plan.ttlSeconds)
    .catch((error: unknown) => logger.warn({ err: error, generationId: entry.generationId }, "could not keep the answer in the response cache"));
}
