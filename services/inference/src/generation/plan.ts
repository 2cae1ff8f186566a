import { chatCompletionRequest, legacyMetadataHeader, metadataHeader, sessionIdHeader, type ChatCompletionRequest, type ResolvedModel } from "@switchyard/contracts";
import { badRequest, forbidden, HttpError, parseInput, type Caller } from "@switchyard/runtime";
import {
  enforceFindings,
  filterMessages,
  newGenerationId,
  orderCandidates,
  requestDeadline,
  requestFilters,
  withWorkspaceKeys,
  type Candidate,
  type CompiledFilters,
  type Finding,
} from "@switchyard/upstream";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { InferenceDeps } from "../deps.js";
import type { Attribution } from "../generations/store.js";
import { activePlugins, type ActivePlugins } from "../plugins.js";
import { attributionOf, withPreset } from "../request-context.js";
import { requestedParameters, upstreamBody } from "../request-body.js";
import { declaredTools, type DeclaredTools } from "../tools/declared.js";

/** The dialects the gateway speaks; each is normalised to a Chat Completions request. */
export type Dialect = "chat" | "responses" | "completions" | "messages";

/**
 * Everything decided about a request before any provider is called; nothing in it changes while the
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
  /** The server tools the gateway runs for this request, if it declared any. */
  readonly tools: DeclaredTools | undefined;
  readonly wantsMetadata: boolean;
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
  /**
   * Why an endpoint cannot carry this request (a field its wire format has no place for), if it cannot:
   * such endpoints are left out, and when none is left the request is refused with 400 naming the field.
   */
  cannotCarry?: (candidate: Candidate) => string | undefined;
}

const header = (headers: IncomingHttpHeaders, name: string) => {
  const value = headers[name];
  return typeof value === "string" ? value : undefined;
};

interface Resolution {
  requested: string;
  candidates: Candidate[];
  reasons: string[];
  guardrailIds: Set<string>;
  filters: CompiledFilters;
  broadcast: boolean;
  ioLogging: ResolvedModel["io_logging"];
  disabledTools: Set<string>;
}

/** Resolves each model of the request to its endpoints, in order, with the key's guardrails and workspace settings. */
async function resolveModels(deps: InferenceDeps, request: ChatCompletionRequest, models: string[], sessionId: string | undefined, resolve: (model: string) => Promise<ResolvedModel>): Promise<Resolution> {
  const out: Resolution = { requested: models[0]!, candidates: [], reasons: [], guardrailIds: new Set(), filters: requestFilters([]), broadcast: false, ioLogging: null, disabledTools: new Set() };
  let filters: CompiledFilters | undefined;
  for (const model of models) {
    const resolved = await resolve(model);
    out.requested ||= resolved.model;
    // Transcription and image-only models have their own endpoints; a chat request for one is a mistake in the body.
    if (!resolved.output_modalities.includes("text")) {
      throw badRequest(`Invalid body: model: ${resolved.model} is not a chat model (it outputs ${resolved.output_modalities.join(", ")})`);
    }
    for (const id of resolved.guardrail_ids) out.guardrailIds.add(id);
    // Guardrails apply to the key, so every model's resolution names the same filters.
    filters ??= requestFilters(resolved.content_filters);
    out.broadcast = resolved.broadcast;
    out.ioLogging = resolved.io_logging;
    for (const tool of resolved.disabled_server_tools) out.disabledTools.add(tool);
    const ordered = orderCandidates(resolved, {
      preferences: request.provider ?? undefined,
      sessionId,
      requestedParameters: requestedParameters(request),
      coolingDown: deps.cooldowns.coolingDown,
    });
    out.candidates.push(...ordered.candidates);
    out.reasons.push(...resolved.excluded.map((e) => `${resolved.model} on ${e.provider}: ${e.reason}`), ...ordered.dropped.map((d) => `${resolved.model} on ${d}`));
  }
  out.filters = filters ?? out.filters;
  return out;
}

