import type { ProviderPreferences, TraceConfig } from "@switchyard/contracts";
import { badRequest, forbidden, headerOf, HttpError, type Caller } from "@switchyard/runtime";
import {
  capCharge,
  findingsRecord,
  firstAcceptingHeld,
  newGenerationId,
  noteGeneration,
  presetNamed,
  requestDeadline,
  sessionHeader,
  withPresetDefaults,
  withWorkspaceKeys,
  type Candidate,
  type CompiledFilters,
  type Finding,
  type UpstreamTarget,
} from "@switchyard/upstream";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { cacheRequest } from "../cache/headers.js";
import type { InferenceDeps } from "../deps.js";
import { carriedBy, modelResolver, resolveModels } from "../generation/resolution.js";
import type { Attempt, Attribution } from "../generations/store.js";
import { attributionOf } from "../request-context.js";

/** One embeddings or rerank request on its way through the endpoints of its models. */
export interface RetrievalRun {
  readonly deps: InferenceDeps;
  readonly operation: "embeddings" | "rerank";
  readonly caller: Caller;
  readonly generationId: string;
  /** The preset the model named (`@preset/<slug>`), if it named one. */
  readonly presetId: string | null;
  /** The model asked for (the first of `models`), as records name it. */
  readonly requested: string;
  /** Endpoints the routing left out, and why. */
  readonly excluded: readonly string[];
  readonly candidates: readonly Candidate[];
  readonly guardrailIds: readonly string[];
  /** The guardrails' content filters, for the text the route sends. */
  readonly filters: CompiledFilters;
  /** What they redacted or flagged, recorded on the generation. */
  findings: Finding[];
  readonly broadcast: boolean;
  readonly attribution: Attribution;
  readonly sessionId: string | undefined;
  readonly requestId: string | null;
  readonly trace: TraceConfig | undefined;
  readonly attempts: Attempt[];
  /** The TTL of the response cache when the request opted in (embeddings only), and whether a guardrail turned it off. */
  readonly cacheTtlSeconds: number | undefined;
  readonly cacheDisabled: boolean;
  readonly signal: AbortSignal;
  readonly timedOut: () => boolean;
  readonly started: number;
}

/** The routing fields embeddings and rerank requests share. */
export interface RoutingFields {
  model?: string | undefined;
  models?: string[] | undefined;
  provider?: (ProviderPreferences & { options?: Record<string, Record<string, unknown>> | undefined }) | null | undefined;
  session_id?: string | undefined;
  trace?: TraceConfig | undefined;
  user?: string | undefined;
}

export interface RetrievalOptions {
  modality: "embeddings" | "rerank";
  body: RoutingFields;
  presetId: string | undefined;
  /** Parameters an endpoint must support under `provider.require_parameters`. */
  requestedParameters: string[];
  /** Why an endpoint cannot take this request (a limit of its catalog entry, a field its wire lacks), if it cannot. */
  cannotCarry: (candidate: Candidate) => string | undefined;
}

/**
 * A request body as its route parses it: with the config of the preset its model names as defaults (see
 * `withPresetDefaults`; `fields` are those the route takes), and that preset's id.
 */
export async function withRoutePreset(
  deps: InferenceDeps,
  headers: IncomingHttpHeaders,
  caller: Caller,
  body: unknown,
  route: { path: string; fields: readonly string[] },
): Promise<{ body: unknown; presetId?: string }> {
  if (caller.management) throw forbidden("Management keys cannot be used for inference; use an inference key");
  const named = presetNamed(body);
  if (!named) return { body };
  const preset = (await modelResolver(deps, caller, headers)(named)).preset!;
  return { body: withPresetDefaults(preset, body as Record<string, unknown>, route.fields, route.path), presetId: preset.id };
}

/**
 * Resolves the request's models to the endpoints this key may use that can carry it, in routing order (the
 * workspace's own keys first), and starts the deadline shared by every attempt. Sets `X-Generation-Id`.
 */
export async function startRetrieval(deps: InferenceDeps, headers: IncomingHttpHeaders, res: ServerResponse, caller: Caller, options: RetrievalOptions): Promise<RetrievalRun> {
  const cacheAsked = cacheRequest(headers, deps.responseCache.maxTtlSeconds);
  // OpenRouter's response cache covers embeddings, not rerank.
  if (cacheAsked && options.modality === "rerank") throw badRequest("Invalid header: X-OpenRouter-Cache: the response cache does not cover /rerank");
  const { body } = options;
  const models = [...new Set([body.model, ...(body.models ?? [])].filter((m): m is string => typeof m === "string"))];
  if (models.length === 0) throw new HttpError("bad_request", "Invalid body: model: required (or models)");
  const headerSession = sessionHeader(headers);
  const sessionId = body.session_id ?? headerSession;
  const resolution = await resolveModels(
    deps,
    models,
    { modality: options.modality, preferences: body.provider ?? undefined, sessionId, requestedParameters: options.requestedParameters },
    modelResolver(deps, caller, headers),
  );
  const candidates = await withWorkspaceKeys(carriedBy(resolution, options.cannotCarry), (provider) => deps.providerKey(caller.workspaceId, provider));
  const { signal, timedOut } = requestDeadline(res, deps.requestTimeoutMs);
  const generationId = newGenerationId();
  res.setHeader("X-Generation-Id", generationId);
  return {
    deps,
    operation: options.modality,
    caller,
    generationId,
    presetId: options.presetId ?? null,
    requested: resolution.requested,
    excluded: resolution.reasons,
    candidates,
    guardrailIds: [...resolution.guardrailIds],
    filters: resolution.filters,
    findings: [],
    broadcast: resolution.broadcast,
    attribution: attributionOf({ headers }, { user: body.user }),
    sessionId,
    requestId: headerOf(headers, "x-request-id") ?? null,
    trace: body.trace,
    attempts: [],
    cacheTtlSeconds: cacheAsked?.ttlSeconds,
    cacheDisabled: resolution.cacheDisabled,
    signal,
    timedOut,
    started: performance.now(),
  };
}

