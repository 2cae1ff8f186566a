import { appId, completedEventFields, generationCost, originOf, providerResponses, type Attempt, type Charge } from "@switchyard/upstream";
export type { Attempt } from "@switchyard/upstream";
import type { ContentFilterFinding, Generation, GenerationScope } from "@switchyard/contracts";
import { notFound, picoToDecimal, type EventSink, type OutboxInsertion, type Queryable } from "@switchyard/runtime";

export interface FinishedGeneration {
  id: string;
  keyHash: string;
  organizationId: string;
  workspaceId: string;
  guardrailIds: string[];
  /** What the guardrails' content filters redacted or flagged in its prompt. */
  contentFilters: ContentFilterFinding[];
  presetId: string | null;
  /** Served with the workspace's own key: its charge is BYOK usage, which the gateway does not bill. */
  isByok: boolean;
  /** Who asked: the request's end user and metadata, the calling app and its User-Agent. */
  attribution: Attribution;
  /** Its workspace broadcasts its generations: the event says so to the broadcast consumers. */
  broadcast: boolean;
  requestId: string | null;
  sessionId: string | null;
  /** The request's tracing metadata, passed on in the event for broadcast destinations. */
  trace?: Record<string, unknown> | undefined;
  model: string;
  requestedModel: string;
  provider: string | null;
  upstreamId: string | null;
  status: "completed" | "error" | "cancelled";
  streamed: boolean;
  finishReason: string | null;
  nativeFinishReason: string | null;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  usageEstimated: boolean;
  /** What the key is charged, and what the reported usage cost before the cap at the hold. */
  charge: Charge;
  /**
   * A stream's time to its first token (null when none came); a buffered chat's is null, embeddings' and
   * rerank's their whole time.
   */
  latencyMs: number | null;
  generationTimeMs: number;
  /** When the serving attempt was sent, from the generation's start (not stored: the endpoint's statistics time from it). */
  dispatchMs?: number;
  serviceTier: string | null;
  dataRegion: string;
  attempts: Attempt[];
  /** Endpoints the routing left out, and why (`<model> on <provider>: <reason>`). */
  excluded: readonly string[];
  /** Embeddings and rerank generations say so; a chat completion (of every dialect) has none. */
  operation?: "embeddings" | "rerank";
  /** A response cache hit: the generation whose kept answer it replayed. */
  cacheSourceId?: string;
  /** A response cache hit: the upstream model of the endpoint whose kept answer it replayed (no attempt names one). */
  upstreamModel?: string;
  /** What prompt caching saved a chat generation, in picodollars (see `Priced.cacheDiscount`); null or absent otherwise. */
  cacheDiscount?: bigint | null;
}

export interface Attribution {
  externalUser: string | null;
  metadata: Record<string, string> | null;
  /** `HTTP-Referer`: the app's URL, which identifies it. */
  httpReferer: string | null;
  /** `X-Title` (or `X-OpenRouter-Title`): the app's name. */
  appTitle: string | null;
  userAgent: string | null;
}

/** Columns of a generation row with their types, for reading a batch out of one JSON parameter. */
const columns = [
  "id text", "key_hash text", "organization_id uuid", "workspace_id uuid", "request_id text", "session_id text", "model text",
  "requested_model text", "provider text", "upstream_id text", "status text", "streamed boolean", "finish_reason text",
  "native_finish_reason text", "prompt_tokens integer", "completion_tokens integer", "reasoning_tokens integer",
  "cached_tokens integer", "usage_estimated boolean", "cost_usd numeric", "upstream_cost_usd numeric", "latency_ms integer",
  "generation_time_ms integer", "service_tier text", "data_region text", "attempts jsonb", "content_filters jsonb", "preset_id text", "external_user text", "metadata jsonb", "http_referer text",
  "app_title text", "user_agent text", "is_byok boolean", "operation text", "excluded jsonb", "cache_source_id text", "created_at timestamptz",
  "cache_discount_usd numeric",
];
const names = columns.map((c) => c.split(" ")[0]).join(", ");

/**
 * When the request arrived: its end (`at`, when it was queued for its record) less its generation time. The
 * record's `created_at`, the completed event's `started_at`, and so the time `GET /generations` lists.
 */
const arrivedAt = (g: FinishedGeneration, at: Date): Date => new Date(at.getTime() - g.generationTimeMs);

