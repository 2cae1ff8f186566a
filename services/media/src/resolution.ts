import type { ProviderPreferences, ResolvedModel } from "@switchyard/contracts";
import { badRequest, HttpError, requestHost, type Caller } from "@switchyard/runtime";
import { acrossModels, orderCandidates, type Candidate } from "@switchyard/upstream";
import type { Request } from "express";
import type { Presetted } from "./body.js";
import type { MediaDeps } from "./deps.js";

/** What a model of each output modality is called when a request names a model of another. */
const modalityNames = { transcription: "a transcription model", image: "an image generation model", speech: "a text-to-speech model" } as const;
export type Modality = keyof typeof modalityNames;

/** A model to try, and the request field that named it (`model`, or `models[i]` of the fallback list). */
export interface ModelChoice {
  id: string;
  field: string;
}

/** The model, then its fallbacks (`models`), each once; none named: the workspace's default image model (""). */
export function modelList(model: string | undefined, fallbacks: readonly string[] | undefined): ModelChoice[] {
  const named = [
    ...(typeof model === "string" && model !== "" ? [{ id: model, field: "model" }] : []),
    ...(fallbacks ?? []).map((id, i) => ({ id, field: `models[${i}]` })),
  ];
  const models = named.filter((choice, i) => choice.id !== "" && named.findIndex((c) => c.id === choice.id) === i);
  return models.length > 0 ? models : [{ id: "", field: "model" }];
}

export interface RouteOptions<P> {
  /** The models to try, in order (see `modelList`). */
  models: ModelChoice[];
  /** The request's preset: its name's resolution is reused. */
  preset: Presetted | undefined;
  /** The output modality every model must have. */
  modality: Modality;
  preferences: ProviderPreferences | undefined;
  sessionId: string | undefined;
  providers: Readonly<Record<string, P>>;
  /** Why this endpoint (its wire format, or what the catalog says it supports) cannot serve the request; undefined when it can. */
  unfit: (provider: P, candidate: Candidate) => string | undefined;
}

/** The endpoints of a request's models in the order to try them, with the key's guardrails and workspace settings. */
export interface Routed {
  candidates: Candidate[];
  guardrailIds: string[];
  contentFilters: ResolvedModel["content_filters"];
  broadcast: boolean;
}

/**
 * Resolves each model to the endpoints this key may use that can serve the request, in routing order: the
 * first model's endpoints, then the next model's, as chat tries `models`. None left: 400 when endpoints exist
 * but cannot do what the body asks (the body is the problem), else 404.
 */
export async function routeModels<P>(deps: MediaDeps, req: Request, caller: Caller, options: RouteOptions<P>): Promise<Routed> {
  const host = requestHost(req.headers);
  const several = options.models.length > 1;
  const candidates: Candidate[] = [];
  const guardrailIds = new Set<string>();
  const reasons: string[] = [];
  const unfit: string[] = [];
  const names: string[] = [];
  let first: ResolvedModel | undefined;
  for (const { id: model, field } of options.models) {
    const resolved =
      options.preset && model === options.preset.name
        ? options.preset.resolved
        : await deps.resolve({
            model,
            // No model named: the workspace's default for the modality (images only; the other routes require a model).
            ...(model ? {} : { defaultFor: "image" as const }),
            keyHash: caller.keyHash,
            workspaceId: caller.workspaceId,
            organizationId: caller.organizationId,
            host,
          });
    if (!resolved.output_modalities.includes(options.modality)) {
      throw badRequest(`Invalid body: ${field}: ${resolved.model} is not ${modalityNames[options.modality]}`);
    }
    first ??= resolved;
    names.push(resolved.model);
    for (const id of resolved.guardrail_ids) guardrailIds.add(id);
    const where = (provider: string) => (several ? `${resolved.model} on ${provider}` : provider);
    const ordered = orderCandidates(resolved, {
      preferences: options.preferences,
      sessionId: options.sessionId,
      requestedParameters: [],
      coolingDown: deps.cooldowns.coolingDown,
      figuresOf: deps.stats.figures,
    });
    reasons.push(...resolved.excluded.map((e) => `${where(e.provider)}: ${e.reason}`), ...ordered.dropped.map((d) => (several ? `${resolved.model} on ${d}` : d)));
    for (const c of ordered.candidates) {
      const provider = options.providers[c.endpoint.adapter];
      const reason = provider ? options.unfit(provider, c) : `no ${options.modality} support in the ${c.endpoint.adapter} adapter`;
      if (reason) unfit.push(`${where(c.endpoint.provider)}: ${reason}`);
      else candidates.push(c);
    }
  }
  if (candidates.length === 0) {
    // Endpoints that exist but cannot do what the body asks make the body the problem, not the model.
    if (unfit.length > 0) throw badRequest(`Invalid body: ${names.join(", ")} cannot serve this request: ${unfit.join("; ")}`);
    throw new HttpError("not_found", `No endpoints available for ${names.join(", ")}: ${[...reasons, ...unfit].join("; ") || "none configured"}`);
  }
  // Guardrails apply to the key, so every model's resolution names the same filters and workspace settings.
  return {
    candidates: several ? acrossModels(candidates, options.preferences, deps.cooldowns.coolingDown) : candidates,
    guardrailIds: [...guardrailIds],
    contentFilters: first!.content_filters,
    broadcast: first!.broadcast,
  };
}
