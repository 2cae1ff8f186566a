import { chatCompletionRequest, legacyMetadataHeader, metadataHeader, type ChatCompletionRequest } from "@switchyard/contracts";
import { badRequest, forbidden, headerOf, madeFrom, parseInput, type Caller } from "@switchyard/runtime";
import { enforceFindings, filterDeclarations, filterMessages, filterPrediction, mergeFindings, newGenerationId, requestDeadline, sessionHeader, withWorkspaceKeys, type Candidate, type CompiledFilters, type Finding } from "@switchyard/upstream";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { cacheRequest } from "../cache/headers.js";
import { lookUp, type PlanCache } from "../cache/lookup.js";
import type { InferenceDeps } from "../deps.js";
import type { Attribution } from "../generations/store.js";
import { activePlugins, type ActivePlugins } from "../plugins.js";
import { attributionOf, withPreset } from "../request-context.js";
import { requestedParameters, routedPreferences, upstreamBody } from "../request-body.js";
import { declaredTools, type DeclaredTools } from "../tools/declared.js";
import { carriedBy, modelResolver, resolveModels } from "./resolution.js";
import { leftOutBy } from "../routing/attempts.js";
import { unpricedTier } from "../spend/service-tier.js";
import { estimatedPromptTokens } from "../spend/worst-case.js";

/** The dialects the gateway speaks; each is normalised to a Chat Completions request. */
export type Dialect = "chat" | "responses" | "completions" | "messages";

/**
 * Everything decided about a request before a provider is called; nothing in it changes while the
 * request runs. Routing, money and records read it; dialects only render what comes of it.
 */
export interface Plan {
  readonly deps: InferenceDeps;
  readonly dialect: Dialect;
  readonly caller: Caller;
  /** The request, normalised to Chat Completions' shape (presets applied). */
  readonly request: ChatCompletionRequest;
  /** The request's id; a later server-tool turn's generation is `<id>-<n>`. */
  readonly generationId: string;
  /** The model asked for (the first of `models`), as records and metadata name it. */
  readonly requested: string;
  /** Endpoints to try in order, the workspace's own keys first; why others were left out. */
  readonly candidates: readonly Candidate[];
  readonly excluded: readonly string[];
  /** What chose the candidates' order, for `openrouter_metadata`. */
  readonly orderBasis: string | null;
  readonly guardrailIds: readonly string[];
  readonly presetId: string | null;
  readonly attribution: Attribution;
  /** Its workspace broadcasts its generations. */
  readonly broadcast: boolean;
  /** Its workspace logs inputs and outputs, and this request was sampled. */
  readonly logContent: boolean;
  /** The guardrails' content filters, which every later turn's new messages are scanned with too. */
  readonly filters: CompiledFilters;
  /** What they redacted and flagged in the prompt. */
  readonly findings: readonly Finding[];
  /** The body providers get, after the filters: the caller's parameters without the gateway's own. */
  readonly body: Readonly<Record<string, unknown>>;
  readonly plugins: ActivePlugins;
  /** The server tools the gateway runs for this request, if it declared some. */
  readonly tools: DeclaredTools | undefined;
  readonly wantsMetadata: boolean;
  /** The response cache, when the request opted in and may use it: its key, TTL and, on a hit, the kept answer. */
  readonly cache: PlanCache | undefined;
  readonly sessionId: string | undefined;
  readonly requestId: string | null;
  /** The client's departure and the request deadline, shared by every attempt. */
  readonly signal: AbortSignal;
  readonly timedOut: () => boolean;
  readonly started: number;
}

/** What a plan reads of the HTTP request: its headers and the response it will answer on. */
export interface PlanInput {
  headers: IncomingHttpHeaders;
  res: ServerResponse;
  caller: Caller;
  dialect: Dialect;
  /** The body in Chat Completions' shape, as the dialect's request mapper made it. */
  body: unknown;
  /** The request is counted, not answered (`count_tokens`): the response cache has nothing to do with it. */
  counting?: boolean;
  /** What the client sent, when the dialect mapped it: its body, and headers its own wire forwards (the response cache's key reads it). */
  client?: unknown;
  /**
   * Why an endpoint cannot carry this request (a field its wire format has no place for), if it cannot:
   * such endpoints are left out, and when none is left the request is refused with 400 naming the field.
   */
  cannotCarry?: (candidate: Candidate) => string | undefined;
  /** The dialect's own check of the request as its preset leaves it (a preset may add tools, a tool choice): throws a 400. */
  check?: (request: ChatCompletionRequest) => void;
}

/** Under `provider.require_parameters`: why an endpoint cannot serve, when its adapter would leave part of the request out. */
function leftOutUnder(candidate: Candidate, dialect: Dialect, request: ChatCompletionRequest): string | undefined {
  const names = leftOutBy(dialect === "messages" ? "messages" : "chat", candidate.endpoint.adapter, request as Record<string, unknown>);
  return names.length ? `its API cannot carry ${names.join(", ")} (provider.require_parameters)` : undefined;
}

/**
 * Validates the normalised request, applies its preset, resolves its models to endpoints, applies the
 * guardrails' content filters to the prompt and declares its server tools: the plan every dialect runs.
 * Sets `X-Generation-Id` on the response.
 */