const row = (g: FinishedGeneration, at: Date) => ({
  id: g.id,
  key_hash: g.keyHash,
  organization_id: g.organizationId,
  workspace_id: g.workspaceId,
  request_id: g.requestId,
  session_id: g.sessionId,
  model: g.model,
  requested_model: g.requestedModel,
  provider: g.provider,
  upstream_id: g.upstreamId,
  status: g.status,
  streamed: g.streamed,
  finish_reason: g.finishReason,
  native_finish_reason: g.nativeFinishReason,
  prompt_tokens: g.promptTokens,
  completion_tokens: g.completionTokens,
  reasoning_tokens: g.reasoningTokens,
  cached_tokens: g.cachedTokens,
  usage_estimated: g.usageEstimated,
  // Exact decimal strings: JSON numbers would pass through binary floating point.
  cost_usd: picoToDecimal(g.charge.charged),
  upstream_cost_usd: picoToDecimal(g.charge.reported),
  latency_ms: g.latencyMs,
  generation_time_ms: g.generationTimeMs,
  service_tier: g.serviceTier,
  data_region: g.dataRegion,
  attempts: g.attempts,
  content_filters: g.contentFilters.length ? g.contentFilters : null,
  preset_id: g.presetId,
  external_user: g.attribution.externalUser,
  metadata: g.attribution.metadata,
  http_referer: g.attribution.httpReferer,
  app_title: g.attribution.appTitle,
  user_agent: g.attribution.userAgent,
  is_byok: g.isByok,
  operation: g.operation ?? null,
  excluded: g.excluded.length ? g.excluded : null,
  cache_source_id: g.cacheSourceId ?? null,
  created_at: arrivedAt(g, at),
  cache_discount_usd: g.cacheDiscount === undefined || g.cacheDiscount === null ? null : picoToDecimal(g.cacheDiscount),
});

/** A generation and when it was recorded, as it ended. */
export interface RecordedGeneration {
  generation: FinishedGeneration;
  at: Date;
}

const completedEvent = ({ generation: g, at }: RecordedGeneration) => ({
  subject: "inference.generation.completed.v1" as const,
  data: {
    ...completedEventFields(g),
    prompt_tokens: g.promptTokens,
    completion_tokens: g.completionTokens,
    cost_usd: picoToDecimal(g.charge.charged),
    finish_reason: g.finishReason,
    generation_time_ms: g.generationTimeMs,
    ...(g.operation ? { operation: g.operation } : {}),
    reasoning_tokens: g.reasoningTokens,
    started_at: arrivedAt(g, at).toISOString(),
  },
});

/**
 * Generation rows and their completed events in one statement (so one round trip, and atomic without a
 * transaction): spend is never recorded without its event. A batch has two parameters whatever its size.
 * Returns the events' insertion, for `EventSink.committed`.
 */
export async function insertGenerations(db: Queryable, events: EventSink, batch: readonly RecordedGeneration[]): Promise<OutboxInsertion | undefined> {
  if (batch.length === 0) return undefined;
  const outbox = events.insertion(batch.map(completedEvent), 2);
  await db.query(
    `WITH generations AS (
       INSERT INTO inference.generations (${names}) SELECT ${names} FROM jsonb_to_recordset($1::jsonb) AS r(${columns.join(", ")})
     )
     ${outbox.sql}`,
    [JSON.stringify(batch.map((recorded) => row(recorded.generation, recorded.at))), outbox.value],
  );
  return outbox;
}

export interface GenerationRow {
  id: string;
  request_id: string | null;
  session_id: string | null;
  workspace_id: string;
  model: string;
  provider: string | null;
  upstream_id: string | null;
  status: string;
  streamed: boolean;
  finish_reason: string | null;
  native_finish_reason: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  cached_tokens: number;
  cost_usd: string;
  /** The reported usage's cost: more than `cost_usd` when the charge was capped at the hold. */
  upstream_cost_usd: string | null;
  latency_ms: number | null;
  generation_time_ms: number;
  service_tier: string | null;
  data_region: "global" | "europe" | "us";
  attempts: Attempt[];
  content_filters: ContentFilterFinding[] | null;
  preset_id: string | null;
  external_user: string | null;
  metadata: Record<string, string> | null;
  http_referer: string | null;
  app_title: string | null;
  user_agent: string | null;
  is_byok: boolean | null;
  operation: "embeddings" | "rerank" | null;
  excluded: readonly string[] | null;
  cache_source_id: string | null;
  /** What prompt caching saved, in USD; null where nothing was read from or written to a cache. */
  cache_discount_usd: string | null;
  /** When the request arrived (`arrivedAt`). */
  created_at: Date;
}