/** The endpoint that answered and the worst case its attempt held: the most the generation is charged. */
export interface Served<T> {
  result: T;
  candidate: Candidate;
  held: bigint;
}

/** What a finished generation used, priced at its endpoint. */
export interface Used {
  status: "completed" | "cancelled";
  promptTokens: number;
  /** The provider did not say: the tokens are the gateway's count. */
  estimated: boolean;
  cost: bigint;
  upstreamId: string | null;
  /** A response cache hit: the generation whose kept answer it replayed. */
  cacheSourceId?: string;
}

/**
 * Tries the endpoints in order, holding each attempt's worst case first. When none accepts, the hold is
 * released and the caller hears the most telling failure; when the client left while a provider worked on
 * the request, it is recorded as cancelled at `abandoned`'s estimate instead.
 */
export function accept<P, T>(
  run: RetrievalRun,
  providers: Readonly<Record<string, P>>,
  worstCase: (candidate: Candidate) => bigint,
  call: (provider: P, target: UpstreamTarget, candidate: Candidate, signal: AbortSignal) => Promise<T>,
  abandoned: (candidate: Candidate) => Used,
): Promise<Served<T>> {
  const { deps } = run;
  const context = { env: deps.env, cooldowns: deps.cooldowns, stats: deps.stats, logger: deps.logger, signal: run.signal, timeouts: deps.timeouts, operation: run.operation };
  const hold = { holds: deps.holds, generationId: run.generationId, keyHash: run.caller.keyHash, ttlMs: deps.holdTtlMs };
  return firstAcceptingHeld(
    providers,
    run.candidates,
    context,
    run.attempts,
    { hold, timedOut: run.timedOut, abandoned: (candidate, held) => settle(run, { candidate, held }, abandoned(candidate)) },
    worstCase,
    (provider, target, candidate, attempt) => call(provider, target, candidate, attempt.signal),
  );
}

/**
 * Caps the charge at what the attempt held and queues the generation's record and event (which settle the
 * hold). Returns what the caller is billed: nothing when the workspace's own key served it.
 */
export function settle(run: RetrievalRun, served: Omit<Served<unknown>, "result">, used: Used): { billed: bigint; isByok: boolean } {
  const { deps, caller } = run;
  const { candidate } = served;
  const charge = capCharge({
    logger: deps.logger,
    generationId: run.generationId,
    provider: candidate.endpoint.provider,
    model: candidate.model,
    held: served.held,
    reported: used.cost,
    beyondHold: deps.chargeBeyondHold,
    usage: { promptTokens: used.promptTokens },
  });
  // A cache hit used no key, the workspace's or the operator's.
  const isByok = candidate.byokKey !== undefined && used.cacheSourceId === undefined;
  const elapsed = Math.round(performance.now() - run.started);
  noteGeneration(run.generationId, candidate, used, charge.charged, { id: used.upstreamId, status: used.status });
  deps.recorder.record({
    id: run.generationId,
    keyHash: caller.keyHash,
    organizationId: caller.organizationId,
    workspaceId: caller.workspaceId,
    guardrailIds: [...run.guardrailIds],
    contentFilters: findingsRecord(run.findings),
    presetId: run.presetId,
    isByok,
    attribution: run.attribution,
    broadcast: run.broadcast,
    requestId: run.requestId,
    sessionId: run.sessionId ?? null,
    trace: run.trace,
    model: candidate.model,
    requestedModel: run.requested,
    provider: candidate.endpoint.provider,
    upstreamId: used.upstreamId,
    status: used.status,
    streamed: false,
    finishReason: null,
    nativeFinishReason: null,
    promptTokens: used.promptTokens,
    completionTokens: 0,
    reasoningTokens: 0,
    cachedTokens: 0,
    usageEstimated: used.estimated,
    charge,
    latencyMs: elapsed,
    generationTimeMs: elapsed,
    serviceTier: null,
    dataRegion: candidate.endpoint.region,
    attempts: run.attempts,
    excluded: run.excluded,
    operation: run.operation,
    ...(used.cacheSourceId !== undefined ? { cacheSourceId: used.cacheSourceId, upstreamModel: candidate.endpoint.upstream_model } : {}),
  });
  return { billed: isByok ? 0n : charge.charged, isByok };
}