export async function buildPlan(deps: InferenceDeps, input: PlanInput): Promise<Plan> {
  const { caller, headers, res } = input;
  if (caller.management) throw forbidden("Management keys cannot be used for inference; use an inference key");
  const cacheAsked = input.counting ? undefined : cacheRequest(headers, deps.responseCache.maxTtlSeconds);
  const resolve = modelResolver(deps, caller, headers);
  const parsed = parseInput(chatCompletionRequest, input.body, "body");
  madeFrom(parsed.messages, (input.body as { messages?: unknown }).messages);
  const { request, preset, presetRef } = await withPreset(parsed, input.body, resolve);
  input.check?.(request);
  const plugins = activePlugins(request);
  // The `preset` field runs a preset like `@preset/<slug>`; a `model` given beside it wins over the preset's.
  const first = request.model ?? (request.models?.length ? undefined : presetRef);
  const models = [...new Set([first, ...(request.models ?? [])].filter((m): m is string => typeof m === "string"))];
  // None named: the workspace's default_text_model, which catalog resolves (an empty name asks for it).
  if (models.length === 0) models.push("");
  if (request.debug?.echo_upstream_body && !request.stream) throw badRequest("Invalid body: debug.echo_upstream_body: only available with stream: true");
  // The header is checked even when the body's session_id wins over it.
  const headerSession = sessionHeader(headers);
  const sessionId = request.session_id ?? headerSession;

  const preferences = routedPreferences(request) ?? undefined;
  const resolution = await resolveModels(deps, models, { modality: "text", preferences, sessionId, workspaceId: caller.workspaceId, requestedParameters: requestedParameters(request), serviceTier: request.service_tier, promptTokens: () => estimatedPromptTokens(request) }, resolve);
  // A tier priced apart goes only to endpoints that price it: its charge must be what the provider bills.
  const own = input.cannotCarry;
  const required = request.provider?.require_parameters === true;
  const carried = carriedBy(resolution, (c) => unpricedTier(c.endpoint, request.service_tier) ?? own?.(c) ?? (required ? leftOutUnder(c, input.dialect, request) : undefined));
  // The workspace's own keys go first where it brought one.
  const candidates = await withWorkspaceKeys(carried, (provider) => deps.providerKey(caller.workspaceId, provider));

  // Before a hold is taken or a provider called: a blocked prompt costs nothing, a redacted one is all a provider sees.
  const body = upstreamBody(request, caller.workspaceId, preset?.system_prompt);
  let findings: Finding[] = [];
  const { filters } = resolution;
  if (!filters.empty) {
    const messages = Array.isArray(body.messages) ? filterMessages(filters, body.messages as Array<Record<string, unknown>>) : undefined;
    // The predicted output is text of the caller's that the provider reads as well.
    const prediction = body.prediction === undefined ? undefined : filterPrediction(filters, body.prediction);
    // Tool definitions and a response schema are prompt text as well: the provider renders them for the model.
    const declared = filterDeclarations(filters, body.tools, body.response_format);
    findings = mergeFindings([messages?.findings ?? [], prediction?.findings ?? [], declared.findings]);
    enforceFindings(findings, input.dialect, deps.logger);
    if (messages) body.messages = messages.value;
    if (prediction) body.prediction = prediction.value;
    if (declared.value.tools !== body.tools) body.tools = declared.value.tools;
    if (declared.value.responseFormat !== body.response_format) body.response_format = declared.value.responseFormat;
  }
  const tools = declaredTools(request, { sandbox: deps.sandbox !== undefined, webSearch: deps.search !== undefined, webFetch: deps.webFetch !== undefined, disabled: [...resolution.disabledTools] });
  // Only a request that opted in pays the lookup. A hit has passed every check above, as a miss has.
  const cache = cacheAsked
    ? await lookUp(deps.responseCache, {
        res,
        caller,
        dialect: input.dialect,
        stream: request.stream === true,
        kind: request.stream === true ? "streamed" : "buffered",
        client: input.client ?? input.body,
        sent: body,
        candidates,
        ttlSeconds: cacheAsked.ttlSeconds,
        bypass: resolution.cacheDisabled || tools !== undefined || request.debug?.echo_upstream_body === true,
      })
    : undefined;
  const { signal, timedOut } = requestDeadline(res, deps.requestTimeoutMs);
  const generationId = newGenerationId();
  res.setHeader("X-Generation-Id", generationId);
  return {
    deps,
    dialect: input.dialect,
    caller,
    request,
    generationId,
    requested: resolution.requested,
    candidates,
    excluded: resolution.reasons,
    orderBasis: resolution.basis ?? null,
    guardrailIds: [...resolution.guardrailIds],
    presetId: preset?.id ?? null,
    attribution: attributionOf({ headers }, request),
    broadcast: resolution.broadcast,
    logContent: resolution.ioLogging !== null && Math.random() < resolution.ioLogging.sampling_rate,
    filters,
    findings,
    body,
    plugins,
    tools,
    cache,
    wantsMetadata: (headerOf(headers, metadataHeader) ?? headerOf(headers, legacyMetadataHeader)) === "enabled",
    sessionId,
    requestId: headerOf(headers, "x-request-id") ?? null,
    signal,
    timedOut,
    started: performance.now(),
  };
}