/** A finished generation not yet written, queued at `at`, in the shape of its row to be. */
export const rowOf = (g: FinishedGeneration, at: Date): GenerationRow => ({
  ...row(g, at),
  data_region: g.dataRegion as GenerationRow["data_region"],
});

export const readableBy = (scope: GenerationScope, g: { organizationId: string; workspaceId: string }): boolean =>
  g.organizationId === scope.organizationId && (scope.workspaceId === undefined || g.workspaceId === scope.workspaceId);

/** `GET /generation?id=`: a generation outside the caller's scope is answered as not found. */
export async function getGeneration(db: Queryable, scope: GenerationScope, id: string): Promise<Generation> {
  const found = await findGeneration(db, scope, id);
  if (!found) throw notFound("Generation not found");
  return found;
}

/** One of inference's generations in the caller's scope, or undefined. */
export async function findGeneration(db: Queryable, scope: GenerationScope, id: string): Promise<Generation | undefined> {
  const [r] = await db.query<GenerationRow>(
    `SELECT id, request_id, session_id, workspace_id::text, model, provider, upstream_id, status, streamed, finish_reason,
       native_finish_reason, prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, cost_usd::text, upstream_cost_usd::text, latency_ms,
       generation_time_ms, service_tier, data_region, attempts, content_filters, preset_id, external_user, metadata, http_referer,
       app_title, user_agent, is_byok, operation, excluded, cache_source_id, cache_discount_usd::text, created_at
     FROM inference.generations WHERE id = $1 AND organization_id = $2 AND ($3::uuid IS NULL OR workspace_id = $3::uuid)`,
    [id, scope.organizationId, scope.workspaceId ?? null],
  );
  return r && toGeneration(r);
}

export function toGeneration(r: GenerationRow): Generation {
  return {
    id: r.id,
    upstream_id: r.upstream_id,
    request_id: r.request_id,
    session_id: r.session_id,
    created_at: r.created_at.toISOString(),
    model: r.model,
    api_type: r.operation ?? "completions",
    app_id: appId(r.http_referer),
    workspace_id: r.workspace_id,
    preset_id: r.preset_id,
    origin: originOf(r.http_referer),
    http_referer: r.http_referer,
    user_agent: r.user_agent,
    external_user: r.external_user,
    data_region: ["global", "europe", "us"].includes(r.data_region) ? r.data_region : "global",
    router: null,
    provider_name: r.provider,
    provider_responses: providerResponses(r.attempts),
    service_tier: r.service_tier,
    streamed: r.streamed,
    cancelled: r.status === "cancelled",
    finish_reason: r.finish_reason,
    native_finish_reason: r.native_finish_reason,
    is_byok: r.is_byok === true,
    latency: r.latency_ms,
    generation_time: r.generation_time_ms,
    moderation_latency: null,
    tokens_prompt: r.prompt_tokens,
    tokens_completion: r.completion_tokens,
    native_tokens_prompt: r.prompt_tokens,
    native_tokens_completion: r.completion_tokens,
    native_tokens_completion_images: null,
    native_tokens_reasoning: r.reasoning_tokens,
    native_tokens_cached: r.cached_tokens,
    num_media_prompt: null,
    num_media_completion: null,
    num_input_audio_prompt: null,
    ...generationCost(r.cost_usd, r.upstream_cost_usd, r.is_byok === true, r.cache_discount_usd),
    ...(r.content_filters?.length ? { content_filters: r.content_filters } : {}),
    ...(r.metadata ? { metadata: r.metadata } : {}),
    ...(r.app_title ? { app_title: r.app_title } : {}),
    ...(r.excluded?.length ? { excluded_endpoints: [...r.excluded] } : {}),
    response_cache_source_id: r.cache_source_id,
    ...(r.cache_source_id ? { cache_source_id: r.cache_source_id } : {}),
  };
}