/** The candidates that can carry the request; 400 naming what none of them can. */
function carriedBy(resolution: Resolution, cannotCarry: PlanInput["cannotCarry"]): Candidate[] {
  if (!cannotCarry) return resolution.candidates;
  const refusals = new Set<string>();
  const kept = resolution.candidates.filter((candidate) => {
    const refusal = cannotCarry(candidate);
    if (refusal === undefined) return true;
    refusals.add(refusal);
    resolution.reasons.push(`${candidate.model} on ${candidate.endpoint.provider}: ${refusal}`);
    return false;
  });
  if (kept.length === 0) throw badRequest(`Invalid body: no endpoint of the requested models can carry it: ${[...refusals].join("; ")}`);
  return kept;
}

/**
 * Validates the normalised request, applies its preset, resolves its models to endpoints, applies the
 * guardrails' content filters to the prompt and declares its server tools: the plan every dialect runs.
 * Sets `X-Generation-Id` on the response.
 */
export async function buildPlan(deps: InferenceDeps, input: PlanInput): Promise<Plan> {
  const { caller, headers, res } = input;
  if (caller.management) throw forbidden("Management keys cannot be used for inference; use an inference key");
  const host = (header(headers, "x-forwarded-host") ?? header(headers, "host") ?? "").split(",")[0]!.trim().replace(/:\d+$/, "");
  const resolve = (model: string) =>
    deps.resolve({ model, ...(model ? {} : { defaultFor: "text" as const }), keyHash: caller.keyHash, workspaceId: caller.workspaceId, organizationId: caller.organizationId, host });
  const { request, preset, presetRef } = await withPreset(parseInput(chatCompletionRequest, input.body, "body"), input.body, resolve);
  const plugins = activePlugins(request);
  // The `preset` field runs a preset like `@preset/<slug>`; a `model` given beside it wins over the preset's.
  const first = request.model ?? (request.models?.length ? undefined : presetRef);
  const models = [...new Set([first, ...(request.models ?? [])].filter((m): m is string => typeof m === "string"))];
  // None named: the workspace's default_text_model, which catalog resolves (an empty name asks for it).
  if (models.length === 0) models.push("");
  if (request.debug?.echo_upstream_body && !request.stream) throw badRequest("Invalid body: debug.echo_upstream_body: only available with stream: true");
  const sessionId = request.session_id ?? header(headers, sessionIdHeader);

  const resolution = await resolveModels(deps, request, models, sessionId, resolve);
  if (resolution.candidates.length === 0) {
    throw new HttpError("not_found", `No endpoints available for ${models.join(", ")}: ${resolution.reasons.join("; ") || "none configured"}`);
  }
  const carried = carriedBy(resolution, input.cannotCarry);
  // The workspace's own keys go first where it brought one.
  const candidates = await withWorkspaceKeys(carried, (provider) => deps.providerKey(caller.workspaceId, provider));

  // Before any hold or provider call: a blocked prompt costs nothing, a redacted one is all a provider sees.
  const body = upstreamBody(request, caller.workspaceId, preset?.system_prompt);
  let findings: Finding[] = [];
  const { filters } = resolution;
  if (!filters.empty && Array.isArray(body.messages)) {
    const filtered = filterMessages(filters, body.messages as Array<Record<string, unknown>>);
    enforceFindings(filtered.findings, input.dialect);
    body.messages = filtered.value;
    findings = filtered.findings;
  }
  const tools = declaredTools(request, { sandbox: deps.sandbox !== undefined, webSearch: deps.search !== undefined, webFetch: deps.webFetch !== undefined, disabled: [...resolution.disabledTools] });
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
    wantsMetadata: (header(headers, metadataHeader) ?? header(headers, legacyMetadataHeader)) === "enabled",
    sessionId,
    requestId: header(headers, "x-request-id") ?? null,
    signal,
    timedOut,
    started: performance.now(),
  };
}
