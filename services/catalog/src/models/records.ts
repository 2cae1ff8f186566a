import type { EndpointStatsEntry, Model, ModelEndpoint, ModelPricing, Provider } from "@switchyard/contracts";
import type { EndpointEntry, ModelEntry, ProviderEntry } from "./snapshot.js";

const optionalPrices = ["input_cache_read", "input_cache_write", "input_cache_write_1h", "internal_reasoning", "audio", "web_search", "audio_output", "character", "search_unit", "image_output"] as const;
/** The prices an endpoint listing shows beside the spec's four, where the endpoint has them. */
const endpointPrices = ["input_cache_read", "input_cache_write", "input_cache_write_1h", "internal_reasoning", "web_search", "audio", "audio_output", "image_output"] as const;
/** The prices of a long prompt that OpenRouter's `pricing.overrides` carry. */
const overridePrices = ["prompt", "completion", "input_cache_read", "input_cache_write", "input_cache_write_1h"] as const;

/** An endpoint's long-context prices as OpenRouter publishes them: an override of a prompt above its threshold. */
function overridesOf(e: EndpointEntry): { overrides?: ModelPricing["overrides"] } {
  const long = e.long_context;
  if (!long) return {};
  const prices = Object.fromEntries(overridePrices.flatMap((name) => (long.pricing[name] !== undefined ? [[name, long.pricing[name]]] : [])));
  return { overrides: [{ min_prompt_tokens: long.above_prompt_tokens, ...prices }] };
}

/**
 * The endpoints a model's record is priced and described from: those the operator can call (a provider with
 * a key, or one that needs none), or all of them when none can be.
 */
export const callable = (model: ModelEntry): readonly EndpointEntry[] => {
  const usable = model.endpointEntries.filter((e) => e.providerEntry.usable);
  return usable.length ? usable : model.endpointEntries;
};

const totalPrice = (e: EndpointEntry) => Number(e.pricing.prompt) + Number(e.pricing.completion);

/** The endpoint whose figures a model record shows: the cheapest of those given, first on ties. */
export function topEndpoint(endpoints: readonly EndpointEntry[]): EndpointEntry | undefined {
  let best: EndpointEntry | undefined;
  for (const e of endpoints) if (!best || totalPrice(e) < totalPrice(best)) best = e;
  return best;
}

/** The spec's model record, priced and described from the endpoints the caller may use (by default, `callable`). */
export function toModelRecord(model: ModelEntry, endpoints: readonly EndpointEntry[] = callable(model)): Model {
  const top = topEndpoint(endpoints) ?? model.endpointEntries[0]!;
  const pricing: Model["pricing"] = {
    prompt: top.pricing.prompt,
    completion: top.pricing.completion,
    image: top.pricing.image,
    request: top.pricing.request,
  };
  for (const name of optionalPrices) {
    const value = top.pricing[name];
    if (value !== undefined) pricing[name] = value;
  }
  Object.assign(pricing, overridesOf(top));
  const parameters = new Set<string>();
  for (const e of endpoints.length ? endpoints : model.endpointEntries) for (const p of e.supported_parameters) parameters.add(p);
  return {
    id: model.id,
    canonical_slug: model.id,
    name: model.name,
    created: model.createdAt,
    description: model.description,
    context_length: model.context_length,
    architecture: {
      input_modalities: model.input_modalities,
      output_modalities: model.output_modalities,
      modality: `${model.input_modalities.join("+")}->${model.output_modalities.join("+")}`,
      tokenizer: model.tokenizer,
      instruct_type: model.instruct_type,
    },
    pricing,
    top_provider: {
      context_length: top.contextLength,
      is_moderated: top.is_moderated,
      max_completion_tokens: top.max_completion_tokens ?? null,
    },
    supported_parameters: [...parameters].sort(),
    links: { details: `/api/v1/models/${model.id}/endpoints` },
    default_parameters: null,
    expiration_date: null,
    knowledge_cutoff: model.knowledge_cutoff,
    per_request_limits: null,
    supported_voices: null,
  };
}

/** An endpoint as the listings show it, with its live figures when it has some. */
export function toEndpointRecord(e: EndpointEntry, stats?: EndpointStatsEntry): ModelEndpoint {
  const toolChoice = e.supported_parameters.includes("tool_choice");
  return {
    name: `${e.providerEntry.name} | ${e.model.id}`,
    model_id: e.model.id,
    model_name: e.model.name,
    provider_name: e.providerEntry.name,
    tag: e.providerEntry.slug,
    context_length: e.contextLength,
    max_completion_tokens: e.max_completion_tokens ?? null,
    max_prompt_tokens: null,
    pricing: {
      prompt: e.pricing.prompt,
      completion: e.pricing.completion,
      image: e.pricing.image,
      request: e.pricing.request,
      ...Object.fromEntries(endpointPrices.flatMap((name) => (e.pricing[name] !== undefined ? [[name, e.pricing[name]]] : []))),
      ...overridesOf(e),
    },
    quantization: e.quantization ?? null,
    status: 0,
    supported_parameters: e.supported_parameters,
    supports_implicit_caching: e.pricing.input_cache_read !== undefined,
    supports_tool_choice: { auto: toolChoice, function: toolChoice, none: toolChoice, required: toolChoice },
    latency_last_30m: stats?.latency_last_30m ?? null,
    throughput_last_30m: stats?.throughput_last_30m ?? null,
    uptime_last_5m: stats?.uptime_last_5m ?? null,
    uptime_last_30m: stats?.uptime_last_30m ?? null,
    uptime_last_1d: stats?.uptime_last_1d ?? null,
  };
}

export function toProviderRecord(p: ProviderEntry): Provider {
  return {
    name: p.name,
    slug: p.slug,
    privacy_policy_url: p.privacy_policy_url ?? null,
    terms_of_service_url: p.terms_of_service_url ?? null,
    status_page_url: p.status_page_url ?? null,
    headquarters: p.headquarters ?? null,
    datacenters: null,
    has_api_key: Boolean(p.apiKey),
    usable: p.usable,
  };
}
