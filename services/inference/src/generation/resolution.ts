import type { ProviderPreferences, ResolvedModel } from "@switchyard/contracts";
import { badRequest, HttpError, requestHost, type Caller } from "@switchyard/runtime";
import { acrossModels, orderBasis, orderCandidates, requestFilters, type Candidate, type CompiledFilters } from "@switchyard/upstream";
import type { IncomingHttpHeaders } from "node:http";
import type { InferenceDeps } from "../deps.js";
import { chargedPricing } from "../spend/pricing.js";
import { pricedTier } from "../spend/service-tier.js";

/** The models of a request resolved to endpoints, in the order to try them, with the key's guardrails and workspace settings. */
export interface Resolution {
  requested: string;
  candidates: Candidate[];
  reasons: string[];
  guardrailIds: Set<string>;
  filters: CompiledFilters;
  broadcast: boolean;
  ioLogging: ResolvedModel["io_logging"];
  disabledTools: Set<string>;
  /** What chose the endpoints' order (the first model's), for `openrouter_metadata`. */
  basis?: string;
  /** A guardrail of the key turned the response cache off. */
  cacheDisabled: boolean;
}

export interface ResolveOptions {
  /** The output modality every model must have: `text` for the dialects, `embeddings`, `rerank`. */
  modality: "text" | "embeddings" | "rerank";
  preferences: ProviderPreferences | undefined;
  sessionId: string | undefined;
  /** The caller's workspace, whose sessions' endpoints sticky routing remembers. */
  workspaceId?: string;
  /** Parameters an endpoint must support under `provider.require_parameters`. */
  requestedParameters: string[];
  /** The request's `service_tier`: a tier priced apart is charged at its prices, so routing compares those. */
  serviceTier?: unknown;
  /**
   * The prompt's estimated tokens, read once and only where an endpoint prices long prompts apart: routing
   * compares the prices a prompt of that size is charged. None: the standard prices.
   */
  promptTokens?: () => number;
}

const kinds = { text: "a chat", embeddings: "an embedding", rerank: "a rerank" } as const;

/** Catalog's resolution of one model name for this caller, on the hostname it called (regional hostnames). */
export function modelResolver(deps: InferenceDeps, caller: Caller, headers: IncomingHttpHeaders): (model: string) => Promise<ResolvedModel> {
  const host = requestHost(headers);
  return (model) =>
    deps.resolve({ model, ...(model ? {} : { defaultFor: "text" as const }), keyHash: caller.keyHash, workspaceId: caller.workspaceId, organizationId: caller.organizationId, host });
}

/** Resolves each model of the request to its endpoints, in order, with the key's guardrails and workspace settings. */
export async function resolveModels(deps: InferenceDeps, models: string[], options: ResolveOptions, resolve: (model: string) => Promise<ResolvedModel>): Promise<Resolution> {
  const out: Resolution = { requested: models[0]!, candidates: [], reasons: [], guardrailIds: new Set(), filters: requestFilters([]), broadcast: false, ioLogging: null, disabledTools: new Set(), cacheDisabled: false };
  let filters: CompiledFilters | undefined;
  const tier = pricedTier(options.serviceTier);
  let estimate: number | undefined;
  const promptTokens = () => (estimate ??= options.promptTokens?.() ?? 0);
  for (const model of models) {
    const resolved = await resolve(model);
    out.requested ||= resolved.model;
    // Each kind of model has its own endpoint; asking one route for another kind's model is a mistake in the body.
    if (!resolved.output_modalities.includes(options.modality)) {
      throw badRequest(`Invalid body: model: ${resolved.model} is not ${kinds[options.modality]} model (it outputs ${resolved.output_modalities.join(", ")})`);
    }
    for (const id of resolved.guardrail_ids) out.guardrailIds.add(id);
    // Guardrails apply to the key, so every model's resolution names the same filters.
    filters ??= requestFilters(resolved.content_filters);
    out.broadcast = resolved.broadcast;
    out.ioLogging = resolved.io_logging;
    for (const tool of resolved.disabled_server_tools) out.disabledTools.add(tool);
    out.cacheDisabled ||= resolved.response_cache_disabled;
    const ordered = orderCandidates(resolved, {
      preferences: options.preferences,
      sessionId: options.sessionId,
      servedSession: options.sessionId && options.workspaceId ? deps.sessions.servedBy(options.workspaceId, options.sessionId, resolved.model) : undefined,
      requestedParameters: options.requestedParameters,
      coolingDown: deps.cooldowns.coolingDown,
      figuresOf: deps.stats.figures,
      pricingOf: (endpoint) => chargedPricing(endpoint, tier, endpoint.long_context ? promptTokens() : 0),
    });
    out.candidates.push(...ordered.candidates);
    out.basis ??= orderBasis(options.preferences, resolved.sort);
    out.reasons.push(...resolved.excluded.map((e) => `${resolved.model} on ${e.provider}: ${e.reason}`), ...ordered.dropped.map((d) => `${resolved.model} on ${d}`));
  }
  out.filters = filters ?? out.filters;
  if (models.length > 1) out.candidates = acrossModels(out.candidates, options.preferences, deps.cooldowns.coolingDown);
  if (out.candidates.length === 0) {
    throw new HttpError("not_found", `No endpoints available for ${models.join(", ")}: ${out.reasons.join("; ") || "none configured"}`);
  }
  return out;
}

/**
 * The candidates that can carry the request (`cannotCarry` says why one cannot: a field its wire format has
 * no place for, a limit it has); 400 naming what none of them can.
 */
export function carriedBy(resolution: Resolution, cannotCarry: ((candidate: Candidate) => string | undefined) | undefined): Candidate[] {
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
